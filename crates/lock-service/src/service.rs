//! [`LockService`]: the handle of the use cases of one process, and the counts they share. The
//! use cases are per primitive, each a view over one [`Core`]: [`LockService::locks`],
//! [`LockService::semaphores`], [`LockService::elections`], [`LockService::history`] and
//! [`LockService::tenants`]; observing a name ([`LockService::observe`], over the watches of
//! `observe.rs`) spans them.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use lock_domain::{LockStore, ResourceName, SystemClock, Tenant};

use crate::core::{Core, ServicePorts, StorePorts};
use crate::elections::Elections;
use crate::events::NoEvents;
use crate::history::History;
use crate::locks::Locks;
use crate::observe::{Observation, Observed};
use crate::quota::OpenError;
use crate::semaphores::Semaphores;
use crate::sessions::Sessions;
use crate::tenants::Tenants;
use crate::waiting::WaiterLimits;

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

/// The use cases of one process. Cheap to clone: clones share the queues of waiting acquires, so
/// build one per process and hand it to every inbound adapter (all HTTP workers, a `LockGuard`):
/// a release through any of them wakes a waiter of any other.
#[derive(Clone)]
pub struct LockService {
    core: Arc<Core>,
}

impl LockService {
    /// The use cases over `ports`, holding at most `limits` waiting acquires at once.
    pub fn new(ports: ServicePorts, limits: WaiterLimits) -> Self {
        Self {
            core: Arc::new(Core::new(ports, limits)),
        }
    }

    /// The use cases over `store` alone: no hints of other processes' releases, the system
    /// clock, no reports, the default limits. For tools and batch jobs that reach the store
    /// directly (`LockGuard`) and want no metrics or audit log of their own.
    pub fn over<S>(store: Arc<S>) -> Self
    where
        S: LockStore + 'static,
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

    /// The use cases of locks, exclusive and shared, one at a time or as a set.
    pub fn locks(&self) -> Locks<'_> {
        Locks { core: &self.core }
    }

    /// The use cases of sessions.
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions { core: &self.core }
    }

    /// The use cases of semaphores.
    pub fn semaphores(&self) -> Semaphores<'_> {
        Semaphores { core: &self.core }
    }

    /// The use cases of elections.
    pub fn elections(&self) -> Elections<'_> {
        Elections { core: &self.core }
    }

    /// The durable history: pages of records and the event feed.
    pub fn history(&self) -> History<'_> {
        History { core: &self.core }
    }

    /// The tenants' limits in force, and what they use of them.
    pub fn tenants(&self) -> Tenants<'_> {
        Tenants { core: &self.core }
    }

    /// Starts observing `name` of `tenant` (an election's name is in the tenant's election
    /// namespace): the live leases now, and every change after. Must be called inside a tokio
    /// runtime.
    ///
    /// # Errors
    /// [`OpenError::QuotaExceeded`] when the tenant has as many observers as its
    /// `max_observers` allows; [`OpenError::Store`] when the first read of the store failed.
    pub async fn observe(
        &self,
        tenant: Tenant,
        what: Observed,
        name: ResourceName,
    ) -> Result<Observation, OpenError> {
        let seat = self.core.observer_seat(&tenant)?;
        let mut observation = self.core.hub.observe(tenant, what, name).await?;
        observation.seat = Some(seat);
        Ok(observation)
    }

    /// How many observers this process has right now.
    pub fn observers(&self) -> u64 {
        self.core.hub.observers()
    }

    /// Ends every wait now, as if its time were up, and makes later acquires answer at once; ends
    /// every observation: for a process that is shutting down, whose graceful stop would
    /// otherwise wait for waiters and observers.
    pub fn close(&self) {
        self.core.hub.close();
        self.core.history_hub.close();
        self.core.waiting.close();
    }

    /// How the waiting acquires have fared.
    pub fn waiting_stats(&self) -> WaitingStats {
        WaitingStats {
            live: self.core.waiting.live_waiters(),
            granted_after_wait: self.core.waiting.granted_after_wait(),
            timed_out: self.core.waiting.timed_out(),
            abandoned_grants: self.core.waiting.abandoned_grants(),
        }
    }

    /// Whole seconds from now until `until`, rounded up, at least 1: a `Retry-After`.
    pub fn retry_after_seconds(&self, until: DateTime<Utc>) -> u64 {
        crate::lock_delay::seconds_until(until, self.core.clock.now())
    }
}
