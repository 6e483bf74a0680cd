//! The watches of this process: one per observed name (and one per observed session,
//! `hub/sessions.rs`), shared by its observers, each with a task that reads the store when it may
//! have changed and folds what it reads, and this process's own outcomes, into one view whose
//! changes go to every observer. Every change of every watch is numbered from one counter.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lock_domain::{Clock, Leader, LockMode, RepositoryError, ResourceName, Tenant};
use tokio::sync::{broadcast, Notify};

use super::diff::{Change, Fact, Holding, Holdings, Shape};
use super::ObservedReads;
use super::{Numbered, Observation, Observed};

/// How many changes an observer may fall behind before it is told to start again.
const BACKLOG: usize = 256;
/// How long after a lease's `expires_at` the watch reads to see it gone (the store's clock may
/// be a little behind this process's).
const AFTER_EXPIRY: Duration = Duration::from_millis(5);
/// An expiry read that overlapped one of this process's own outcomes (it may predate it) is made
/// again, this many times at most; then it is folded in anyway.
const MAX_DROPPED_READS: u32 = 5;
/// How many locks and elections one poll reads in one round trip.
const POLL_BATCH: usize = 1_000;

type Key = (Tenant, Observed, ResourceName);

mod sessions;
mod tasks;
pub(crate) use sessions::SessionReads;
use sessions::SessionWatches;
use tasks::{poll, run};

/// The watches. Cheap to clone; clones share them.
#[derive(Clone)]
pub(crate) struct Hub {
    shared: Arc<Shared>,
    /// What the watches read of the store.
    reads: ObservedReads,
}

struct Shared {
    watches: Mutex<HashMap<Key, Arc<Watch>>>,
    /// Whether any watch exists: the outcomes of operations skip the map when none does.
    any: AtomicBool,
    observers: AtomicUsize,
    /// The last change id given.
    last_id: AtomicU64,
    clock: Arc<dyn Clock>,
    closed: AtomicBool,
    /// Whether the poll task runs (it ends when no watch is left).
    polling: AtomicBool,
    /// The watches of observed sessions.
    sessions: SessionWatches,
}

struct Watch {
    view: Mutex<View>,
    wake: Notify,
}

/// Where the first read of a watch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstRead {
    Pending,
    Done,
    Failed,
}

struct View {
    holdings: Holdings,
    first_read: FirstRead,
    last_id: u64,
    sender: broadcast::Sender<Arc<Numbered>>,
    /// Own outcomes folded in since the current read started.
    facts: u64,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hub {
    pub(crate) fn new(clock: Arc<dyn Clock>, reads: ObservedReads) -> Self {
        let now_us = u64::try_from(clock.now().timestamp_micros()).unwrap_or(0);
        Self {
            shared: Arc::new(Shared {
                watches: Mutex::new(HashMap::new()),
                any: AtomicBool::new(false),
                observers: AtomicUsize::new(0),
                last_id: AtomicU64::new(now_us),
                clock,
                closed: AtomicBool::new(false),
                polling: AtomicBool::new(false),
                sessions: SessionWatches::default(),
            }),
            reads,
        }
    }

    pub(crate) fn observers(&self) -> u64 {
        self.shared.observers.load(Ordering::Relaxed) as u64
    }

    /// Ends every observation (their change streams close) and refuses new ones.
    pub(crate) fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        let watches: Vec<Arc<Watch>> = locked(&self.shared.watches)
            .drain()
            .map(|(_, w)| w)
            .collect();
        self.shared.any.store(false, Ordering::Release);
        for watch in watches {
            // Dropping the sender closes every receiver once the task lets go of the watch.
            let (closed, _) = broadcast::channel(1);
            locked(&watch.view).sender = closed;
            watch.wake.notify_one();
        }
        self.shared.sessions.close();
    }

    /// One of this process's own outcomes for `name`.
    pub(crate) fn fact(&self, tenant: &Tenant, what: Observed, name: &ResourceName, fact: Fact) {
        if !self.shared.any.load(Ordering::Acquire) {
            return;
        }
        let watch = locked(&self.shared.watches)
            .get(&(tenant.clone(), what, name.clone()))
            .cloned();
        if let Some(watch) = watch {
            let now = self.shared.clock.now();
            let mut view = locked(&watch.view);
            view.facts += 1;
            if view.first_read == FirstRead::Done {
                let changes = view.holdings.fact(fact, now);
                self.publish(&mut view, changes);
            }
            drop(view);
            // The earliest end may have moved.
            watch.wake.notify_one();
        }
    }

    fn next_id(&self) -> u64 {
        self.shared.next_id()
    }

    fn publish(&self, view: &mut View, changes: Vec<Change>) {
        self.shared
            .publish(&view.sender, &mut view.last_id, changes);
    }

