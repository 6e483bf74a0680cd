//! Acquires that wait for a lock (`wait_seconds`): per (tenant, resource) that has waiters, a
//! FIFO of waiters and one task that makes the acquire attempts for the head waiter through the
//! repository port, and hands the grant over a oneshot channel.
//!
//! A waiter is a handler future awaiting its channel: it holds no database connection and no
//! worker thread. The queue's task attempts an acquire only when the lock may be free:
//! - a release (or a renew, which may shorten the lease) through this process's API: the
//!   handlers call [`Waiting::freed`] / [`Waiting::lease_changed`], which wake the task at once;
//! - a hint from the store that another process freed it ([`LockRepository::subscribe_freed`],
//!   PostgreSQL's `LISTEN`); while the store gives no hints (SQLite), the task polls the lock's
//!   status every [`POLL_PERIOD`] instead, and with hints it still looks every [`SAFETY_PERIOD`];
//! - the end of the holder's lease: the task knows `expires_at` from the grant or the status
//!   and tries just after it (never before it counts, since only a grant at or after the expiry
//!   succeeds, and the store's clock decides).
//!
//! A waiter whose request is dropped (the client went away) leaves the queue at once. If its
//! grant was already made, that exact grant is undone ([`LockRepository::undo_grant`]: never a
//! later re-grant or renewal, never a re-grant of a lease the owner already held), so a client
//! that is gone is never left holding a lock. The queue hands out its next grant only once the
//! waiter has taken the last one or it has been undone: a grant to the next waiter (perhaps of
//! the same owner) can never be ended by the undo of the one before.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use lock_domain::{
    AcquireOutcome, Freed, Lock, LockRepository, Owner, RepositoryError, ResourceName, Tenant, Ttl,
};
use tokio::sync::{oneshot, Notify};

/// How often a queue looks at its lock when the store gives no hints of other processes'
/// releases (SQLite shared by several processes).
const POLL_PERIOD: Duration = Duration::from_millis(200);

/// How often a queue looks at its lock even with hints, in case one was lost.
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

/// What a waiter receives: its lock, or the error that ended every wait on the resource.
type Grant = Result<Granted, RepositoryError>;

/// A lock granted to a waiter.
struct Granted {
    lock: Lock,
    /// Tells the queue that the waiter has taken the grant (`false`) or that it was undone
    /// (`true`); dropped unsent, it means the undo could not be made. The queue waits for it
    /// before it makes its next grant.
    settled: oneshot::Sender<bool>,
}

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

/// Which limit refused a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitersFull {
    Total,
    Tenant,
}

/// The state of the subscription to the store's hints.
const HINTS_NOT_STARTED: u8 = 0;
const HINTS_PENDING: u8 = 1;
const HINTS_LIVE: u8 = 2;
const HINTS_NONE: u8 = 3;

/// The waiting acquires of one server (shared by all its workers). Cheap to clone.
#[derive(Clone)]
pub struct Waiting {
    shared: Arc<Shared>,
}

struct Shared {
    repo: Arc<dyn LockRepository>,
    queues: Mutex<HashMap<QueueKey, Arc<Queue>>>,
    hints: AtomicU8,
    next_id: AtomicU64,
    /// Waiters now; raised only under `waiters_by_tenant`'s lock, so the limits hold exactly.
    live: AtomicU64,
    limits: WaiterLimits,
    waiters_by_tenant: Mutex<HashMap<Tenant, u64>>,
    granted: AtomicU64,
    timed_out: AtomicU64,
    abandoned: AtomicU64,
    /// Set by [`Waiting::close`]: every wait ends now, and no new one starts.
    closed: AtomicBool,
    closing: Notify,
}

