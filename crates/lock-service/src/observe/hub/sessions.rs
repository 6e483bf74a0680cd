//! The watches of observed sessions: one per session, shared by its observers, with a task that
//! reads the session (`SessionOp::Look`) just after its end, to see it run out, and every
//! [`POLL`], to see other processes' grants, releases, keepalives and ends. What it reads, and
//! this process's own outcomes ([`SessionFact`]s), fold into one view (`session_diff.rs`) whose
//! changes go to every observer, numbered from the hub's one counter. The watch ends after the
//! session's end, or with its last observer.
//!
//! A session ended by another process is seen gone by a read, which cannot say why: the reason is
//! then read from the history of its holds (each records `released` when its session is closed,
//! `force-released` when it is forced), and failing that from the time: a session gone at or
//! after its end ran out, one gone before it was closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use lock_domain::{
    HistoryEvent, HistoryQuery, HistoryRepository, HistorySubject, ListLimit, RepositoryError,
    SessionEnd, SessionHold, SessionId, SessionOp, SessionOutcome, SessionStore, Tenant,
};
use tokio::sync::{broadcast, Notify};

use super::super::session_diff::{SessionChange, SessionFact, SessionHoldings};
use super::super::{Numbered, SessionObservation, POLL};
use super::{locked, Hub, ObserverCount, Shared, AFTER_EXPIRY, BACKLOG, MAX_DROPPED_READS};

/// A session of a tenant.
type Key = (Tenant, SessionId);

/// How soon a watch reads again after a read found the session still live past its end (the
/// store's clock may be a little behind this process's).
const PAST_END: Duration = Duration::from_millis(50);
/// A session found gone less than this before its end, with nothing in its holds' history to
/// say why, is taken as run out: the store's clock may be a little ahead of this process's.
const CLOCK_SLACK: TimeDelta = TimeDelta::milliseconds(250);
/// How many of a gone session's holds have their history read for the reason of its end.
const HOLDS_ASKED: usize = 4;
/// How many records of each such hold's place are read, newest first.
const RECORDS_READ: i64 = 50;

/// What a session's watch reads: the session, and its holds' history for why it ended.
#[derive(Clone)]
pub(crate) struct SessionReads {
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) history: Arc<dyn HistoryRepository>,
}

impl SessionReads {
    async fn look(&self, key: &Key) -> Result<Option<crate::SessionHolds>, RepositoryError> {
        self.sessions
            .apply_session(key.0.clone(), SessionOp::Look(key.1.clone()))
            .await
            .and_then(SessionOutcome::looked)
    }

    /// Why session `key`, last seen live until `end` with `holds`, is gone at `now`: as its
    /// holds' history says, or else by the time.
    async fn why_gone(
        &self,
        key: &Key,
        holds: &[SessionHold],
        end: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> SessionEnd {
        let limit = ListLimit::parse(RECORDS_READ).unwrap_or_default();
        for hold in holds.iter().take(HOLDS_ASKED) {
            let query = HistoryQuery {
                subject: HistorySubject::One {
                    kind: hold.kind,
                    name: hold.grant.place.name().clone(),
                },
                since: None,
                before: None,
                limit,
            };
            // A failed read leaves the reason to the time.
            let Ok(page) = self.history.history(key.0.clone(), query).await else {
                break;
            };
            let ended = page.records.iter().find(|record| {
                record.fencing_token == hold.grant.lease.fencing_token
                    && record.owner.session().as_ref() == Some(&key.1)
                    && matches!(
                        record.event,
                        HistoryEvent::Released
                            | HistoryEvent::ForceReleased
                            | HistoryEvent::Expired
                    )
            });
            match ended.map(|record| record.event) {
                Some(HistoryEvent::ForceReleased) => return SessionEnd::ForceReleased,
                Some(HistoryEvent::Released) => return SessionEnd::Closed,
                Some(_) => return SessionEnd::Expired,
                None => {}
            }
        }
        if now + CLOCK_SLACK >= end {
            SessionEnd::Expired
        } else {
            SessionEnd::Closed
        }
    }
}

/// The watches of observed sessions.
#[derive(Default)]
pub(super) struct SessionWatches {
    watches: Mutex<HashMap<Key, Arc<Watch>>>,
    /// Whether any watch exists: outcomes skip the map when none does.
    any: AtomicBool,
}

struct Watch {
    view: Mutex<View>,
    wake: Notify,
}

/// Where the first look of a watch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstLook {
    Pending,
    Done,
    /// The session is not live.
    Gone,
    Failed,
}

