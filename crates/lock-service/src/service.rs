//! [`LockService`]: the lock use cases, each from the call to the store to the report of its
//! outcome.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    AcquireOutcome, AdminRepository, Clock, FreedHints, HistoryRepository, Hold, LeaseUsage,
    LeaseValue, ListPage, ListQuery, LockDelay, LockMode, LockRepository, MultiLockRepository,
    Owner, ReleaseResult, RenewResult, RepositoryError, ResourceName, SemaphoreRepository,
    SharedLockRepository, SystemClock, Tenant, Ttl,
};

use crate::events::{LockEvents, NoEvents};
use crate::history::HistoryHub;
use crate::observe::{Hub, ObservingEvents};
use crate::outcomes::{Acquired, WaitersFull};
use crate::permits::queue::PermitQueues;
use crate::quota::{LeaseGate, QuotaExceeded, Quotas};
use crate::waiting::{WaitOutcome, WaiterLimits, Waiting};

/// The store's ports the use cases run over, one handle each. A store implements them all
/// ([`StorePorts::of`]); a test may put a double of its own in any one place. The one bundle of
/// them: every composition (the binary, [`LockService::over`], the HTTP crate's own) takes it
/// whole.
#[derive(Clone)]
pub struct StorePorts {
    pub locks: Arc<dyn LockRepository>,
    pub shared_locks: Arc<dyn SharedLockRepository>,
    pub multi_locks: Arc<dyn MultiLockRepository>,
    pub semaphores: Arc<dyn SemaphoreRepository>,
    pub history: Arc<dyn HistoryRepository>,
    pub admin: Arc<dyn AdminRepository>,
    /// Counts a tenant's live leases for its quota.
    pub usage: Arc<dyn LeaseUsage>,
}

impl StorePorts {
    /// Every port from one store.
    pub fn of<S>(store: Arc<S>) -> Self
    where
        S: LockRepository
            + SharedLockRepository
            + MultiLockRepository
            + SemaphoreRepository
            + HistoryRepository
            + AdminRepository
            + LeaseUsage
            + 'static,
    {
        Self {
            locks: Arc::clone(&store) as _,
            shared_locks: Arc::clone(&store) as _,
            multi_locks: Arc::clone(&store) as _,
            semaphores: Arc::clone(&store) as _,
            history: Arc::clone(&store) as _,
            admin: Arc::clone(&store) as _,
            usage: store,
        }
    }
}

/// What the service is built on: the store's ports and (if it gives them) its hints of locks
/// freed by other processes, the clock, and where outcomes are reported.
#[derive(Clone)]
pub struct ServicePorts {
    pub store: StorePorts,
    pub hints: Option<Arc<dyn FreedHints>>,
    pub clock: Arc<dyn Clock>,
    pub events: Arc<dyn LockEvents>,
}

/// An acquire, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireRequest {
    pub tenant: Tenant,
    pub resource: ResourceName,
    pub owner: Owner,
    pub ttl: Ttl,
    /// How long the acquire may wait for the lock; zero answers at once.
    pub wait: Duration,
    /// Exclusive (v1) or shared.
    pub mode: LockMode,
    /// The value to store with the lease (a re-grant keeps the one it had when `None`).
    pub value: Option<LeaseValue>,
    /// How long the lease keeps its place from other owners after it ends by expiry (exclusive
    /// acquires; a shared acquire must ask for none).
    pub lock_delay: LockDelay,
}

/// Why an acquire was not answered.
#[derive(Debug)]
pub enum AcquireError {
    /// The store failed: nothing was granted.
    Store(RepositoryError),
    /// The acquire would wait, but too many already do: nothing was attempted.
    WaitersFull(WaitersFull),
    /// The acquire would go over a limit of its tenant (`max_live_leases`, `max_waiters`):
    /// nothing was granted. A waiting acquire whose grant the tenant's `max_live_leases` held
    /// back until its wait ended is answered this too.
    QuotaExceeded(QuotaExceeded),
}

impl From<RepositoryError> for AcquireError {
    fn from(error: RepositoryError) -> Self {
        Self::Store(error)
    }
}

