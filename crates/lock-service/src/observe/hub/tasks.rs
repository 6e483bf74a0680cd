//! The tasks of the hub: one per watch, reading just after the earliest end of a live lease
//! ([`run`]), and one polling every watched name for other processes' changes ([`poll`]); and how
//! a read is folded into a watch ([`Hub::fold`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use chrono::{DateTime, Utc};
use futures::StreamExt;

use super::super::diff::{Happened, Holding};
use super::super::ObservedReads;
use super::super::{Observed, POLL};
use super::{locked, Hub, Key, Shared, View, Watch, AFTER_EXPIRY, MAX_DROPPED_READS, POLL_BATCH};

/// The earliest end of a live lease, if any.
fn earliest_end(view: &View) -> Option<DateTime<Utc>> {
    view.holdings.live().iter().map(|h| h.expires_at).min()
}

/// The task of one watch: reads just after the earliest end of a live lease; ends when its last
/// observer has gone or the hub closed. An own outcome (folded in by [`Hub::fact`]) wakes it to
/// look at the ends again. Other processes' changes come from [`poll`].
pub(super) async fn run(shared: Weak<Shared>, reads: ObservedReads, key: Key, watch: Arc<Watch>) {
    loop {
        let Some(alive) = shared.upgrade() else {
            return;
        };
        let deadline = {
            // Under the map's lock: an observer that found this watch in the map subscribes
            // before this looks, or finds it gone and starts another.
            let mut watches = locked(&alive.watches);
            let view = locked(&watch.view);
            if view.sender.receiver_count() == 0 {
                if watches.get(&key).is_some_and(|w| Arc::ptr_eq(w, &watch)) {
                    watches.remove(&key);
                }
                alive.any.store(!watches.is_empty(), Ordering::Release);
                return;
            }
            earliest_end(&view)
        };
        if alive.closed.load(Ordering::Acquire) {
            return;
        }
        let now = alive.clock.now();
        drop(alive);
        let at_end = deadline.map(|end| (end - now).to_std().unwrap_or_default() + AFTER_EXPIRY);
        tokio::select! {
            () = watch.wake.notified() => continue,
            // Without a live lease, look again now and then: the last observer may have gone.
            () = tokio::time::sleep(at_end.unwrap_or(POLL)) => {
                if at_end.is_none() {
                    continue;
                }
            }
        }
        // Read until the read did not overlap an own outcome (which it might predate), a few
        // times at most.
        for attempt in 0..=MAX_DROPPED_READS {
            let facts_at_start = locked(&watch.view).facts;
            let Ok(live) = reads.observed_live(&key.0, key.1, &key.2).await else {
                break; // The store failed: the next poll reads again.
            };
            let Some(alive) = shared.upgrade() else {
                return;
            };
            let hub = Hub {
                shared: alive,
                reads: reads.clone(),
            };
            if let Some(expired) =
                hub.fold(&watch, live, facts_at_start, attempt == MAX_DROPPED_READS)
            {
                reads.record_observed_expiries(&key, expired).await;
                break;
            }
        }
    }
}

/// How many expiries one poll records at once: enough to batch them in the store's writer, few
/// enough to leave the pool's connections to the requests.
const EXPIRIES_AT_ONCE: usize = 16;

/// Every [`POLL`], reads every watched name of the hub (the locks and elections in one round
/// trip per thousand) and folds what it read into their watches. Ends when no watch is left; the
/// next observation starts it again.
pub(super) async fn poll(shared: Weak<Shared>, reads: ObservedReads) {
    loop {
        tokio::time::sleep(POLL).await;
        let Some(alive) = shared.upgrade() else {
            return;
        };
        let watched: Vec<(Key, Arc<Watch>)> = {
            let watches = locked(&alive.watches);
            if watches.is_empty() || alive.closed.load(Ordering::Acquire) {
                alive.polling.store(false, Ordering::Release);
                return;
            }
            watches
                .iter()
                .map(|(key, watch)| (key.clone(), Arc::clone(watch)))
                .collect()
        };
        let hub = Hub {
            shared: alive,
            reads: reads.clone(),
        };
        let (locks, semaphores): (Vec<_>, Vec<_>) = watched
            .into_iter()
            .partition(|((_, what, _), _)| *what != Observed::Semaphore);
        for chunk in locks.chunks(POLL_BATCH) {
            let facts: Vec<u64> = chunk.iter().map(|(_, w)| locked(&w.view).facts).collect();
            let keys: Vec<Key> = chunk.iter().map(|(key, _)| key.clone()).collect();
            let Ok(read) = reads.observed_locks(&keys).await else {
                continue; // The store failed: the next poll reads again.
            };
            // A read that overlapped an own outcome is left to the next poll.
            let expiries: Vec<_> = chunk
                .iter()
                .zip(read)
                .zip(facts)
                .filter_map(|(((key, watch), live), facts)| {
                    hub.fold(watch, live, facts, false)
                        .map(|expired| (key, expired))
                })
                .collect();
            // Many names often run out together (a crashed client's locks): their expiries
            // are recorded a few at a time rather than one after the other.
            futures::stream::iter(expiries)
                .for_each_concurrent(EXPIRIES_AT_ONCE, |(key, expired)| {
                    reads.record_observed_expiries(key, expired)
                })
                .await;
        }
        for (key, watch) in semaphores {
            let facts = locked(&watch.view).facts;
            if let Ok(live) = reads.observed_live(&key.0, key.1, &key.2).await {
                if let Some(expired) = hub.fold(&watch, live, facts, false) {
                    reads.record_observed_expiries(&key, expired).await;
                }
            }
        }
    }
}

impl Hub {
    /// Folds a read that started when the watch had folded `facts_at_start` own outcomes: unless
    /// more arrived since (the read may predate them) and not `anyway`. Says whether it folded,
    /// with the leases it saw run out (their expiry is recorded in the history then).
    fn fold(
        &self,
        watch: &Watch,
        live: Vec<Holding>,
        facts_at_start: u64,
        anyway: bool,
    ) -> Option<Vec<Holding>> {
        let now = self.shared.clock.now();
        let mut view = locked(&watch.view);
        if view.facts != facts_at_start && !anyway {
            return None;
        }
        let changes = view.holdings.read(live, now);
        let expired = changes
            .iter()
            .filter(|c| c.happened == Happened::Expired)
            .map(|c| c.holding.clone())
            .collect();
        self.publish(&mut view, changes);
        Some(expired)
    }
}