    pub(crate) async fn observe(
        &self,
        tenant: Tenant,
        what: Observed,
        name: ResourceName,
    ) -> Result<Observation, RepositoryError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(RepositoryError::unavailable("the server is shutting down"));
        }
        let key = (tenant, what, name);
        let (watch, started) = {
            let mut watches = locked(&self.shared.watches);
            match watches.get(&key) {
                Some(watch) => (Arc::clone(watch), false),
                None => {
                    let (sender, _) = broadcast::channel(BACKLOG);
                    let watch = Arc::new(Watch {
                        view: Mutex::new(View {
                            holdings: Holdings::default(),
                            first_read: FirstRead::Pending,
                            last_id: 0,
                            sender,
                            facts: 0,
                        }),
                        wake: Notify::new(),
                    });
                    watches.insert(key.clone(), Arc::clone(&watch));
                    self.shared.any.store(true, Ordering::Release);
                    (watch, true)
                }
            }
        };
        if started {
            // The first read is made by the first observer: its failure is that observer's
            // answer (and the next observer's, which then tries again).
            match self.reads.observed_live(&key.0, key.1, &key.2).await {
                Ok(live) => {
                    let now = self.shared.clock.now();
                    let mut view = locked(&watch.view);
                    // The state before any observer: there is no one to tell of changes yet.
                    drop(view.holdings.read(live, now));
                    view.first_read = FirstRead::Done;
                    view.last_id = self.next_id();
                }
                Err(error) => {
                    locked(&watch.view).first_read = FirstRead::Failed;
                    self.forget(&key, &watch);
                    return Err(error);
                }
            }
            tokio::spawn(run(
                Arc::downgrade(&self.shared),
                self.reads.clone(),
                key.clone(),
                Arc::clone(&watch),
            ));
            if !self.shared.polling.swap(true, Ordering::AcqRel) {
                tokio::spawn(poll(Arc::downgrade(&self.shared), self.reads.clone()));
            }
        }
        loop {
            let first_read = locked(&watch.view).first_read;
            match first_read {
                FirstRead::Done => break,
                FirstRead::Failed => {
                    return Err(RepositoryError::unavailable(
                        "the first read of the observed name failed",
                    ))
                }
                // Another observer is making the first read: it takes a few milliseconds.
                FirstRead::Pending => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        }
        let observation = {
            let view = locked(&watch.view);
            Observation {
                live: view.holdings.live().to_vec(),
                last_id: view.last_id,
                changes: view.sender.subscribe(),
                _counted: ObserverCount::new(&self.shared),
                seat: None,
            }
        };
        // The watch's task may have ended with its last observer just before this one
        // subscribed: then start over with a new watch.
        let current = locked(&self.shared.watches)
            .get(&key)
            .is_some_and(|w| Arc::ptr_eq(w, &watch));
        if current {
            Ok(observation)
        } else {
            drop(observation);
            Box::pin(self.observe(key.0, key.1, key.2)).await
        }
    }

    fn forget(&self, key: &Key, watch: &Arc<Watch>) {
        let mut watches = locked(&self.shared.watches);
        if watches.get(key).is_some_and(|w| Arc::ptr_eq(w, watch)) {
            watches.remove(key);
        }
        self.shared
            .any
            .store(!watches.is_empty(), Ordering::Release);
    }
}

impl Shared {
    /// The id of the next change: larger than every id given before, and at least the clock in
    /// microseconds (so that a restarted or other process continues above it).
    fn next_id(&self) -> u64 {
        let now_us = u64::try_from(self.clock.now().timestamp_micros()).unwrap_or(0);
        let mut current = self.last_id.load(Ordering::Relaxed);
        loop {
            let next = (current + 1).max(now_us);
            match self.last_id.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return next,
                Err(seen) => current = seen,
            }
        }
    }

    /// Numbers `changes` and sends each to a watch's observers, `last_id` the watch's last.
    fn publish<C>(
        &self,
        sender: &broadcast::Sender<Arc<Numbered<C>>>,
        last_id: &mut u64,
        changes: Vec<C>,
    ) {
        for change in changes {
            let id = self.next_id();
            *last_id = id;
            // No receiver is no error: the last observer may just have left.
            let _ = sender.send(Arc::new(Numbered { id, change }));
        }
    }
}

/// Counts one observer for as long as its [`Observation`] lives.
#[derive(Debug)]
pub(crate) struct ObserverCount(Arc<Shared>);

impl ObserverCount {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.observers.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(shared))
    }
}

impl Drop for ObserverCount {
    fn drop(&mut self) {
        self.0.observers.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("observers", &self.observers)
            .finish_non_exhaustive()
    }
}

/// An election's leader as the lease it holds.
pub(crate) fn holding_of_leader(leader: &Leader) -> Holding {
    Holding {
        owner: leader.candidate.clone(),
        token: leader.term,
        acquired_at: leader.elected_at,
        expires_at: leader.expires_at,
        value: leader.value.clone(),
        shape: Shape::Lock(LockMode::Exclusive),
    }
}
