//! Observing a lock, a semaphore or an election: the current live leases, then one change for
//! every lease that starts, changes or ends, without holding a worker or a database connection
//! per observer.
//!
//! Every observed name has one watch in this process (`observe/hub.rs`), shared by all of its
//! observers; the watch ends with its last observer. It learns of changes three ways:
//!
//! - this process's own operations, exactly and at once: the service reports every outcome to
//!   its events port, and [`ObservingEvents`] hands each to the watch of its name as a fact
//!   (`observe/diff.rs`);
//! - an expiry: the watch reads again just after the earliest live lease's `expires_at`;
//! - other processes sharing the store: every [`POLL`] one task reads every observed lock and
//!   election of this process in one round trip (and each observed semaphore), so their changes
//!   arrive within that plus a read. Changes that another process makes and undoes between two
//!   reads are not seen.
//!
//! Each change gets an id that only grows in this process (and starts from the clock, so that a
//! restarted or other process continues above it).

mod diff;
mod hub;
mod reads;

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    FencingToken, Lease, Lock, Owner, Permit, PermitReleaseResult, PermitRenewResult,
    ReleaseResult, RenewResult, ResourceName, Tenant,
};
use tokio::sync::broadcast;

pub(crate) use diff::Fact;
pub use diff::{Change, Happened, Holding, Shape};
pub(crate) use hub::Hub;
pub(crate) use reads::ObservedReads;

use crate::events::{ElectionReport, LockEvents, Trouble};
use crate::outcomes::{Acquired, Fenced, PermitsAcquired, WaitersFull};
use crate::outcomes::{Campaigned, Leading};

/// How often a watch reads again to see other processes' changes.
pub const POLL: Duration = Duration::from_millis(400);

/// What is observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Observed {
    Lock,
    Semaphore,
    Election,
}

/// One change, numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// Larger than every id this process gave before.
    pub id: u64,
    pub change: Change,
}

/// An observer: the live leases when it started, then the changes after them.
#[derive(Debug)]
pub struct Observation {
    /// The live leases when the observation started, in token order.
    pub live: Vec<Holding>,
    /// The id of the last change folded into `live` (ids of `changes` are larger).
    pub last_id: u64,
    /// The changes after `live`, in order. It ends (`Closed`) when the service closes; it
    /// reports `Lagged` when this observer fell too far behind, and must then start again.
    pub changes: broadcast::Receiver<Arc<Numbered>>,
    /// Counts this observer while it lives.
    pub(crate) _counted: hub::ObserverCount,
    /// Its place in the tenant's count of observers.
    pub(crate) seat: Option<crate::quota::ObserverSeat>,
}

pub(crate) fn holding_of_lock(lock: &Lock) -> Holding {
    Holding {
        owner: lock.owner.clone(),
        token: lock.fencing_token,
        acquired_at: lock.acquired_at,
        expires_at: lock.expires_at,
        value: lock.value.clone(),
        shape: Shape::Lock(lock.mode),
    }
}

pub(crate) fn holding_of_lease(lease: &Lease) -> Holding {
    Holding {
        owner: lease.owner.clone(),
        token: lease.fencing_token,
        acquired_at: lease.acquired_at,
        expires_at: lease.expires_at,
        value: lease.value.clone(),
        shape: Shape::Permits {
            permits: lease.weight.get(),
            limit: lease.capacity.get(),
        },
    }
}

/// The service's events port, with every outcome also handed to the watches of this process as
/// a fact, before it is reported on to `inner`.
pub(crate) struct ObservingEvents {
    pub inner: Arc<dyn LockEvents>,
    pub hub: Hub,
}

impl ObservingEvents {
    fn lock(&self, tenant: &Tenant, resource: &ResourceName, fact: Fact) {
        match tenant.election_namespace_of() {
            Some(owner) => self.hub.fact(&owner, Observed::Election, resource, fact),
            None => self.hub.fact(tenant, Observed::Lock, resource, fact),
        }
    }
}

impl LockEvents for ObservingEvents {
    fn acquired(&self, tenant: &Tenant, resource: &ResourceName, owner: &Owner, how: &Acquired) {
        if let Acquired::Granted { lock, .. } = how {
            self.lock(tenant, resource, Fact::Holds(holding_of_lock(lock)));
        }
        self.inner.acquired(tenant, resource, owner, how);
    }