/// The waiters of one lock, first come first served.
struct Queue {
    waiters: Mutex<VecDeque<Waiter>>,
    wake: Notify,
    /// A release may have freed the lock: attempt an acquire.
    freed: AtomicBool,
    /// The lease may have changed (a renew, lost hints): look at the lock's status.
    recheck: AtomicBool,
    /// The end of the holder's lease as last seen, for `Retry-After`.
    expires_at: Mutex<Option<DateTime<Utc>>>,
    /// The waiter an acquire attempt is being made for, until its grant is sent or the attempt
    /// failed. A waiter whose time runs out meanwhile waits for that attempt: the attempt may be
    /// granted, and answering "not acquired" then would hide a grant (a lease that someone else
    /// sees held, with no request to explain it).
    attempting: Mutex<Option<u64>>,
    /// Notified when `attempting` is cleared.
    attempt_done: Notify,
}

struct Waiter {
    id: u64,
    owner: Owner,
    ttl: Ttl,
    grant: oneshot::Sender<Grant>,
}

/// How a wait ended.
pub(crate) enum WaitOutcome {
    Granted(Lock),
    /// The wait ended without a grant; try again after this many seconds.
    TimedOut {
        retry_after_seconds: u64,
    },
    Failed(RepositoryError),
    /// Granted, but the client had hung up by then: the grant is undone (a re-grant of the
    /// owner's earlier lease is left as it was).
    HungUp,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind, never a broken
    // invariant worth refusing every later request for.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Waiting {
    /// Waiting acquires with the default [`WaiterLimits`].
    pub fn new(repo: Arc<dyn LockRepository>) -> Self {
        Self::with_limits(repo, WaiterLimits::default())
    }

    /// Waiting acquires, at most `limits` at once.
    pub fn with_limits(repo: Arc<dyn LockRepository>, limits: WaiterLimits) -> Self {
        Self {
            shared: Arc::new(Shared {
                repo,
                queues: Mutex::new(HashMap::new()),
                hints: AtomicU8::new(HINTS_NOT_STARTED),
                next_id: AtomicU64::new(0),
                live: AtomicU64::new(0),
                limits,
                waiters_by_tenant: Mutex::new(HashMap::new()),
                granted: AtomicU64::new(0),
                timed_out: AtomicU64::new(0),
                abandoned: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                closing: Notify::new(),
            }),
        }
    }

    /// Requests waiting for a lock right now.
    pub fn live_waiters(&self) -> u64 {
        self.shared.live.load(Ordering::Relaxed)
    }

    /// Waiting requests that were granted their lock, since start.
    pub fn granted_after_wait(&self) -> u64 {
        self.shared.granted.load(Ordering::Relaxed)
    }

    /// Waiting requests whose wait ended without a lock, since start.
    pub fn timed_out(&self) -> u64 {
        self.shared.timed_out.load(Ordering::Relaxed)
    }

    /// Grants made for waiters whose client had gone, and released at once, since start.
    pub fn abandoned_grants(&self) -> u64 {
        self.shared.abandoned.load(Ordering::Relaxed)
    }

    /// Ends every wait now, as if its time were up (`acquired: false`), and makes later acquires
    /// answer at once: for a server that is shutting down, whose graceful stop would otherwise
    /// wait for waiters.
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.closing.notify_waiters();
    }

    /// Requests waiting for the lock on `resource` of `tenant` right now.
    pub fn waiters(&self, tenant: &Tenant, resource: &ResourceName) -> usize {
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

    /// Whether requests wait for this lock in this process.
    pub(crate) fn has_queue(&self, tenant: &Tenant, resource: &ResourceName) -> bool {
        locked(&self.shared.queues).contains_key(&(tenant.clone(), resource.clone()))
    }

    /// The lock on `resource` was released through this process: the head waiter tries at once.
    pub(crate) fn freed(&self, tenant: &Tenant, resource: &ResourceName) {
        self.shared.wake(&(tenant.clone(), resource.clone()), true);
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
        owner: Owner,
        ttl: Ttl,
    ) -> Result<Ticket, WaitersFull> {
        let seat = WaiterSeat::take(&self.shared, &tenant)?;
        let (grant, granted) = oneshot::channel();
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let key = (tenant, resource);
        let queue = {
            let mut queues = locked(&self.shared.queues);
            let queue = match queues.get(&key) {
                Some(queue) => Arc::clone(queue),
                None => {
                    let queue = Arc::new(Queue::new());
                    queues.insert(key.clone(), Arc::clone(&queue));
                    tokio::spawn(serve(
                        Arc::clone(&self.shared),
                        key.clone(),
                        Arc::clone(&queue),
                    ));
                    queue
                }
            };
            locked(&queue.waiters).push_back(Waiter {
                id,
                owner: owner.clone(),
                ttl,
                grant,
            });
            queue
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
        })
    }

    /// Subscribes to the store's hints once, on the first wait.
    fn start_hints(&self) {
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
            tokio::spawn(listen_for_hints(
                Arc::downgrade(&self.shared),
                Arc::clone(&self.shared.repo),
            ));
        }
    }
}

