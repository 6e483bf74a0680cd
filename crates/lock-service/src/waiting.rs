//! Acquires that wait for a lock (`wait_seconds`): per (tenant, resource) that has waiters, a
//! FIFO of waiters and one task that makes the acquire attempts for the head waiter through the
//! repository port, and hands the grant over a oneshot channel.
//!
//! A waiter is a handler future awaiting its channel: it holds no database connection and no
//! worker thread. The queue's task attempts an acquire only when the lock may be free:
//! - a release (or a renew, which may shorten the lease) through this process's API: the
//!   service's release and renew call [`Waiting::freed`] / [`Waiting::lease_changed`], which
//!   wake the task at once;
//! - a hint from the store that another process freed it ([`lock_domain::FreedHints`]:
//!   PostgreSQL's `LISTEN` names the lock; SQLite only tells that another process committed, a
//!   [`lock_domain::Freed::Unknown`]). One poller per process reads the status of every queued
//!   lock in one call and wakes the queues whose lock changed: at once after an `Unknown`,
//!   every [`SAFETY_PERIOD`] in case a hint was lost, and every [`POLL_PERIOD`] while the store
//!   gives no hints (its subscription failed);
//! - the end of the holder's lease: the task knows `expires_at` from the grant or the status
//!   and tries just after it (never before it counts, since only a grant at or after the expiry
//!   succeeds, and the store's clock decides).
//!
//! A waiter whose request is dropped (the client went away) leaves the queue at once. If its
//! grant was already made, that exact grant is undone (`LeaseOp::Undo`: never a
//! later re-grant or renewal, never a re-grant of a lease the owner already held), so a client
//! that is gone is never left holding a lock. The queue hands out its next grant only once the
//! waiter has taken the last one or it has been undone: a grant to the next waiter (perhaps of
//! the same owner) can never be ended by the undo of the one before.

mod hints;
mod queue;
mod serve;
mod sets;
#[cfg(test)]
pub(crate) mod tests;
mod ticket;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lock_domain::{
    Clock, FreedHints, LeaseOp, LeaseStore, LeaseTerms, LockMode, ResourceName, Tenant,
};
use tokio::sync::{oneshot, Notify};

use crate::events::LockEvents;
use crate::outcomes::WaitersFull;
use crate::quota::Quotas;
pub(crate) use queue::Handed;
use queue::{HandedRelease, Head, Queue, ReleaseAnswer, Waiter};
use sets::SetWait;
pub(crate) use sets::SetWatch;
use ticket::WaiterSeat;
pub(crate) use ticket::{Seat, Ticket, WaitEnd, WaitOutcome};

/// How often the poller looks at the queued locks when the store gives no hints of other
/// processes' releases (SQLite shared by several processes).
const POLL_PERIOD: Duration = Duration::from_millis(200);

/// How often the poller looks at the queued locks even with hints, in case one was lost.
const SAFETY_PERIOD: Duration = Duration::from_secs(5);

/// How long after a holder's `expires_at` the first attempt is made: the lease has ended once
/// the store's clock has passed it.
const EXPIRY_MARGIN: Duration = Duration::from_millis(2);

/// The longest extra wait after an expiry attempt that still found the lease live (the store's
/// clock is behind this process's); attempts repeat at most this far apart until it ends.
const MAX_SKEW_BACKOFF: Duration = Duration::from_millis(200);

/// How long to wait before subscribing to the store's hints again after a failure.
const RESUBSCRIBE_DELAY: Duration = Duration::from_secs(2);

type QueueKey = (Tenant, ResourceName);

/// The most waiting acquires a server holds at once: in all, and of one tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaiterLimits {
    pub total: u64,
    pub per_tenant: u64,
}

/// The default of both [`WaiterLimits`].
pub const DEFAULT_MAX_WAITERS: u64 = 10_000;

impl Default for WaiterLimits {
    fn default() -> Self {
        Self {
            total: DEFAULT_MAX_WAITERS,
            per_tenant: DEFAULT_MAX_WAITERS,
        }
    }
}