struct View {
    /// The session and its holds, once the first look found it live.
    holdings: Option<SessionHoldings>,
    first_look: FirstLook,
    last_id: u64,
    sender: broadcast::Sender<Arc<Numbered<SessionChange>>>,
    /// Own outcomes folded in (or, before the first look is done, heard) so far.
    facts: u64,
}

impl SessionWatches {
    pub(super) fn close(&self) {
        let watches: Vec<Arc<Watch>> = locked(&self.watches).drain().map(|(_, w)| w).collect();
        self.any.store(false, Ordering::Release);
        for watch in watches {
            // Dropping the sender closes every receiver once the task lets go of the watch.
            let (closed, _) = broadcast::channel(1);
            locked(&watch.view).sender = closed;
            watch.wake.notify_one();
        }
    }

    fn forget(&self, key: &Key, watch: &Arc<Watch>) {
        let mut watches = locked(&self.watches);
        if watches.get(key).is_some_and(|w| Arc::ptr_eq(w, watch)) {
            watches.remove(key);
        }
        self.any.store(!watches.is_empty(), Ordering::Release);
    }
}

impl Hub {
    /// Whether any session is observed in this process (so that outcomes need no other look).
    pub(crate) fn watches_sessions(&self) -> bool {
        self.shared.sessions.any.load(Ordering::Acquire)
    }

    /// One of this process's own outcomes for session `id` of `tenant`.
    pub(crate) fn session_fact(&self, tenant: &Tenant, id: &SessionId, fact: SessionFact) {
        if !self.watches_sessions() {
            return;
        }
        let watch = locked(&self.shared.sessions.watches)
            .get(&(tenant.clone(), id.clone()))
            .cloned();
        if let Some(watch) = watch {
            let mut view = locked(&watch.view);
            view.facts += 1;
            let View {
                holdings,
                sender,
                last_id,
                ..
            } = &mut *view;
            if let Some(holdings) = holdings {
                let changes = holdings.fact(fact);
                self.shared.publish(sender, last_id, changes);
            }
            drop(view);
            // The session's end may have moved, or come.
            watch.wake.notify_one();
        }
    }

    /// Starts observing session `id` of `tenant`: the session and its holds now, then every
    /// change. `None` when the session is not live.
    ///
    /// # Errors
    /// [`RepositoryError`] when the first look failed, or the hub is closing.
    pub(crate) async fn observe_session(
        &self,
        tenant: Tenant,
        id: SessionId,
        reads: SessionReads,
    ) -> Result<Option<SessionObservation>, RepositoryError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(RepositoryError::unavailable("the server is shutting down"));
        }
        let key = (tenant, id);
        let watches = &self.shared.sessions;
        let (watch, started) = {
            let mut map = locked(&watches.watches);
            match map.get(&key) {
                Some(watch) => (Arc::clone(watch), false),
                None => {
                    let (sender, _) = broadcast::channel(BACKLOG);
                    let watch = Arc::new(Watch {
                        view: Mutex::new(View {
                            holdings: None,
                            first_look: FirstLook::Pending,
                            last_id: 0,
                            sender,
                            facts: 0,
                        }),
                        wake: Notify::new(),
                    });
                    map.insert(key.clone(), Arc::clone(&watch));
                    watches.any.store(true, Ordering::Release);
                    (watch, true)
                }
            }
        };
        if started {
            // The first look is made by the first observer. One that overlapped an own outcome
            // may predate it: there is no one to tell of changes yet, so it is simply made again.
            let mut attempt = 0;
            let looked = loop {
                let facts = locked(&watch.view).facts;
                let looked = reads.look(&key).await;
                if looked.is_err()
                    || locked(&watch.view).facts == facts
                    || attempt == MAX_DROPPED_READS
                {
                    break looked;
                }
                attempt += 1;
            };
            let first_look = match looked {
                Ok(Some((session, holds))) => {
                    let mut view = locked(&watch.view);
                    view.holdings = Some(SessionHoldings::new(session, holds));
                    view.last_id = self.shared.next_id();
                    view.first_look = FirstLook::Done;
                    FirstLook::Done
                }
                Ok(None) => FirstLook::Gone,
                Err(error) => {
                    locked(&watch.view).first_look = FirstLook::Failed;
                    watches.forget(&key, &watch);
                    return Err(error);
                }
            };
            if first_look == FirstLook::Gone {
                locked(&watch.view).first_look = FirstLook::Gone;
                watches.forget(&key, &watch);
                return Ok(None);
            }
            tokio::spawn(watch_session(
                Arc::downgrade(&self.shared),
                reads.clone(),
                key.clone(),
                Arc::clone(&watch),
            ));
        }
        loop {
            let first_look = locked(&watch.view).first_look;
            match first_look {
                FirstLook::Done => break,
                FirstLook::Gone => return Ok(None),
                FirstLook::Failed => {
                    return Err(RepositoryError::unavailable(
                        "the first look at the observed session failed",
                    ))
                }
                // Another observer is making the first look: it takes a few milliseconds.
                FirstLook::Pending => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        }
        let observation = {
            let view = locked(&watch.view);
            let Some(holdings) = view.holdings.as_ref().filter(|h| h.ended().is_none()) else {
                // It ended since: its watch is on its way out.
                return Ok(None);
            };
            SessionObservation {
                live: (holdings.session().clone(), holdings.holds().to_vec()),
                last_id: view.last_id,
                changes: view.sender.subscribe(),
                _counted: ObserverCount::new(&self.shared),
                seat: None,
            }
        };
        // The watch's task may have ended with its last observer just before this one
        // subscribed: then start over with a new watch.
        let current = locked(&watches.watches)
            .get(&key)
            .is_some_and(|w| Arc::ptr_eq(w, &watch));
        if current {
            Ok(Some(observation))
        } else {
            drop(observation);
            Box::pin(self.observe_session(key.0, key.1, reads)).await
        }
    }
}

