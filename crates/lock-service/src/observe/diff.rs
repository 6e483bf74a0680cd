//! What changed between two views of one lock's, semaphore's or election's live leases: the pure
//! part of observing. Views come from reads (any process's changes, coalesced between two reads)
//! and from the outcomes of this process's own operations ([`Fact`]s, exact and in the order
//! they are answered); both are folded into one [`Holdings`] here, which emits one [`Change`]
//! per lease that started, changed or ended.

use chrono::{DateTime, Utc};
use lock_domain::{FencingToken, LeaseValue, LockMode, Owner};

/// One live lease, as an observer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub owner: Owner,
    pub token: FencingToken,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub value: Option<LeaseValue>,
    pub shape: Shape,
}

/// What kind of lease a [`Holding`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A lock's holder (an election's leader is an exclusive one).
    Lock(LockMode),
    /// A semaphore's grant: `permits` of `limit`.
    Permits { permits: u32, limit: u32 },
}

impl Holding {
    /// Whether this lease excludes every other (an exclusive lock's holder, an election's leader).
    fn is_exclusive(&self) -> bool {
        self.shape == Shape::Lock(LockMode::Exclusive)
    }
}

/// How a lease changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happened {
    /// A new lease, with a new token.
    Acquired,
    /// The holder of a live lease was granted it again from now (same token).
    Regranted,
    /// The lease's end moved (same token, same start).
    Renewed,
    /// Only the value changed (an election's proclaim).
    ValueSet,
    /// The lease was ended before its `expires_at`: released, resigned or undone.
    Released,
    /// The lease ran out.
    Expired,
}

/// One change of one lease: the lease as it is after it (as it was, for an end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub happened: Happened,
    pub holding: Holding,
    /// Whether the value differs from the one the lease had before.
    pub value_changed: bool,
}

/// The outcome of one of this process's own operations, as a fact about the leases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// A grant, re-grant, renewal or value change: the lease as it is now.
    Holds(Holding),
    /// The lease with this token ended now (released, resigned, undone).
    Ended(FencingToken),
}

/// How many ended tokens a view remembers, to ignore facts that arrive after the read that
/// already showed their end.
const ENDED_REMEMBERED: usize = 64;

/// The live leases as last seen, and the tokens seen to end.
#[derive(Debug, Clone, Default)]
pub struct Holdings {
    live: Vec<Holding>,
    ended: Vec<FencingToken>,
}

impl Holdings {
    pub fn live(&self) -> &[Holding] {
        &self.live
    }

    fn remember_end(&mut self, token: FencingToken) {
        if self.ended.len() == ENDED_REMEMBERED {
            self.ended.remove(0);
        }
        self.ended.push(token);
    }

    fn end(&mut self, index: usize, now: DateTime<Utc>, released: bool, out: &mut Vec<Change>) {
        let holding = self.live.remove(index);
        self.remember_end(holding.token);
        let happened = if released && now < holding.expires_at {
            Happened::Released
        } else {
            Happened::Expired
        };
        out.push(Change {
            happened,
            holding,
            value_changed: false,
        });
    }

    /// Puts `holding` in place of the live lease with its token (or adds it), and says what that
    /// was.
    fn upsert(&mut self, holding: Holding, out: &mut Vec<Change>) {
        match self.live.iter().position(|h| h.token == holding.token) {
            Some(i) => {
                let before = &self.live[i];
                let value_changed = before.value != holding.value;
                let happened = if before.acquired_at != holding.acquired_at {
                    Some(Happened::Regranted)
                } else if before.expires_at != holding.expires_at {
                    Some(Happened::Renewed)
                } else if value_changed {
                    Some(Happened::ValueSet)
                } else {
                    None
                };
                if let Some(happened) = happened {
                    out.push(Change {
                        happened,
                        holding: holding.clone(),
                        value_changed,
                    });
                }
                self.live[i] = holding;
            }
            None => {
                out.push(Change {
                    happened: Happened::Acquired,
                    holding: holding.clone(),
                    value_changed: holding.value.is_some(),
                });
                self.live.push(holding);
                self.live.sort_by_key(|h| h.token);
            }
        }
    }

    /// Folds in a read that showed `seen` as the live leases at (about) `now`: leases no longer
    /// there ended (released when `now` is before their end, else expired), new ones started,
    /// and changed ones changed. The changes come out ends first, then in token order.
    pub fn read(&mut self, mut seen: Vec<Holding>, now: DateTime<Utc>) -> Vec<Change> {
        let mut out = Vec::new();
        seen.sort_by_key(|h| h.token);
        let mut i = 0;
        while i < self.live.len() {
            if seen.iter().any(|h| h.token == self.live[i].token) {
                i += 1;
            } else {
                self.end(i, now, true, &mut out);
            }
        }
        for holding in seen {
            self.upsert(holding, &mut out);
        }
        out
    }

