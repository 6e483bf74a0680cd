//! What changed between two views of one session: a hold granted under it, a hold that ended
//! before it, and its own end (with every hold still live then). The pure part of observing a
//! session, as `diff.rs` is of observing a name: reads of the session (any process's changes,
//! coalesced between two reads) and this process's own outcomes ([`SessionFact`]s, exact and in
//! answer order) fold into one [`SessionHoldings`], which emits one [`SessionChange`] per hold
//! that started or ended. A keepalive, a re-grant (same token) and the session's end moving are
//! no change: they only update the view.

use lock_domain::{FencingToken, LeaseKind, ResourceName, Session, SessionEnd, SessionHold};

/// One change of an observed session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// A hold was granted under the session (a new lease, with a new token).
    Granted(SessionHold),
    /// A hold ended while the session lived on: released, resigned, force-released on its own,
    /// or undone. The hold as it was.
    Released(SessionHold),
    /// The session ended, and with it `holds` (every hold live then). Always the last change.
    Ended {
        reason: SessionEnd,
        holds: Vec<SessionHold>,
    },
}

/// The outcome of one of this process's own operations, as a fact about a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionFact {
    /// A grant or re-grant under the session: the hold as it is now.
    Holds(SessionHold),
    /// The hold of this kind, name and token ended now (the session lives on).
    Released(HoldKey),
    /// A keepalive: the session as it is now.
    Kept(Session),
    /// The session was ended (closed or forced), with these holds.
    Ended {
        reason: SessionEnd,
        holds: Vec<SessionHold>,
    },
}

/// What names one hold: its kind, its place's name and its token (a re-grant keeps the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HoldKey {
    pub kind: LeaseKind,
    pub name: ResourceName,
    pub token: FencingToken,
}

impl HoldKey {
    pub(crate) fn of(hold: &SessionHold) -> Self {
        Self {
            kind: hold.kind,
            name: hold.grant.place.name().clone(),
            token: hold.grant.lease.fencing_token,
        }
    }

    fn names(&self, hold: &SessionHold) -> bool {
        hold.kind == self.kind
            && hold.grant.lease.fencing_token == self.token
            && hold.grant.place.name() == &self.name
    }
}

/// How many ended holds a view remembers, to ignore facts that arrive after the read that
/// already showed their end.
const ENDED_REMEMBERED: usize = 64;

/// A session and its live holds as last seen, and the holds seen to end.
#[derive(Debug, Clone)]
pub(crate) struct SessionHoldings {
    session: Session,
    holds: Vec<SessionHold>,
    ended_holds: Vec<HoldKey>,
    /// How the session ended, once it has: nothing changes after that.
    ended: Option<SessionEnd>,
}

impl SessionHoldings {
    /// The view of a first read: `session` live with `holds`.
    pub(crate) fn new(session: Session, mut holds: Vec<SessionHold>) -> Self {
        sort(&mut holds);
        Self {
            session,
            holds,
            ended_holds: Vec::new(),
            ended: None,
        }
    }

    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    pub(crate) fn holds(&self) -> &[SessionHold] {
        &self.holds
    }

    /// How the session ended, once it has.
    pub(crate) fn ended(&self) -> Option<SessionEnd> {
        self.ended
    }

    fn remember_end(&mut self, key: HoldKey) {
        if self.ended_holds.len() == ENDED_REMEMBERED {
            self.ended_holds.remove(0);
        }
        self.ended_holds.push(key);
    }

    /// Puts `hold` in place of the live hold with its key (a re-grant: no change), or adds it.
    fn upsert(&mut self, hold: SessionHold, out: &mut Vec<SessionChange>) {
        let key = HoldKey::of(&hold);
        match self.holds.iter().position(|h| key.names(h)) {
            Some(i) => self.holds[i] = hold,
            None => {
                out.push(SessionChange::Granted(hold.clone()));
                self.holds.push(hold);
                sort(&mut self.holds);
            }
        }
    }