/// The task of one session's watch: reads the session just after its end and every [`POLL`],
/// and when an own outcome wakes it (to look at the end again); ends after the session's end, or
/// when its last observer has gone, or the hub closed.
async fn watch_session(shared: Weak<Shared>, reads: SessionReads, key: Key, watch: Arc<Watch>) {
    // Whether the last look found the session live at or after its end.
    let mut live_past_end = false;
    loop {
        let Some(alive) = shared.upgrade() else {
            return;
        };
        let end = {
            // Under the map's lock: an observer that found this watch in the map subscribes
            // before this looks, or finds it gone and starts another.
            let mut map = locked(&alive.sessions.watches);
            let view = locked(&watch.view);
            let end = view
                .holdings
                .as_ref()
                .filter(|h| h.ended().is_none())
                .map(|h| h.session().expires_at);
            if view.sender.receiver_count() == 0 || end.is_none() {
                if map.get(&key).is_some_and(|w| Arc::ptr_eq(w, &watch)) {
                    map.remove(&key);
                }
                alive.sessions.any.store(!map.is_empty(), Ordering::Release);
                return;
            }
            end.unwrap_or_default()
        };
        if alive.closed.load(Ordering::Acquire) {
            return;
        }
        let now = alive.clock.now();
        drop(alive);
        let delay = match (end - now).to_std() {
            Ok(left) => (left + AFTER_EXPIRY).min(POLL),
            Err(_) if live_past_end => PAST_END,
            Err(_) => AFTER_EXPIRY,
        };
        tokio::select! {
            () = watch.wake.notified() => continue,
            () = tokio::time::sleep(delay) => {}
        }
        for attempt in 0..=MAX_DROPPED_READS {
            let facts_at_start = locked(&watch.view).facts;
            let Ok(looked) = reads.look(&key).await else {
                break; // The store failed: the next round looks again.
            };
            let Some(alive) = shared.upgrade() else {
                return;
            };
            let now = alive.clock.now();
            match looked {
                Some((session, holds)) => {
                    let mut view = locked(&watch.view);
                    // A look that overlapped an own outcome may predate it: look again.
                    if view.facts != facts_at_start && attempt < MAX_DROPPED_READS {
                        continue;
                    }
                    live_past_end = now >= session.expires_at;
                    let View {
                        holdings,
                        sender,
                        last_id,
                        ..
                    } = &mut *view;
                    if let Some(holdings) = holdings {
                        let changes = holdings.read(session, holds);
                        alive.publish(sender, last_id, changes);
                    }
                }
                None => {
                    // Gone for good (a session is never revived): only why is left to find.
                    let last_seen = locked(&watch.view).holdings.as_ref().and_then(|h| {
                        h.ended()
                            .is_none()
                            .then(|| (h.holds().to_vec(), h.session().expires_at))
                    });
                    let Some((holds, end)) = last_seen else {
                        break; // An own outcome ended it meanwhile.
                    };
                    let reason = reads.why_gone(&key, &holds, end, now).await;
                    let mut view = locked(&watch.view);
                    let View {
                        holdings,
                        sender,
                        last_id,
                        ..
                    } = &mut *view;
                    if let Some(holdings) = holdings {
                        let changes = holdings.end(reason);
                        alive.publish(sender, last_id, changes);
                    }
                }
            }
            break;
        }
    }
}

impl std::fmt::Debug for SessionWatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionWatches").finish_non_exhaustive()
    }
}
