//! The event feed of this process: one task reads every final record the store has after the
//! last one it passed on, every [`POLL`] while anyone follows, and passes each on to every
//! follower, which keeps those its filter admits. A follower that starts from an id, or falls
//! behind, reads the store itself from its last id until it has caught up.
//!
//! Why nothing is lost: a follower subscribes before it reads the store, and the task passes on
//! only records past where it started, which was read before any follower's first read. So each
//! record is in the follower's read or arrives after its subscription; ids only grow in the
//! order records become final, so a follower drops every id it has passed already.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    HistoryId, HistoryRecord, HistoryRepository, LeaseKind, RepositoryError, ResourcePrefix, Tenant,
};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, Mutex};

use crate::events::{LockEvents, Trouble};

/// Where a feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedStart {
    /// With the first record committed from now on.
    Now,
    /// After the record with this id (one the client last saw; 0: with the oldest record the
    /// retention still holds).
    After(u64),
}

/// Which records a feed passes on: the tenant's, whose name starts with the prefix, of the
/// kinds asked for (every kind when none is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedFilter {
    pub tenant: Tenant,
    pub prefix: ResourcePrefix,
    pub kinds: Vec<LeaseKind>,
}

impl FeedFilter {
    /// Whether `record` is one this filter passes on.
    pub fn admits(&self, record: &HistoryRecord) -> bool {
        record.tenant == self.tenant
            && self.prefix.matches(&record.name)
            && (self.kinds.is_empty() || self.kinds.contains(&record.kind))
    }
}

/// How often the task reads the store while anyone follows.
pub const POLL: Duration = Duration::from_millis(200);
/// How many records one read takes.
const PAGE: u32 = 1_000;
/// How many records a follower may fall behind before it reads the store itself.
const BACKLOG: usize = 4_096;

/// The feed of this process. Cheap to clone; clones share it.
#[derive(Clone)]
pub(crate) struct HistoryHub {
    shared: Arc<Shared>,
}

struct Shared {
    history: Arc<dyn HistoryRepository>,
    events: Arc<dyn LockEvents>,
    /// Each final record, or `None` when the service closes.
    records: broadcast::Sender<Option<Arc<HistoryRecord>>>,
    closed: AtomicBool,
    /// Whether the task runs; held while starting it and while it decides to stop.
    running: Mutex<bool>,
    followers: AtomicUsize,
}

impl HistoryHub {
    pub(crate) fn new(history: Arc<dyn HistoryRepository>, events: Arc<dyn LockEvents>) -> Self {
        Self {
            shared: Arc::new(Shared {
                history,
                events,
                records: broadcast::channel(BACKLOG).0,
                closed: AtomicBool::new(false),
                running: Mutex::new(false),
                followers: AtomicUsize::new(0),
            }),
        }
    }

    /// Ends every feed: for a process that is shutting down.
    pub(crate) fn close(&self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        let _ = self.shared.records.send(None);
    }

    pub(crate) fn followers(&self) -> usize {
        self.shared.followers.load(Ordering::Relaxed)
    }

    pub(crate) async fn follow(
        &self,
        filter: FeedFilter,
        start: FeedStart,
    ) -> Result<HistoryFeed, RepositoryError> {
        let receiver = {
            let mut running = self.shared.running.lock().await;
            let receiver = self.shared.records.subscribe();
            if !*running {
                let from = self.shared.history.last_history_id().await?;
                *running = true;
                tokio::spawn(pass_on(Arc::clone(&self.shared), from));
            }
            receiver
        };
        let last = match start {
            FeedStart::After(after) => i64::try_from(after).unwrap_or(i64::MAX),
            FeedStart::Now => self
                .shared
                .history
                .last_history_id()
                .await?
                .map_or(0, HistoryId::value),
        };
        self.shared.followers.fetch_add(1, Ordering::Relaxed);
        Ok(HistoryFeed {
            shared: Arc::clone(&self.shared),
            filter,
            receiver,
            last,
            ready: VecDeque::new(),
            caught_up: false,
            seat: None,
        })
    }
}

/// The task: passes on every final record after `from`, until nobody follows.
async fn pass_on(shared: Arc<Shared>, mut from: Option<HistoryId>) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        {
            let mut running = shared.running.lock().await;
            if shared.records.receiver_count() == 0 {
                *running = false;
                return;
            }
        }
        loop {
            match shared.history.history_after(from, PAGE).await {
                Ok(records) => {
                    let full = records.len() == PAGE as usize;
                    for record in records {
                        from = Some(record.id);
                        // Nobody subscribed is no error: the next tick sees it and stops.
                        let _ = shared.records.send(Some(Arc::new(record)));
                    }
                    if !full {
                        break;
                    }
                }
                Err(error) => {
                    shared
                        .events
                        .trouble(Trouble::HistoryFailed { error: &error });
                    break;
                }
            }
        }
    }
}

/// One follower's records: those its filter admits, oldest first.
pub struct HistoryFeed {
    shared: Arc<Shared>,
    filter: FeedFilter,
    receiver: broadcast::Receiver<Option<Arc<HistoryRecord>>>,
    /// The id of the last record passed (admitted or not).
    last: i64,
    /// Records read from the store, not yet taken.
    ready: VecDeque<HistoryRecord>,
    /// Whether the store had nothing past `last` when last read, so the task's records follow.
    caught_up: bool,
    /// Its place in the tenant's count of observers.
    pub(crate) seat: Option<crate::quota::ObserverSeat>,
}

impl HistoryFeed {
    /// The next record the filter admits, waiting for it; `None` when the service closed the
    /// feed.
    ///
    /// # Errors
    /// [`RepositoryError`] when a read of the store failed (the feed may be asked again).
    pub async fn next(&mut self) -> Option<Result<HistoryRecord, RepositoryError>> {
        loop {
            if self.shared.closed.load(Ordering::SeqCst) {
                return None;
            }
            if let Some(record) = self.ready.pop_front() {
                return Some(Ok(record));
            }
            if !self.caught_up {
                let after = HistoryId::new(self.last).ok();
                let records = match self.shared.history.history_after(after, PAGE).await {
                    Ok(records) => records,
                    Err(error) => return Some(Err(error)),
                };
                self.caught_up = records.len() < PAGE as usize;
                for record in records {
                    self.last = record.id.value();
                    if self.filter.admits(&record) {
                        self.ready.push_back(record);
                    }
                }
                continue;
            }
            match self.receiver.recv().await {
                Ok(None) | Err(RecvError::Closed) => return None,
                Ok(Some(record)) => {
                    if record.id.value() <= self.last {
                        continue;
                    }
                    self.last = record.id.value();
                    if self.filter.admits(&record) {
                        return Some(Ok(HistoryRecord::clone(&record)));
                    }
                }
                // Fell behind the task: read the store from the last record passed.
                Err(RecvError::Lagged(_)) => self.caught_up = false,
            }
        }
    }
}

impl Drop for HistoryFeed {
    fn drop(&mut self) {
        self.shared.followers.fetch_sub(1, Ordering::Relaxed);
    }
}