    /// Folds in one of this process's own outcomes. A grant of a token seen to end, or older than
    /// an exclusive lease seen since, is a late answer and changes nothing; a new exclusive
    /// lease ends every older lease (they must have ended before it was granted), and a new
    /// shared one ends an older exclusive one.
    pub fn fact(&mut self, fact: Fact, now: DateTime<Utc>) -> Vec<Change> {
        let mut out = Vec::new();
        match fact {
            Fact::Holds(holding) => {
                if self.ended.contains(&holding.token)
                    || self.live.iter().any(|h| {
                        h.token > holding.token && (h.is_exclusive() || holding.is_exclusive())
                    })
                {
                    return out;
                }
                let mut i = 0;
                while i < self.live.len() {
                    let older = &self.live[i];
                    let excluded = older.token < holding.token
                        && (holding.is_exclusive() || older.is_exclusive())
                        && matches!(holding.shape, Shape::Lock(_));
                    if excluded {
                        self.end(i, now, true, &mut out);
                    } else {
                        i += 1;
                    }
                }
                self.upsert(holding, &mut out);
            }
            Fact::Ended(token) => {
                if let Some(i) = self.live.iter().position(|h| h.token == token) {
                    self.end(i, now, true, &mut out);
                } else {
                    self.remember_end(token);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn lease(owner: &str, token: i64, from: i64, to: i64, mode: LockMode) -> Holding {
        Holding {
            owner: Owner::parse(owner).unwrap(),
            token: FencingToken::new(token).unwrap(),
            acquired_at: at(from),
            expires_at: at(to),
            value: None,
            shape: Shape::Lock(mode),
        }
    }

    fn x(owner: &str, token: i64, from: i64, to: i64) -> Holding {
        lease(owner, token, from, to, LockMode::Exclusive)
    }

    fn kinds(changes: &[Change]) -> Vec<(Happened, i64)> {
        changes
            .iter()
            .map(|c| (c.happened, c.holding.token.value()))
            .collect()
    }

    #[test]
    fn reads_show_starts_changes_and_ends() {
        let mut view = Holdings::default();
        assert_eq!(kinds(&view.read(vec![], at(0))), []);
        assert_eq!(
            kinds(&view.read(vec![x("a", 1, 0, 1_000)], at(10))),
            [(Happened::Acquired, 1)]
        );
        assert_eq!(kinds(&view.read(vec![x("a", 1, 0, 1_000)], at(20))), []);
        assert_eq!(
            kinds(&view.read(vec![x("a", 1, 0, 2_000)], at(30))),
            [(Happened::Renewed, 1)]
        );
        assert_eq!(
            kinds(&view.read(vec![x("a", 1, 40, 2_040)], at(40))),
            [(Happened::Regranted, 1)]
        );
        let mut valued = x("a", 1, 40, 2_040);
        valued.value = Some(LeaseValue::parse("1".into()).unwrap());
        let changes = view.read(vec![valued], at(50));
        assert_eq!(kinds(&changes), [(Happened::ValueSet, 1)]);
        assert!(changes[0].value_changed);
        // Gone before its end: released; taken over by b in the same read: ended first.
        assert_eq!(
            kinds(&view.read(vec![x("b", 2, 60, 1_060)], at(60))),
            [(Happened::Released, 1), (Happened::Acquired, 2)]
        );
        // Gone at or after its end: expired.
        assert_eq!(
            kinds(&view.read(vec![], at(1_060))),
            [(Happened::Expired, 2)]
        );
    }

    #[test]
    fn own_outcomes_are_exact_and_late_ones_change_nothing() {
        let mut view = Holdings::default();
        let now = at(0);
        assert_eq!(
            kinds(&view.fact(Fact::Holds(x("a", 1, 0, 1_000)), now)),
            [(Happened::Acquired, 1)]
        );
        // b's grant is answered before a's release: a's lease had ended, as released.
        assert_eq!(
            kinds(&view.fact(Fact::Holds(x("b", 2, 5, 1_005)), at(5))),
            [(Happened::Released, 1), (Happened::Acquired, 2)]
        );
        assert_eq!(
            kinds(&view.fact(Fact::Ended(FencingToken::new(1).unwrap()), at(6))),
            []
        );
        // A late answer of an older grant, and of a grant whose end was already seen.
        assert_eq!(
            kinds(&view.fact(Fact::Holds(x("a", 1, 0, 1_000)), at(7))),
            []
        );
        assert_eq!(
            kinds(&view.fact(Fact::Ended(FencingToken::new(2).unwrap()), at(8))),
            [(Happened::Released, 2)]
        );
        assert_eq!(
            kinds(&view.fact(Fact::Holds(x("b", 2, 5, 1_005)), at(9))),
            []
        );
        assert!(view.live().is_empty());
    }

    #[test]
    fn shared_holders_and_permits_coexist() {
        let mut view = Holdings::default();
        let r = |owner, token| lease(owner, token, 0, 1_000, LockMode::Shared);
        view.fact(Fact::Holds(r("r1", 1)), at(0));
        assert_eq!(
            kinds(&view.fact(Fact::Holds(r("r2", 2)), at(1))),
            [(Happened::Acquired, 2)]
        );
        assert_eq!(view.live().len(), 2);
        // A writer after both readers left: the fact of its grant ends them.
        assert_eq!(
            kinds(&view.fact(Fact::Holds(x("w", 3, 2, 1_002)), at(2))),
            [
                (Happened::Released, 1),
                (Happened::Released, 2),
                (Happened::Acquired, 3)
            ]
        );
        let mut permits = Holdings::default();
        let p = |owner, token| Holding {
            shape: Shape::Permits {
                permits: 1,
                limit: 2,
            },
            ..x(owner, token, 0, 1_000)
        };
        permits.fact(Fact::Holds(p("a", 1)), at(0));
        assert_eq!(
            kinds(&permits.fact(Fact::Holds(p("b", 2)), at(1))),
            [(Happened::Acquired, 2)],
            "a semaphore's grants end no other"
        );
        let later = at(0) + TimeDelta::milliseconds(1_000);
        assert_eq!(
            kinds(&permits.read(vec![p("b", 2)], later)),
            [(Happened::Expired, 1)]
        );
    }
}