/// How the waiting acquires of this process have fared, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitingStats {
    /// Acquires waiting right now.
    pub live: u64,
    /// Waiting acquires granted their lock, since start.
    pub granted_after_wait: u64,
    /// Waiting acquires whose wait ended without the lock, since start.
    pub timed_out: u64,
    /// Grants made for waiters whose client had gone, and undone, since start.
    pub abandoned_grants: u64,
}

/// The lock use cases of one process. Cheap to clone: clones share the queues of waiting
/// acquires, so build one per process and hand it to every inbound adapter (all HTTP workers,
/// a `LockGuard`): a release through any of them wakes a waiter of any other.
#[derive(Clone)]
pub struct LockService {
    pub(crate) locks: Arc<dyn LockRepository>,
    pub(crate) shared_locks: Arc<dyn SharedLockRepository>,
    pub(crate) multi_locks: Arc<dyn MultiLockRepository>,
    pub(crate) semaphores: Arc<dyn SemaphoreRepository>,
    pub(crate) history: Arc<dyn HistoryRepository>,
    pub(crate) admin: Arc<dyn AdminRepository>,
    /// The limits of each tenant, and what this process counts against them.
    pub(crate) quotas: Quotas,
    /// The event feed of the history.
    pub(crate) history_hub: HistoryHub,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) events: Arc<dyn LockEvents>,
    pub(crate) waiting: Waiting,
    pub(crate) permit_queues: PermitQueues,
    /// The watches of observed names.
    pub(crate) hub: Hub,
}