/// The state of the subscription to the store's hints.
const HINTS_NOT_STARTED: u8 = 0;
const HINTS_PENDING: u8 = 1;
const HINTS_LIVE: u8 = 2;
const HINTS_NONE: u8 = 3;

/// The waiting acquires of one server (shared by all its workers). Cheap to clone.
#[derive(Clone)]
pub(crate) struct Waiting {
    shared: Arc<Shared>,
}

struct Shared {
    leases: Arc<dyn LeaseStore>,
    hint_source: Option<Arc<dyn FreedHints>>,
    clock: Arc<dyn Clock>,
    events: Arc<dyn LockEvents>,
    queues: Mutex<HashMap<QueueKey, Arc<Queue>>>,
    hints: AtomicU8,
    next_id: AtomicU64,
    /// Waiters now; raised only under `waiters_by_tenant`'s lock, so the limits hold exactly.
    presence: Arc<Presence>,
    limits: WaiterLimits,
    /// Each tenant's own `max_waiters`, if it has one.
    quotas: Quotas,
    waiters_by_tenant: Mutex<HashMap<Tenant, u64>>,
    granted: AtomicU64,
    timed_out: AtomicU64,
    abandoned: AtomicU64,
    /// Set by [`Waiting::close`]: every wait ends now, and no new one starts.
    closed: AtomicBool,
    /// Where hints of freed semaphore permits go (`None`: any may be free).
    permit_hints: std::sync::OnceLock<PermitHints>,
    closing: Notify,
    /// The waits of sets (`locks/multi.rs`), which stand in no lock's queue, under each lock
    /// they ask for ([`SetWatch`]): a release or renew of one of those locks here wakes them; a
    /// release of any other lock does not (see `sets.rs` for hints that name no lock).
    set_waits: Mutex<HashMap<QueueKey, Vec<SetWait>>>,
    /// Notified when any lock may have been freed elsewhere: the poller looks at every queued
    /// lock now instead of at its next period. Its own `Arc`, so that the poller can wait for it
    /// without keeping the rest alive.
    look_now: Arc<Notify>,
}

/// How many requests wait in this process (for a lock, a set or permits), and a notice when
/// that number leaves or comes back to 0: the task that listens to the store's hints tells the
/// subscription that hints are wanted only while someone waits here (a store may look for them
/// only then: SQLite's writer does). Its own `Arc`, so that the task can wait for it without
/// keeping the rest alive.
#[derive(Default)]
struct Presence {
    live: AtomicU64,
    /// Set when the `Waiting` is gone: nobody will wait again.
    gone: AtomicBool,
    changed: Notify,
}

impl Presence {
    fn count(&self) -> u64 {
        self.live.load(Ordering::Acquire)
    }

    fn arrive(&self) {
        if self.live.fetch_add(1, Ordering::AcqRel) == 0 {
            self.changed.notify_waiters();
        }
    }

