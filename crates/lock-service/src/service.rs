//! [`LockService`]: the handle of the use cases of one process, and the errors and counts they
//! share. The use cases themselves are per primitive, each a view over one [`Core`]:
//! [`LockService::locks`], [`LockService::semaphores`], [`LockService::elections`],
//! [`LockService::history`] and [`LockService::tenants`]; observing (`observe.rs`) spans them.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use lock_domain::{LockStore, RepositoryError, SystemClock};

use crate::core::{Core, ServicePorts, StorePorts};
use crate::elections::Elections;
use crate::events::NoEvents;
use crate::history::History;
use crate::locks::Locks;
use crate::outcomes::WaitersFull;
use crate::quota::QuotaExceeded;
use crate::semaphores::Semaphores;
use crate::tenants::Tenants;
use crate::waiting::WaiterLimits;

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

    pub(crate) fn core(&self) -> &Core {
        &self.core
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