    fn release(&mut self, i: usize, out: &mut Vec<SessionChange>) {
        let hold = self.holds.remove(i);
        self.remember_end(HoldKey::of(&hold));
        out.push(SessionChange::Released(hold));
    }

    /// Folds in a read that showed the session live with `holds`: holds no longer there ended,
    /// new ones were granted (ends first, then in the order of kind and name). The session's
    /// end and TTL are taken as read.
    pub(crate) fn read(
        &mut self,
        session: Session,
        mut holds: Vec<SessionHold>,
    ) -> Vec<SessionChange> {
        let mut out = Vec::new();
        if self.ended.is_some() {
            return out;
        }
        self.session = session;
        sort(&mut holds);
        let mut i = 0;
        while i < self.holds.len() {
            let key = HoldKey::of(&self.holds[i]);
            if holds.iter().any(|h| key.names(h)) {
                i += 1;
            } else {
                self.release(i, &mut out);
            }
        }
        for hold in holds {
            self.upsert(hold, &mut out);
        }
        out
    }

    /// The session is gone, for `reason`: it ends with every hold still live.
    pub(crate) fn end(&mut self, reason: SessionEnd) -> Vec<SessionChange> {
        if self.ended.is_some() {
            return Vec::new();
        }
        self.ended = Some(reason);
        vec![SessionChange::Ended {
            reason,
            holds: std::mem::take(&mut self.holds),
        }]
    }

    /// Folds in one of this process's own outcomes. A grant of a hold seen to end is a late
    /// answer and changes nothing; an end names the holds that ended with it, as the store did.
    pub(crate) fn fact(&mut self, fact: SessionFact) -> Vec<SessionChange> {
        let mut out = Vec::new();
        if self.ended.is_some() {
            return out;
        }
        match fact {
            SessionFact::Holds(hold) => {
                let key = HoldKey::of(&hold);
                if !self.ended_holds.contains(&key) {
                    self.upsert(hold, &mut out);
                }
            }
            SessionFact::Released(key) => match self.holds.iter().position(|h| key.names(h)) {
                Some(i) => self.release(i, &mut out),
                None => self.remember_end(key),
            },
            SessionFact::Kept(session) => {
                if session.expires_at > self.session.expires_at {
                    self.session = session;
                }
            }
            SessionFact::Ended { reason, mut holds } => {
                sort(&mut holds);
                self.ended = Some(reason);
                self.holds.clear();
                out.push(SessionChange::Ended { reason, holds });
            }
        }
        out
    }
}