    fn leave(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.changed.notify_waiters();
        }
    }

    /// Returns once someone waits (`anyone`) or nobody does (`!anyone`), or the `Waiting` is
    /// gone.
    async fn until(&self, anyone: bool) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if (self.count() > 0) == anyone || self.gone.load(Ordering::Acquire) {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.presence.gone.store(true, Ordering::Release);
        self.presence.changed.notify_waiters();
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind, never a broken
    // invariant worth refusing every later request for.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Waiting {
    /// Waiting acquires over `leases`, at most `limits` at once, woken by `hint_source`'s hints
    /// of other processes' releases when there is one.
    pub(crate) fn new(
        leases: Arc<dyn LeaseStore>,
        hint_source: Option<Arc<dyn FreedHints>>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn LockEvents>,
        limits: WaiterLimits,
        quotas: Quotas,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                leases,
                hint_source,
                clock,
                events,
                queues: Mutex::new(HashMap::new()),
                hints: AtomicU8::new(HINTS_NOT_STARTED),
                next_id: AtomicU64::new(0),
                presence: Arc::new(Presence::default()),
                limits,
                quotas,
                waiters_by_tenant: Mutex::new(HashMap::new()),
                granted: AtomicU64::new(0),
                timed_out: AtomicU64::new(0),
                abandoned: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                permit_hints: std::sync::OnceLock::new(),
                closing: Notify::new(),
                set_waits: Mutex::new(HashMap::new()),
                look_now: Arc::new(Notify::new()),
            }),
        }
    }

    /// Requests waiting for a lock right now.
    pub(crate) fn live_waiters(&self) -> u64 {
        self.shared.presence.count()
    }

    /// Waiting requests that were granted their lock, since start.
    pub(crate) fn granted_after_wait(&self) -> u64 {
        self.shared.granted.load(Ordering::Relaxed)
    }

    /// Waiting requests whose wait ended without a lock, since start.
    pub(crate) fn timed_out(&self) -> u64 {
        self.shared.timed_out.load(Ordering::Relaxed)
    }

    /// Grants made for waiters whose client had gone, and released at once, since start.
    pub(crate) fn abandoned_grants(&self) -> u64 {
        self.shared.abandoned.load(Ordering::Relaxed)
    }

    /// Ends every wait now, as if its time were up (`acquired: false`), and makes later acquires
    /// answer at once: for a server that is shutting down, whose graceful stop would otherwise
    /// wait for waiters.
    pub(crate) fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.closing.notify_waiters();
    }

    /// Requests waiting for the lock on `resource` of `tenant` right now.
    pub(crate) fn waiters(&self, tenant: &Tenant, resource: &ResourceName) -> usize {
        let queue = locked(&self.shared.queues)
            .get(&(tenant.clone(), resource.clone()))
            .cloned();
        queue.map_or(0, |queue| {
            locked(&queue.waiters)
                .iter()
                .filter(|w| !w.grant.is_closed())
                .count()
        })
    }

    /// Whether an exclusive acquire waits for this lock in this process: a new shared acquire
    /// then queues behind it rather than barge in (writers are not starved).
    pub(crate) fn has_exclusive_waiter(&self, tenant: &Tenant, resource: &ResourceName) -> bool {
        let queue = locked(&self.shared.queues)
            .get(&(tenant.clone(), resource.clone()))
            .cloned();
        queue.is_some_and(|queue| queue.has_exclusive_waiter())
    }

    /// Whether requests wait for this lock in this process.
    pub(crate) fn has_queue(&self, tenant: &Tenant, resource: &ResourceName) -> bool {
        locked(&self.shared.queues).contains_key(&(tenant.clone(), resource.clone()))
    }

    /// The lock on `resource` was released through this process: the head waiter tries at once.
    pub(crate) fn freed(&self, tenant: &Tenant, resource: &ResourceName) {
        self.shared.wake(&(tenant.clone(), resource.clone()), true);
    }

    /// Hands the release `op` of the lock on `resource` to the task of its queue, when this
    /// process has requests waiting for it and the store commits two operations together
    /// (`LeaseStore::applies_together`): the task makes it together with its head waiter's
    /// attempt (`LeaseStore::apply_then`), so the lock passes to the next in line in one step.
    /// Only to a task that is idle (no attempt in flight, no release waiting): the releases of
    /// a busy lock go to the store at once, where they commit together with others, rather
    /// than one by one through its queue. `Err(op)` otherwise: the caller makes it. A release
    /// the task made needs no [`Self::freed`] (the task has attempted already), only
    /// [`Self::freed_by_queue`].
    pub(crate) fn hand_off(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        op: LeaseOp,
    ) -> Result<oneshot::Receiver<Handed>, LeaseOp> {
        // Most releases: nobody waits for anything here.
        if self.shared.presence.count() == 0 || !self.shared.leases.applies_together() {
            return Err(op);
        }
        let queues = locked(&self.shared.queues);
        let Some(queue) = queues
            .get(&(tenant.clone(), resource.clone()))
            .filter(|queue| queue.is_idle())
        else {
            return Err(op);
        };
        let (answer, made) = oneshot::channel();
        queue.hand(HandedRelease {
            op,
            answer: ReleaseAnswer(answer),
        });
        Ok(made)
    }

    /// A lease on `resource` ended by a release that its lock's queue made: the sets that ask
    /// for it try again (the lock's own queue has attempted already, and has told the quotas of
    /// the lease's end before answering, so that the grants they hold back count again).
    pub(crate) fn freed_by_queue(&self, tenant: &Tenant, resource: &ResourceName) {
        self.shared.wake_sets(&(tenant.clone(), resource.clone()));
    }

    /// The lease on `resource` was renewed through this process, maybe shortened: the queue
    /// looks at the new expiry.
    pub(crate) fn lease_changed(&self, tenant: &Tenant, resource: &ResourceName) {
        self.shared.wake(&(tenant.clone(), resource.clone()), false);
    }

    /// Puts a waiter at the end of the lock's queue. Must be called inside a tokio runtime (the
    /// queue's task is spawned on it).
    ///
    /// # Errors
    /// [`WaitersFull`] when the server already holds as many waiters as its limits allow, in
    /// all or of this tenant: nothing was queued.
    pub(crate) fn enqueue(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        mode: LockMode,
        terms: LeaseTerms,
    ) -> Result<Ticket, WaitersFull> {
        let seat = WaiterSeat::take(&self.shared, &tenant)?;
        let (grant, granted) = oneshot::channel();
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let key = (tenant, resource);
        let (queue, joined) = {
            let mut queues = locked(&self.shared.queues);
            let queue = match queues.get(&key) {
                Some(queue) => Arc::clone(queue),
                None => {
                    let queue = Arc::new(Queue::new());
                    queues.insert(key.clone(), Arc::clone(&queue));
                    tokio::spawn(serve::serve(
                        Arc::clone(&self.shared),
                        key.clone(),
                        Arc::clone(&queue),
                    ));
                    queue
                }
            };
            let held = queue.knows_it_held(self.shared.clock.now());
            let mut waiters = locked(&queue.waiters);
            let joined = ticket::Joined {
                behind: held || !waiters.is_empty(),
                found_held: queue.found_held.load(Ordering::Relaxed),
            };
            waiters.push_back(Waiter {
                id,
                mode,
                terms,
                grant,
            });
            drop(waiters);
            (queue, joined)
        };
        self.start_hints();
        Ok(Ticket {
            _seat: seat,
            id,
            granted,
            queue,
            shared: Arc::clone(&self.shared),
            key,
            settled: false,
            joined,
        })
    }

    /// A seat for a wait that is not in a lock's queue (semaphore permits): the same limits as
    /// every waiting acquire. Dropping it gives the seat back.
    ///
    /// # Errors
    /// [`WaitersFull`] when the limits are reached: nothing was taken.
    pub(crate) fn seat(&self, tenant: &Tenant) -> Result<Seat, WaitersFull> {
        WaiterSeat::take(&self.shared, tenant).map(|seat| Seat { seat })
    }

    /// Watches `tenant`'s locks `resources` for a set that waits for them all, until the watch
    /// is dropped ([`SetWatch::freed`]). Made before the set's first attempt, so that a release
    /// between an attempt and the wait after it is not missed.
    pub(crate) fn watch_set(
        &self,
        tenant: &Tenant,
        resources: impl IntoIterator<Item = ResourceName>,
    ) -> SetWatch {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        SetWatch::new(Arc::clone(&self.shared), id, tenant, resources)
    }

    /// Resolves once [`Self::close`] has been called (at once if it has).
    pub(crate) async fn closed(&self) {
        let closing = self.shared.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        if !self.shared.closed.load(Ordering::Acquire) {
            closing.await;
        }
    }

    /// Counts how a wait outside a lock's queue ended, with the locks' waits.
    pub(crate) fn count_wait_end(&self, end: WaitEnd) {
        let counter = match end {
            WaitEnd::Granted => &self.shared.granted,
            WaitEnd::TimedOut => &self.shared.timed_out,
            WaitEnd::Abandoned => &self.shared.abandoned,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Hands the store's hints of freed semaphore permits to `hints` (once; later calls are
    /// ignored). The hints arrive on the subscription of the locks' waits, which a permit wait
    /// starts too ([`Self::start_hints`]).
    pub(crate) fn on_permits_freed(&self, hints: PermitHints) {
        let _ = self.shared.permit_hints.set(hints);
    }

    /// How often a waiter should look for itself: rarely while the store's hints are live,
    /// often while they are not.
    pub(crate) fn poll_period(&self) -> Duration {
        self.shared.poll_period()
    }

    /// Subscribes to the store's hints and starts the poller, once, on the first wait.
    pub(crate) fn start_hints(&self) {
        if self
            .shared
            .hints
            .compare_exchange(
                HINTS_NOT_STARTED,
                HINTS_PENDING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            match &self.shared.hint_source {
                Some(source) => {
                    tokio::spawn(hints::listen_for_hints(
                        Arc::downgrade(&self.shared),
                        Arc::clone(source),
                    ));
                }
                None => self.shared.hints.store(HINTS_NONE, Ordering::Release),
            }
            tokio::spawn(serve::poll_queues(Arc::downgrade(&self.shared)));
        }
    }
}

/// Receives hints of freed semaphore permits: the semaphore, or `None` when any may be free.
pub(crate) type PermitHints = Box<dyn Fn(Option<(&Tenant, &ResourceName)>) + Send + Sync>;

impl Shared {
    fn permits_freed(&self, semaphore: Option<(&Tenant, &ResourceName)>) {
        if let Some(hints) = self.permit_hints.get() {
            hints(semaphore);
        }
    }

    fn wake(&self, key: &QueueKey, freed: bool) {
        self.wake_sets(key);
        if freed {
            self.quotas.lease_ended();
        }
        let queue = locked(&self.queues).get(key).cloned();
        if let Some(queue) = queue {
            queue.wake(freed);
        }
    }

    /// Any lock or permit may have been freed elsewhere, and which is not known: one look at
    /// every queued lock and at the locks that refused each waiting set (the poller's, at once)
    /// wakes the queues whose lock changed and the sets that may be granted now; each permit
    /// queue looks at its semaphore and tries again only if it changed; those over a quota try
    /// again.
    fn anything_may_be_free(&self) {
        self.quotas.lease_ended();
        self.look_now.notify_one();
        self.permits_freed(None);
    }

    /// Wakes the sets that ask for lock `key`.
    fn wake_sets(&self, key: &QueueKey) {
        if let Some(waits) = locked(&self.set_waits).get(key) {
            waits.iter().for_each(|(_, wake)| wake.wake());
        }
    }

    fn poll_period(&self) -> Duration {
        if self.hints.load(Ordering::Acquire) == HINTS_LIVE {
            SAFETY_PERIOD
        } else {
            POLL_PERIOD
        }
    }

    /// The head waiter (after dropping those whose request is gone), or `None` when the queue
    /// is empty, in which case it has been removed: a later waiter starts a new queue.
    fn head(&self, key: &QueueKey, queue: &Arc<Queue>) -> Option<Head> {
        if let Some(head) = queue.head() {
            return Some(head);
        }
        let mut queues = locked(&self.queues);
        // A waiter may have joined between the two looks; it joined under the map's lock.
        if let Some(head) = queue.head() {
            return Some(head);
        }
        if queues.get(key).is_some_and(|q| Arc::ptr_eq(q, queue)) {
            queues.remove(key);
        }
        // Under the map's lock, so no release is handed to the queue after this.
        queue.decline_releases();
        None
    }
}
