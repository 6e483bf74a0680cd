//! [`Core`]: what every use case shares. The store's ports, the one waiting machinery of every
//! primitive (the queues of locks and of semaphores, and the limits of waiters), the tenants'
//! quotas, the history's feed, the watches of observed names, the clock and the events port.
//! Each primitive's use cases (`locks.rs`, `semaphores.rs`, `elections.rs`, `history.rs`,
//! `tenants.rs`) are a view over one `Core`; [`crate::LockService`] hands them out.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use lock_domain::{
    Clock, FreedHints, HistoryRepository, LeaseStore, LeaseUsage, LockStore, SessionStore, Tenant,
};

use crate::events::LockEvents;
use crate::history::feed::HistoryHub;
use crate::observe::{Hub, ObservedReads, ObservingEvents};
use crate::outcomes::AcquireError;
use crate::outcomes::WaitersFull;
use crate::outcomes::{HoldEnd, Primitive, Waited};
use crate::quota::{QuotaExceeded, Quotas};
use crate::semaphores::queue::PermitQueues;
use crate::waiting::{WaiterLimits, Waiting};

/// The store's ports the use cases run over, one handle each. A store implements them all
/// ([`StorePorts::of`]); a test may put a double of its own in any one place. The one bundle of
/// them: every composition (the binary, [`crate::LockService::over`], the HTTP crate's own) takes
/// it whole.
#[derive(Clone)]
pub struct StorePorts {
    /// Every lease of every primitive: one operation at a time ([`lock_domain::LeaseOp`]).
    pub leases: Arc<dyn LeaseStore>,
    /// The sessions whose holds are leases of the lease port.
    pub sessions: Arc<dyn SessionStore>,
    pub history: Arc<dyn HistoryRepository>,
    /// Counts a tenant's live leases for its quota.
    pub usage: Arc<dyn LeaseUsage>,
}

impl StorePorts {
    /// Every port from one store.
    pub fn of<S>(store: Arc<S>) -> Self
    where
        S: LockStore + 'static,
    {
        Self {
            leases: Arc::clone(&store) as _,
            sessions: Arc::clone(&store) as _,
            history: Arc::clone(&store) as _,
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

/// What every use case shares (see the module's documentation). Built once per process.
pub(crate) struct Core {
    /// The lease port, through which every use case changes and reads leases.
    pub(crate) leases: Arc<dyn LeaseStore>,
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) history: Arc<dyn HistoryRepository>,
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

impl Core {
    /// The use cases over `ports`, holding at most `limits` waiting acquires at once.
    pub(crate) fn new(mut ports: ServicePorts, limits: WaiterLimits) -> Self {
        let StorePorts {
            leases,
            sessions,
            history,
            usage,
        } = ports.store;
        // Every outcome reported also reaches the watches of observed names.
        let hub = Hub::new(
            Arc::clone(&ports.clock),
            ObservedReads {
                leases: Arc::clone(&leases),
            },
        );
        ports.events = Arc::new(ObservingEvents {
            inner: ports.events,
            hub: hub.clone(),
        });
        let quotas = Quotas::new(usage);
        let waiting = Waiting::new(
            Arc::clone(&leases),
            ports.hints,
            Arc::clone(&ports.clock),
            Arc::clone(&ports.events),
            limits,
            quotas.clone(),
        );
        let permit_queues = PermitQueues::new(
            Arc::clone(&leases),
            Arc::clone(&ports.clock),
            Arc::clone(&ports.events),
            waiting.clone(),
            quotas.clone(),
        );
        permit_queues.hear_hints(&waiting);
        let history_hub = HistoryHub::new(Arc::clone(&history), Arc::clone(&ports.events));
        Self {
            leases,
            sessions,
            history,
            quotas,
            history_hub,
            clock: ports.clock,
            events: ports.events,
            waiting,
            permit_queues,
            hub,
        }
    }

    /// Reports the end of a hold of `primitive`, granted at `acquired_at` (by the store's clock;
    /// `None`: the store did not say, and nothing is reported), ended `how` now.
    pub(crate) fn hold_ended(
        &self,
        primitive: Primitive,
        how: HoldEnd,
        acquired_at: Option<DateTime<Utc>>,
    ) {
        if let Some(acquired_at) = acquired_at {
            let held = (self.clock.now() - acquired_at)
                .to_std()
                .unwrap_or_default();
            self.events.hold_ended(primitive, how, held);
        }
    }

    /// Reports an acquire of `primitive` that asked to wait (`wait`), answered `how` after
    /// `arrived`, and whether it found its place held (`contended`); nothing for a store failure.
    pub(crate) fn acquire_measured(
        &self,
        primitive: Primitive,
        wait: Duration,
        arrived: Instant,
        how: Option<Waited>,
        contended: bool,
    ) {
        if contended {
            self.events.contended(primitive);
        }
        if let (false, Some(how)) = (wait.is_zero(), how) {
            self.events.waited(primitive, how, arrived.elapsed());
        }
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
}