impl Shared {
    fn wake(&self, key: &QueueKey, freed: bool) {
        let queue = locked(&self.queues).get(key).cloned();
        if let Some(queue) = queue {
            queue.wake(freed);
        }
    }

    fn wake_all(&self) {
        let queues: Vec<Arc<Queue>> = locked(&self.queues).values().cloned().collect();
        for queue in queues {
            queue.wake(false);
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
    fn head(&self, key: &QueueKey, queue: &Arc<Queue>) -> Option<(u64, Owner, Ttl)> {
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
        None
    }
}

impl Queue {
    fn new() -> Self {
        Self {
            waiters: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            freed: AtomicBool::new(false),
            // A new queue looks before it leaps: knowing the holder tells a re-grant of the
            // holder's own lease (kept if its requester is gone) from a new grant (released).
            recheck: AtomicBool::new(true),
            expires_at: Mutex::new(None),
            attempting: Mutex::new(None),
            attempt_done: Notify::new(),
        }
    }

    fn wake(&self, freed: bool) {
        if freed {
            self.freed.store(true, Ordering::Release);
        } else {
            self.recheck.store(true, Ordering::Release);
        }
        self.wake.notify_one();
    }

    fn head(&self) -> Option<(u64, Owner, Ttl)> {
        let mut waiters = locked(&self.waiters);
        while waiters.front().is_some_and(|w| w.grant.is_closed()) {
            waiters.pop_front();
        }
        waiters.front().map(|w| (w.id, w.owner.clone(), w.ttl))
    }

    /// Takes waiter `id` out of the queue.
    fn take(&self, id: u64) -> Option<Waiter> {
        let mut waiters = locked(&self.waiters);
        let position = waiters.iter().position(|w| w.id == id)?;
        waiters.remove(position)
    }

    /// Ends every wait with `error`.
    fn fail_all(&self, error: &RepositoryError) {
        let waiters: Vec<Waiter> = locked(&self.waiters).drain(..).collect();
        for waiter in waiters {
            let _ = waiter.grant.send(Err(copy_error(error)));
        }
    }

    /// Marks an attempt for waiter `id` as in flight, unless the waiter has closed its channel
    /// (its wait ended): `false` then.
    fn start_attempt(&self, id: u64) -> bool {
        let mut attempting = locked(&self.attempting);
        let open = locked(&self.waiters)
            .iter()
            .any(|w| w.id == id && !w.grant.is_closed());
        if open {
            *attempting = Some(id);
        }
        open
    }

    /// No attempt is in flight any more: waiters whose time ran out meanwhile may answer.
    fn end_attempt(&self) {
        *locked(&self.attempting) = None;
        self.attempt_done.notify_waiters();
    }

    fn set_expires_at(&self, at: Option<DateTime<Utc>>) {
        *locked(&self.expires_at) = at;
    }

    fn retry_after_seconds(&self) -> u64 {
        let expires_at = *locked(&self.expires_at);
        expires_at
            .and_then(|at| (at - Utc::now()).to_std().ok())
            .map_or(1, |left| left.as_secs() + 1)
    }
}

/// The same failure, for another waiter (repository errors are not `Clone`).
fn copy_error(error: &RepositoryError) -> RepositoryError {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    match error {
        RepositoryError::Unavailable(_) => RepositoryError::unavailable(text),
        RepositoryError::Internal(_) => RepositoryError::internal(text),
    }
}

/// A waiter's share of the limits, taken before it joins a queue and given back when its
/// [`Ticket`] is dropped (which also lowers `live`).
struct WaiterSeat {
    shared: Arc<Shared>,
    tenant: Tenant,
}

impl WaiterSeat {
    fn take(shared: &Arc<Shared>, tenant: &Tenant) -> Result<Self, WaitersFull> {
        let mut by_tenant = locked(&shared.waiters_by_tenant);
        if shared.live.load(Ordering::Acquire) >= shared.limits.total {
            return Err(WaitersFull::Total);
        }
        let of_tenant = by_tenant.entry(tenant.clone()).or_insert(0);
        if *of_tenant >= shared.limits.per_tenant {
            return Err(WaitersFull::Tenant);
        }
        *of_tenant += 1;
        shared.live.fetch_add(1, Ordering::AcqRel);
        Ok(Self {
            shared: Arc::clone(shared),
            tenant: tenant.clone(),
        })
    }
}

impl Drop for WaiterSeat {
    fn drop(&mut self) {
        let mut by_tenant = locked(&self.shared.waiters_by_tenant);
        if let Some(of_tenant) = by_tenant.get_mut(&self.tenant) {
            *of_tenant = of_tenant.saturating_sub(1);
            if *of_tenant == 0 {
                by_tenant.remove(&self.tenant);
            }
        }
    }
}

/// One waiting request's place in a queue. Dropping it (the request is gone) leaves the queue
/// at once, and undoes a grant that arrived too late to be answered.
pub(crate) struct Ticket {
    /// Given back when the ticket is dropped.
    _seat: WaiterSeat,
    /// This waiter's place in its queue.
    id: u64,
    granted: oneshot::Receiver<Grant>,
    queue: Arc<Queue>,
    shared: Arc<Shared>,
    key: QueueKey,
    /// The outcome has been taken out of the channel (nothing left to undo).
    settled: bool,
}

impl Ticket {
    /// After the wait ended: the outcome of an attempt in flight for this waiter (waiting for it
    /// to end), or of one whose grant was just sent; `None` when there is none. The channel is
    /// closed after, so the queue hands no later grant to this waiter.
    async fn last_word(&mut self) -> Option<Grant> {
        loop {
            let done = self.queue.attempt_done.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            {
                let attempting = locked(&self.queue.attempting);
                if *attempting != Some(self.id) {
                    // Closed under the lock the queue takes to start an attempt for an open
                    // waiter: no attempt starts for this one any more. A grant is sent before
                    // `attempting` is cleared, so one made for it is in the channel now.
                    self.granted.close();
                    drop(attempting);
                    return self.granted.try_recv().ok();
                }
            }
            tokio::select! {
                answered = &mut self.granted => return answered.ok(),
                () = done => {}
            }
        }
    }

    /// Waits for the grant, at most `wait`. `hung_up` is asked once a grant has arrived: when the
    /// client is already gone, the grant is undone (unless it only re-granted a lease the owner
    /// held before) and the outcome is [`WaitOutcome::HungUp`].
    pub(crate) async fn wait(mut self, wait: Duration, hung_up: impl Fn() -> bool) -> WaitOutcome {
        let shared = Arc::clone(&self.shared);
        let closing = shared.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        let answered = if shared.closed.load(Ordering::Acquire) {
            None
        } else {
            tokio::select! {
                answered = tokio::time::timeout(wait, &mut self.granted) => answered.ok(),
                () = closing => None,
            }
        };
        let mut settle = None;
        let outcome = match answered {
            Some(Ok(Ok(granted))) => {
                settle = Some(granted.settled);
                WaitOutcome::Granted(granted.lock)
            }
            Some(Ok(Err(error))) => WaitOutcome::Failed(error),
            Some(Err(_)) => WaitOutcome::Failed(RepositoryError::internal(
                "the queue of waiting acquires ended without an answer",
            )),
            None => {
                // An attempt made for this waiter right now decides; a grant sent just now is
                // taken rather than left behind.
                match self.last_word().await {
                    Some(Ok(granted)) => {
                        settle = Some(granted.settled);
                        WaitOutcome::Granted(granted.lock)
                    }
                    Some(Err(error)) => WaitOutcome::Failed(error),
                    None => {
                        self.shared.timed_out.fetch_add(1, Ordering::Relaxed);
                        self.queue.wake.notify_one();
                        WaitOutcome::TimedOut {
                            retry_after_seconds: self.queue.retry_after_seconds(),
                        }
                    }
                }
            }
        };
        self.settled = true;
        match (outcome, settle) {
            (WaitOutcome::Granted(lock), Some(settled)) if hung_up() => {
                // Spawned, not awaited: this request may be dropped at any await now that its
                // client is gone, and the undo must happen all the same.
                tokio::spawn(undo_abandoned(
                    Arc::clone(&self.shared),
                    self.key.0.clone(),
                    lock,
                    settled,
                ));
                WaitOutcome::HungUp
            }
            (outcome, settled) => {
                if let Some(settled) = settled {
                    self.shared.granted.fetch_add(1, Ordering::Relaxed);
                    let _ = settled.send(false);
                }
                outcome
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.shared.live.fetch_sub(1, Ordering::Relaxed);
        if self.settled {
            return;
        }
        // The request was dropped while waiting: leave the queue now (its task prunes closed
        // waiters when woken), and undo a grant that is already in the channel.
        self.granted.close();
        self.queue.wake.notify_one();
        if let Ok(Ok(Granted { lock, settled })) = self.granted.try_recv() {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                // Dropping `settled` unsent makes the queue's task undo it.
                tracing::error!(resource = %lock.resource.as_str(), "a grant for a request that is gone is handed back to its queue");
                return;
            };
            runtime.spawn(undo_abandoned(
                Arc::clone(&self.shared),
                self.key.0.clone(),
                lock,
                settled,
            ));
        }
    }
}

/// Undoes a grant nobody will use and tells the queue (which waits for it before its next
/// grant) whether the lock was freed.
async fn undo_abandoned(
    shared: Arc<Shared>,
    tenant: Tenant,
    lock: Lock,
    settled: oneshot::Sender<bool>,
) {
    let undone = undo(&shared, &tenant, lock).await;
    let _ = settled.send(undone);
}

/// Undoes exactly the grant `lock` (see [`LockRepository::undo_grant`]), counts and audits it;
/// whether the lock was freed.
async fn undo(shared: &Shared, tenant: &Tenant, lock: Lock) -> bool {
    shared.abandoned.fetch_add(1, Ordering::Relaxed);
    match shared.repo.undo_grant(tenant.clone(), lock.clone()).await {
        Ok(undone) => {
            crate::audit::grant_undone(tenant, &lock, undone, "the waiting client hung up");
            undone
        }
        Err(error) => {
            tracing::warn!(%error, resource = %lock.resource.as_str(), "could not undo a grant for a request that is gone; it expires with its lease");
            false
        }
    }
}

/// Subscribes to the store's hints and wakes the queues they name, for as long as the
/// `Waiting` lives; resubscribes after a failure.
async fn listen_for_hints(shared: Weak<Shared>, repo: Arc<dyn LockRepository>) {
    loop {
        match repo.subscribe_freed().await {
            Ok(None) => {
                if let Some(shared) = shared.upgrade() {
                    shared.hints.store(HINTS_NONE, Ordering::Release);
                }
                return;
            }
            Ok(Some(mut hints)) => {
                {
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    shared.hints.store(HINTS_LIVE, Ordering::Release);
                    // Releases made before the subscription took effect were not hinted.
                    shared.wake_all();
                }
                while let Some(hint) = hints.next().await {
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    match hint {
                        Freed::Lock { tenant, resource } => shared.wake(&(tenant, resource), true),
                        Freed::Unknown => shared.wake_all(),
                    }
                }
                tracing::warn!("the store stopped sending hints of released locks; polling");
            }
            Err(error) => {
                tracing::warn!(%error, "cannot subscribe to hints of released locks; polling");
            }
        }
        let Some(alive) = shared.upgrade() else {
            return;
        };
        alive.hints.store(HINTS_PENDING, Ordering::Release);
        drop(alive);
        tokio::time::sleep(RESUBSCRIBE_DELAY).await;
    }
}

/// The task of one queue: attempts acquires for the head waiter when the lock may be free, and
/// ends when the queue is empty.
async fn serve(shared: Arc<Shared>, key: QueueKey, queue: Arc<Queue>) {
    let (tenant, resource) = key.clone();
    // The live lock as last seen (from a grant or a status), if any.
    let mut holder: Option<Lock> = None;
    let mut attempt = false;
    let mut head_id = None;
    // Extra wait after an expiry attempt found the same lease still live.
    let mut skew = Duration::ZERO;
    loop {
        let Some((id, owner, ttl)) = shared.head(&key, &queue) else {
            return;
        };
        if head_id != Some(id) {
            head_id = Some(id);
            // A new head that already holds the lock is granted again at once.
            if holder.as_ref().is_some_and(|lock| lock.owner == owner) {
                attempt = true;
            }
        }
        if queue.freed.swap(false, Ordering::AcqRel) {
            attempt = true;
        }
        let mut look = queue.recheck.swap(false, Ordering::AcqRel);
        if attempt {
            attempt = false;
            if !queue.start_attempt(id) {
                // The waiter's time ran out (or its request is gone) just now: the next one
                // tries instead.
                attempt = true;
                continue;
            }
            let attempted = shared
                .repo
                .acquire(tenant.clone(), resource.clone(), owner.clone(), ttl)
                .await;
            if !matches!(attempted, Ok(AcquireOutcome::Granted(_))) {
                queue.end_attempt();
            }
            match attempted {
                Ok(AcquireOutcome::Granted(lock)) => {
                    skew = Duration::ZERO;
                    if deliver(&shared, &queue, &tenant, id, lock.clone()).await {
                        // Undone: the lock is free again.
                        holder = None;
                        queue.set_expires_at(None);
                        attempt = true;
                    } else {
                        queue.set_expires_at(Some(lock.expires_at));
                        holder = Some(lock);
                    }
                    continue;
                }
                Ok(AcquireOutcome::Held) => look = true,
                Err(error) => {
                    tracing::warn!(%error, resource = %resource.as_str(), "an acquire for waiting requests failed; ending their waits");
                    queue.fail_all(&error);
                    continue;
                }
            }
        }
        if look {
            match shared.repo.status(tenant.clone(), resource.clone()).await {
                Ok(Some(lock)) => {
                    let same = holder.as_ref().is_some_and(|held| {
                        held.fencing_token == lock.fencing_token
                            && held.expires_at == lock.expires_at
                    });
                    if same && lock.expires_at <= Utc::now() {
                        // Our clock says the lease is over, the store's does not yet.
                        skew = (skew * 2).clamp(Duration::from_millis(10), MAX_SKEW_BACKOFF);
                    } else if !same {
                        skew = Duration::ZERO;
                    }
                    if lock.owner == owner {
                        attempt = true;
                    }
                    queue.set_expires_at(Some(lock.expires_at));
                    holder = Some(lock);
                }
                Ok(None) => {
                    holder = None;
                    queue.set_expires_at(None);
                    attempt = true;
                }
                Err(error) => {
                    tracing::warn!(%error, resource = %resource.as_str(), "a status for waiting requests failed; ending their waits");
                    queue.fail_all(&error);
                    continue;
                }
            }
            if attempt {
                continue;
            }
        }
        let poll = shared.poll_period();
        let until_expiry = holder.as_ref().map(|lock| {
            (lock.expires_at - Utc::now())
                .to_std()
                .unwrap_or(Duration::ZERO)
                + EXPIRY_MARGIN
                + skew
        });
        let sleep = until_expiry.map_or(poll, |left| left.min(poll));
        let timer_fired = tokio::select! {
            () = queue.wake.notified() => false,
            () = tokio::time::sleep(sleep) => true,
        };
        if timer_fired {
            match &holder {
                Some(lock) if lock.expires_at <= Utc::now() => attempt = true,
                _ => queue.recheck.store(true, Ordering::Release),
            }
        }
    }
}

/// Hands a grant to waiter `id` and waits until the waiter has taken it or it has been undone;
/// whether it was undone. A waiter whose request is gone cannot take it: the grant is undone at
/// once (the store keeps a re-grant of a lease its owner already held).
async fn deliver(shared: &Shared, queue: &Queue, tenant: &Tenant, id: u64, lock: Lock) -> bool {
    let (settled, taken) = oneshot::channel();
    let grant = Granted {
        lock: lock.clone(),
        settled,
    };
    let sent = match queue.take(id) {
        Some(waiter) => waiter.grant.send(Ok(grant)).is_ok(),
        None => false,
    };
    // Sent (or not) before the attempt ends: a waiter whose time ran out takes it.
    queue.end_attempt();
    if sent {
        // `Err`: handed back without an undo (no runtime to make it on): make it here.
        if let Ok(undone) = taken.await {
            return undone;
        }
    }
    undo(shared, tenant, lock).await
}

#[cfg(test)]
mod tests {
    //! The hand-over of a grant to a waiter whose client is gone, with two waiters of one owner:
    //! the undo of the first grant must never end the second waiter's lease.

    use std::sync::Arc;
    use std::time::Duration;

    use lock_domain::testing::InMemoryLockRepository;
    use lock_domain::{
        AcquireOutcome, ListPage, ListQuery, Lock, LockRepository, Owner, PoolState, ReleaseResult,
        RenewResult, RepositoryError, ResourceName, SystemClock, Tenant, Ttl,
    };

    use super::{WaitOutcome, Waiting};

    fn setup() -> (Waiting, Arc<dyn LockRepository>, Tenant, ResourceName) {
        let repo: Arc<dyn LockRepository> =
            Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
        (
            Waiting::new(Arc::clone(&repo)),
            repo,
            Tenant::default_tenant(),
            ResourceName::parse("r").unwrap(),
        )
    }

    fn owner(raw: &str) -> Owner {
        Owner::parse(raw).unwrap()
    }

    fn ttl() -> Ttl {
        Ttl::parse(60, 3_600).unwrap()
    }

    /// Holder H holds `r`; two waiters of owner O queue behind it; H releases.
    async fn two_waiters_of_one_owner() -> (
        Waiting,
        Arc<dyn LockRepository>,
        super::Ticket,
        super::Ticket,
    ) {
        let (waiting, repo, tenant, resource) = setup();
        let held = repo
            .acquire(tenant.clone(), resource.clone(), owner("h"), ttl())
            .await
            .unwrap();
        assert!(matches!(held, AcquireOutcome::Granted(_)));
        let first = waiting
            .enqueue(tenant.clone(), resource.clone(), owner("o"), ttl())
            .expect("room for a waiter");
        let second = waiting
            .enqueue(tenant.clone(), resource.clone(), owner("o"), ttl())
            .expect("room for a waiter");
        tokio::time::sleep(Duration::from_millis(20)).await;
        repo.release(tenant.clone(), resource.clone(), owner("h"))
            .await
            .unwrap();
        waiting.freed(&tenant, &resource);
        (waiting, repo, first, second)
    }

    async fn assert_second_waiter_holds(repo: &Arc<dyn LockRepository>, second: super::Ticket) {
        let WaitOutcome::Granted(lock) = second.wait(Duration::from_secs(5), || false).await else {
            panic!("the second waiter was not granted");
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let status = repo
            .status(Tenant::default_tenant(), ResourceName::parse("r").unwrap())
            .await
            .unwrap();
        assert_eq!(
            status.as_ref(),
            Some(&lock),
            "the second waiter was answered a lease that is gone"
        );
        let third = repo
            .acquire(
                Tenant::default_tenant(),
                ResourceName::parse("r").unwrap(),
                owner("third"),
                ttl(),
            )
            .await
            .unwrap();
        assert_eq!(third, AcquireOutcome::Held, "a third owner got the lock");
    }

    /// The in-memory store, with acquires that take a while (a slow database).
    struct SlowAcquires(InMemoryLockRepository, Duration);

    #[async_trait::async_trait]
    impl LockRepository for SlowAcquires {
        async fn acquire(
            &self,
            tenant: Tenant,
            resource: ResourceName,
            owner: Owner,
            ttl: Ttl,
        ) -> Result<AcquireOutcome, RepositoryError> {
            tokio::time::sleep(self.1).await;
            self.0.acquire(tenant, resource, owner, ttl).await
        }
        async fn status(
            &self,
            tenant: Tenant,
            resource: ResourceName,
        ) -> Result<Option<Lock>, RepositoryError> {
            self.0.status(tenant, resource).await
        }
        async fn release(
            &self,
            tenant: Tenant,
            resource: ResourceName,
            owner: Owner,
        ) -> Result<ReleaseResult, RepositoryError> {
            self.0.release(tenant, resource, owner).await
        }
        async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
            self.0.undo_grant(tenant, grant).await
        }
        async fn renew(
            &self,
            tenant: Tenant,
            resource: ResourceName,
            owner: Owner,
            ttl: Ttl,
        ) -> Result<RenewResult, RepositoryError> {
            self.0.renew(tenant, resource, owner, ttl).await
        }
        async fn ping(&self) -> Result<(), RepositoryError> {
            self.0.ping().await
        }
        async fn list(
            &self,
            tenant: Tenant,
            query: ListQuery,
        ) -> Result<ListPage, RepositoryError> {
            self.0.list(tenant, query).await
        }
        async fn count_live(&self) -> Result<u64, RepositoryError> {
            self.0.count_live().await
        }
        fn pool_state(&self) -> Option<PoolState> {
            self.0.pool_state()
        }
        async fn count_expired_takeovers(&self) -> Result<u64, RepositoryError> {
            self.0.count_expired_takeovers().await
        }
    }

    /// A wait that ends while the acquire attempt made for it is still running must not answer
    /// "not acquired" when that attempt grants: the lease would exist with no request to explain
    /// it (others are refused), until its undo.
    #[tokio::test]
    async fn a_wait_that_ends_during_its_attempt_answers_with_that_attempt_s_grant() {
        let repo: Arc<dyn LockRepository> = Arc::new(SlowAcquires(
            InMemoryLockRepository::new(Arc::new(SystemClock)),
            Duration::from_millis(300),
        ));
        let waiting = Waiting::new(Arc::clone(&repo));
        let ticket = waiting
            .enqueue(
                Tenant::default_tenant(),
                ResourceName::parse("r").unwrap(),
                owner("o"),
                ttl(),
            )
            .expect("room for a waiter");
        let outcome = ticket.wait(Duration::from_millis(100), || false).await;
        let WaitOutcome::Granted(lock) = outcome else {
            panic!("the attempt in flight granted the lock, but the waiter was told otherwise");
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let status = repo
            .status(Tenant::default_tenant(), ResourceName::parse("r").unwrap())
            .await
            .unwrap();
        assert_eq!(status, Some(lock));
    }

    #[tokio::test]
    async fn a_hung_up_waiter_s_undo_never_ends_the_next_same_owner_waiter_s_lease() {
        let (_waiting, repo, first, second) = two_waiters_of_one_owner().await;
        // The first waiter's client has hung up by the time its grant arrives.
        let outcome = first.wait(Duration::from_secs(5), || true).await;
        assert!(matches!(outcome, WaitOutcome::HungUp));
        assert_second_waiter_holds(&repo, second).await;
    }

    #[tokio::test]
    async fn a_dropped_waiter_s_undo_never_ends_the_next_same_owner_waiter_s_lease() {
        let (_waiting, repo, first, second) = two_waiters_of_one_owner().await;
        // The grant is in the first waiter's channel when its request is dropped.
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        assert_second_waiter_holds(&repo, second).await;
    }
}