    fn released(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: ReleaseResult,
    ) {
        if let ReleaseResult::Released(token) = result {
            self.lock(tenant, resource, Fact::Ended(token));
        }
        self.inner.released(tenant, resource, owner, result);
    }

    fn renewed(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: &RenewResult,
    ) {
        if let RenewResult::Renewed(lock) = result {
            self.lock(tenant, resource, Fact::Holds(holding_of_lock(lock)));
        }
        self.inner.renewed(tenant, resource, owner, result);
    }

    fn waiter_rejected(&self, tenant: &Tenant, full: WaitersFull) {
        self.inner.waiter_rejected(tenant, full);
    }

    fn grant_undone(&self, tenant: &Tenant, lock: &Lock, undone: bool, why: &'static str) {
        if undone {
            self.lock(tenant, &lock.resource, Fact::Ended(lock.fencing_token));
        }
        self.inner.grant_undone(tenant, lock, undone, why);
    }

    fn permits_acquired(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        how: &PermitsAcquired,
    ) {
        if let PermitsAcquired::Granted { permit, .. } = how {
            let fact = Fact::Holds(holding_of_lease(&permit.lease));
            self.hub.fact(tenant, Observed::Semaphore, name, fact);
        }
        self.inner.permits_acquired(tenant, name, owner, how);
    }

    fn permits_released(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: PermitReleaseResult,
    ) {
        if let PermitReleaseResult::Released(token) = result {
            self.hub
                .fact(tenant, Observed::Semaphore, name, Fact::Ended(token));
        }
        self.inner.permits_released(tenant, name, owner, result);
    }

    fn permits_renewed(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: &PermitRenewResult,
    ) {
        if let PermitRenewResult::Renewed(permit) = result {
            let fact = Fact::Holds(holding_of_lease(&permit.lease));
            self.hub.fact(tenant, Observed::Semaphore, name, fact);
        }
        self.inner.permits_renewed(tenant, name, owner, result);
    }

    fn permit_grant_undone(
        &self,
        tenant: &Tenant,
        permit: &Permit,
        undone: bool,
        why: &'static str,
    ) {
        if undone {
            let fact = Fact::Ended(permit.lease.fencing_token);
            self.hub
                .fact(tenant, Observed::Semaphore, &permit.name, fact);
        }
        self.inner.permit_grant_undone(tenant, permit, undone, why);
    }

    fn force_released(&self, tenant: &Tenant, report: crate::ForceReleased<'_>) {
        let observed = match report.kind {
            lock_domain::LeaseKind::Lock => Observed::Lock,
            lock_domain::LeaseKind::Semaphore => Observed::Semaphore,
            lock_domain::LeaseKind::Election => Observed::Election,
        };
        for (_, token) in report.ended {
            self.hub
                .fact(tenant, observed, report.name, Fact::Ended(*token));
        }
        self.inner.force_released(tenant, report);
    }

    fn quota_exceeded(&self, tenant: &Tenant, exceeded: crate::QuotaExceeded) {
        self.inner.quota_exceeded(tenant, exceeded);
    }

    fn fence_checked(
        &self,
        tenant: &Tenant,
        what: Fenced,
        name: &ResourceName,
        token: FencingToken,
        valid: bool,
    ) {
        self.inner.fence_checked(tenant, what, name, token, valid);
    }

    fn election(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
        candidate: &Owner,
        report: ElectionReport<'_>,
    ) {
        let fact = match report {
            ElectionReport::Campaigned(Campaigned::Elected { leader, .. })
            | ElectionReport::Proclaimed(Leading::Leader(leader))
            | ElectionReport::Renewed(Leading::Leader(leader)) => {
                Some(Fact::Holds(hub::holding_of_leader(leader)))
            }
            ElectionReport::Resigned(ReleaseResult::Released(term)) => Some(Fact::Ended(term)),
            _ => None,
        };
        if let Some(fact) = fact {
            self.hub.fact(tenant, Observed::Election, election, fact);
        }
        self.inner.election(tenant, election, candidate, report);
    }

    fn counted(&self, live_locks: u64, expired_takeovers: u64) {
        self.inner.counted(live_locks, expired_takeovers);
    }

    fn trouble(&self, trouble: Trouble<'_>) {
        self.inner.trouble(trouble);
    }
}