impl LockService {
    /// The use cases over `ports`, holding at most `limits` waiting acquires at once.
    pub fn new(mut ports: ServicePorts, limits: WaiterLimits) -> Self {
        let StorePorts {
            locks,
            shared_locks,
            multi_locks,
            semaphores,
            history,
            admin,
            usage,
        } = ports.store;
        // Every outcome reported also reaches the watches of observed names.
        let hub = Hub::new(Arc::clone(&ports.clock));
        ports.events = Arc::new(ObservingEvents {
            inner: ports.events,
            hub: hub.clone(),
        });
        let quotas = Quotas::new(usage);
        let waiting = Waiting::new(
            Arc::clone(&locks),
            Arc::clone(&shared_locks),
            ports.hints,
            Arc::clone(&ports.clock),
            Arc::clone(&ports.events),
            limits,
            quotas.clone(),
        );
        let permit_queues = PermitQueues::new(
            Arc::clone(&semaphores),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.events),
            waiting.clone(),
            quotas.clone(),
        );
        permit_queues.hear_hints(&waiting);
        let history_hub = HistoryHub::new(Arc::clone(&history), Arc::clone(&ports.events));
        Self {
            locks,
            shared_locks,
            multi_locks,
            semaphores,
            history,
            admin,
            quotas,
            history_hub,
            clock: ports.clock,
            events: ports.events,
            waiting,
            permit_queues,
            hub,
        }
    }

    /// The use cases over `store` alone: no hints of other processes' releases, the system
    /// clock, no reports, the default limits. For tools and batch jobs that reach the store
    /// directly (`LockGuard`) and want no metrics or audit log of their own.
    pub fn over<S>(store: Arc<S>) -> Self
    where
        S: LockRepository
            + SharedLockRepository
            + MultiLockRepository
            + SemaphoreRepository
            + HistoryRepository
            + AdminRepository
            + LeaseUsage
            + 'static,
    {
        Self::new(
            ServicePorts {
                store: StorePorts::of(store),
                hints: None,
                clock: Arc::new(SystemClock),
                events: Arc::new(NoEvents),
            },
            WaiterLimits::default(),
        )
    }

    /// Acquires a lock, waiting up to `request.wait` for it: at once when the lock is free, has
    /// expired, or the owner already holds it (a re-grant from now, keeping the token). A
    /// waiting acquire joins the lock's queue in this process, first come first served, and is
    /// granted when the lock is released (by any process sharing the store) or expires.
    /// `hung_up` is asked once a grant has arrived after a wait: when the client has gone, that
    /// grant is undone and the answer is [`Acquired::HungUp`]. Must be called inside a tokio
    /// runtime. Every answer is reported to the events port.
    ///
    /// # Errors
    /// [`AcquireError::Store`] when the store failed (nothing was granted);
    /// [`AcquireError::WaitersFull`] when the acquire would wait but the limits are reached;
    /// [`AcquireError::QuotaExceeded`] when it would go over its tenant's `max_live_leases` or
    /// `max_waiters`.
    pub async fn acquire(
        &self,
        request: AcquireRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<Acquired, AcquireError> {
        // Counted and granted under the tenant's gate; a waiting acquire hands the gate back
        // before it joins a queue, whose grant is admitted again when it is made.
        let gate = self.admit_acquire(&request).await?;
        let outcome = match (request.mode, request.wait.is_zero()) {
            (LockMode::Exclusive, true) => self.acquire_now(&request).await?,
            (LockMode::Shared, true) => self.acquire_shared_now(&request).await?,
            (_, false) => self.acquire_waiting(&request, gate, hung_up).await?,
        };
        self.events
            .acquired(&request.tenant, &request.resource, &request.owner, &outcome);
        Ok(outcome)
    }

    /// Admits `request`'s grant under its tenant's `max_live_leases` (a re-grant adds nothing).
    pub(crate) async fn admit_acquire(
        &self,
        request: &AcquireRequest,
    ) -> Result<LeaseGate, AcquireError> {
        self.admit_leases(&request.tenant, 1, || async {
            Ok(u64::from(self.mode_held_by(request).await?.is_some()))
        })
        .await
    }

    pub(crate) async fn acquire_now(
        &self,
        request: &AcquireRequest,
    ) -> Result<Acquired, RepositoryError> {
        let outcome = self
            .locks
            .acquire_with_delay(
                request.tenant.clone(),
                request.resource.clone(),
                request.owner.clone(),
                request.ttl,
                request.value.clone(),
                request.lock_delay,
            )
            .await?;
        Ok(match outcome {
            AcquireOutcome::Granted(lock) => Acquired::Granted {
                lock,
                waited: false,
            },
            AcquireOutcome::Held => self.held_or_mode_mismatch(request).await?,
        })
    }

    /// Joins the lock's queue, except that the holder of the lock is granted again at once, as
    /// without a wait (it must not queue behind waiters for its own lock), and so is a reader
    /// that can share the lock now. `gate` (from [`Self::admit_acquire`]) is held for those
    /// attempts made at once and given back before the wait: the queue admits its own grant.
    pub(crate) async fn acquire_waiting(
        &self,
        request: &AcquireRequest,
        gate: LeaseGate,
        hung_up: impl Fn() -> bool,
    ) -> Result<Acquired, AcquireError> {
        let AcquireRequest {
            tenant,
            resource,
            owner,
            ttl,
            wait,
            mode,
            value,
            lock_delay,
        } = request;
        if *mode == LockMode::Shared && !self.waiting.has_exclusive_waiter(tenant, resource) {
            // Readers do not wait for each other: with no writer waiting here, a reader that can
            // share the lock now gets it now, as without a wait.
            match self.acquire_shared_now(request).await? {
                // Held, or in a lock-delay: wait for it in the queue.
                Acquired::Held | Acquired::Delayed { .. } => {}
                // Counted as a waiting acquire granted (it asked to wait), as the queue's are.
                Acquired::Granted { lock, .. } => {
                    return Ok(Acquired::Granted { lock, waited: true })
                }
                answered => return Ok(answered),
            }
        }
        if self.waiting.has_queue(tenant, resource) {
            // The holder is answered at once: re-granted in its mode, or told it holds the other.
            match self.mode_held_by(request).await? {
                Some(held) if held != *mode => return Ok(Acquired::ModeMismatch),
                Some(_) => {
                    let now = match mode {
                        LockMode::Exclusive => self.acquire_now(request).await?,
                        LockMode::Shared => self.acquire_shared_now(request).await?,
                    };
                    if let answered @ (Acquired::Granted { .. } | Acquired::ModeMismatch) = now {
                        return Ok(answered);
                    }
                }
                None => {}
            }
        }
        let ticket = self
            .waiting
            .enqueue(
                tenant.clone(),
                resource.clone(),
                owner.clone(),
                *ttl,
                *mode,
                value.clone(),
                *lock_delay,
            )
            .map_err(|full| self.waiter_refused(tenant, full))?;
        drop(gate);
        Ok(match ticket.wait(*wait, hung_up).await {
            WaitOutcome::Granted(lock) => Acquired::Granted { lock, waited: true },
            WaitOutcome::TimedOut {
                retry_after_seconds,
            } => Acquired::TimedOut {
                retry_after_seconds,
            },
            WaitOutcome::Failed(error) => return Err(error.into()),
            WaitOutcome::ModeMismatch => Acquired::ModeMismatch,
            WaitOutcome::HungUp => Acquired::HungUp,
            WaitOutcome::QuotaExceeded(exceeded) => {
                return Err(AcquireError::QuotaExceeded(
                    self.over_quota(tenant, exceeded),
                ))
            }
        })
    }

    /// How `resource` is held now: by one exclusive holder, by shared holders, or (`None`) by
    /// no one.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Hold>, RepositoryError> {
        match self.locks.status(tenant.clone(), resource.clone()).await? {
            Some(lock) if lock.owner.is_shared_holders() => {
                self.shared_locks.hold(tenant, resource).await
            }
            lock => Ok(lock.map(Hold::Exclusive)),
        }
    }

    /// Releases `owner`'s live lock on `resource` whichever its mode, reports it, and on
    /// success wakes the lock's waiters in this process.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed: nothing was released (or, after a 503-like
    /// failure, it may have been; see the store's contract).
    pub async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let mut result = self
            .locks
            .release(tenant.clone(), resource.clone(), owner.clone())
            .await?;
        if result == ReleaseResult::Forbidden {
            // Held by someone else, or by readers the caller may be one of: the store decides
            // among every holder, in either mode, at once.
            result = self
                .shared_locks
                .release_held(tenant.clone(), resource.clone(), owner.clone())
                .await?;
        }
        self.events.released(&tenant, &resource, &owner, result);
        if let ReleaseResult::Released(_) = result {
            self.waiting.freed(&tenant, &resource);
        }
        Ok(result)
    }

    /// Renews `owner`'s live lock on `resource` (in either mode) to now + `ttl`, replacing its
    /// value when `value` is `Some`, reports it, and on success lets the lock's waiters in this
    /// process look at the new expiry (a renew may shorten a lease).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        let mut result = self
            .locks
            .renew(
                tenant.clone(),
                resource.clone(),
                owner.clone(),
                ttl,
                value.clone(),
            )
            .await?;
        if result == RenewResult::Forbidden {
            result = self
                .shared_locks
                .renew_held(tenant.clone(), resource.clone(), owner.clone(), ttl, value)
                .await?;
        }
        self.events.renewed(&tenant, &resource, &owner, &result);
        if let RenewResult::Renewed(_) = result {
            self.waiting.lease_changed(&tenant, &resource);
        }
        Ok(result)
    }

    /// A page of `tenant`'s live locks; a lock held in shared mode shows each of its holders
    /// (`query.limit` counts locks, not holders).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        let page = self.locks.list(tenant.clone(), query).await?;
        self.with_shared_holders(tenant, page).await
    }

    /// Ends every wait now, as if its time were up, and makes later acquires answer at once; ends
    /// every observation: for a process that is shutting down, whose graceful stop would
    /// otherwise wait for waiters and observers.
    pub fn close(&self) {
        self.hub.close();
        self.history_hub.close();
        self.waiting.close();
    }

    /// Reports a waiting acquire refused by a limit of waiters, and says why.
    pub(crate) fn waiter_refused(&self, tenant: &Tenant, full: WaitersFull) -> AcquireError {
        match full {
            WaitersFull::Quota { allowed } => AcquireError::QuotaExceeded(self.over_quota(
                tenant,
                QuotaExceeded {
                    limit: crate::quota::Limit::MaxWaiters,
                    allowed,
                },
            )),
            full => {
                self.events.waiter_rejected(tenant, full);
                AcquireError::WaitersFull(full)
            }
        }
    }

    /// How the waiting acquires have fared.
    pub fn waiting_stats(&self) -> WaitingStats {
        WaitingStats {
            live: self.waiting.live_waiters(),
            granted_after_wait: self.waiting.granted_after_wait(),
            timed_out: self.waiting.timed_out(),
            abandoned_grants: self.waiting.abandoned_grants(),
        }
    }

    /// Acquires waiting for the lock on `resource` of `tenant` right now.
    pub fn waiters(&self, tenant: &Tenant, resource: &ResourceName) -> usize {
        self.waiting.waiters(tenant, resource)
    }
}