/// Holds in the order a session's look lists them: by kind, then by place.
fn sort(holds: &mut [SessionHold]) {
    holds.sort_by(|a, b| (a.kind, &a.grant.place).cmp(&(b.kind, &b.grant.place)));
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use lock_domain::{Capacity, Grant, Lease, LockDelay, Owner, Place, SessionId, Ttl, Weight};

    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn session(until: i64) -> Session {
        Session {
            id: SessionId::from_random([7; 16]),
            owner: Owner::parse("worker-7").unwrap(),
            ttl: Ttl::parse(10, 60).unwrap(),
            lock_delay: LockDelay::NONE,
            created_at: at(0),
            expires_at: at(until),
        }
    }

    fn hold(kind: LeaseKind, name: &str, token: i64, from: i64) -> SessionHold {
        let name = ResourceName::parse(name).unwrap();
        let place = match kind {
            LeaseKind::Semaphore => Place::Semaphore(name),
            _ => Place::Lock(name),
        };
        SessionHold {
            kind,
            grant: Grant {
                place,
                lease: Lease {
                    owner: session(0).holder(),
                    weight: Weight::EXCLUSIVE,
                    capacity: Capacity::LOCK,
                    acquired_at: at(from),
                    expires_at: at(10_000),
                    fencing_token: FencingToken::new(token).unwrap(),
                    value: None,
                },
            },
        }
    }

    fn lock(name: &str, token: i64) -> SessionHold {
        hold(LeaseKind::Lock, name, token, 0)
    }

    fn kinds(changes: &[SessionChange]) -> Vec<String> {
        changes
            .iter()
            .map(|change| match change {
                SessionChange::Granted(h) => format!("granted {}", h.grant.place.name()),
                SessionChange::Released(h) => format!("released {}", h.grant.place.name()),
                SessionChange::Ended { reason, holds } => {
                    format!("ended {} with {}", reason.as_str(), holds.len())
                }
            })
            .collect()
    }

    #[test]
    fn reads_show_grants_and_releases_and_keepalives_are_no_change() {
        let mut view = SessionHoldings::new(session(10_000), vec![lock("a", 1)]);
        assert!(view.read(session(10_000), vec![lock("a", 1)]).is_empty());
        // A keepalive and a re-grant (same token, a new start) change nothing to tell.
        let regranted = hold(LeaseKind::Lock, "a", 1, 500);
        assert!(view.read(session(20_000), vec![regranted]).is_empty());
        assert_eq!(view.session().expires_at, at(20_000));
        let permits = hold(LeaseKind::Semaphore, "p", 2, 0);
        assert_eq!(
            kinds(&view.read(session(20_000), vec![permits.clone(), lock("a", 1)])),
            ["granted p"]
        );
        // "a" released and taken again: a new token is a new hold.
        assert_eq!(
            kinds(&view.read(session(20_000), vec![lock("a", 3), permits])),
            ["released a", "granted a"]
        );
        assert_eq!(
            kinds(&view.end(SessionEnd::Expired)),
            ["ended expired with 2"]
        );
        assert_eq!(view.ended(), Some(SessionEnd::Expired));
        assert!(
            view.read(session(30_000), vec![]).is_empty(),
            "ended for good"
        );
        assert!(view.end(SessionEnd::Closed).is_empty());
    }

    #[test]
    fn own_outcomes_are_exact_and_late_ones_change_nothing() {
        let mut view = SessionHoldings::new(session(10_000), vec![]);
        let election = hold(LeaseKind::Election, "office", 4, 0);
        assert_eq!(
            kinds(&view.fact(SessionFact::Holds(election.clone()))),
            ["granted office"]
        );
        assert!(view.fact(SessionFact::Holds(election.clone())).is_empty());
        assert_eq!(
            kinds(&view.fact(SessionFact::Released(HoldKey::of(&election)))),
            ["released office"]
        );
        // A late answer of the grant, after its end.
        assert!(view.fact(SessionFact::Holds(election)).is_empty());
        // A release heard before its grant: the grant then changes nothing.
        let late = lock("b", 5);
        assert!(view
            .fact(SessionFact::Released(HoldKey::of(&late)))
            .is_empty());
        assert!(view.fact(SessionFact::Holds(late)).is_empty());
        // A keepalive moves the end forward only (an older answer is late).
        let mut kept = session(30_000);
        kept.ttl = Ttl::parse(30, 60).unwrap();
        view.fact(SessionFact::Kept(kept));
        view.fact(SessionFact::Kept(session(20_000)));
        assert_eq!(view.session().expires_at, at(30_000));
        // The end names what the store ended, and nothing comes after it.
        view.fact(SessionFact::Holds(lock("c", 6)));
        let ended = view.fact(SessionFact::Ended {
            reason: SessionEnd::ForceReleased,
            holds: vec![lock("c", 6), lock("d", 7)],
        });
        assert_eq!(kinds(&ended), ["ended force-released with 2"]);
        assert!(view.fact(SessionFact::Holds(lock("e", 8))).is_empty());
        assert!(view.read(session(40_000), vec![lock("e", 8)]).is_empty());
        assert!(view.holds().is_empty());
    }
}
