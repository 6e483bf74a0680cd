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
//!
//! A session is observed the same way (`observe/hub/sessions.rs`, its view in
//! `observe/session_diff.rs`): one watch per session, this process's outcomes under it as facts,
//! a read just after its end, and a read every [`POLL`] for other processes' changes.

mod diff;
mod hub;
mod reads;
mod session_diff;
#[cfg(test)]
mod session_tests;

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    Capacity, FencingToken, Grant, Leader, Lease, LeaseKind, Lock, Owner, Permit,
    PermitReleaseResult, PermitRenewResult, Place, ReleaseResult, RenewResult, ResourceName,
    Session, SessionEnd, SessionHold, Tenant, Weight,
};
use tokio::sync::broadcast;

pub(crate) use diff::Fact;
pub use diff::{Change, Happened, Holding, Shape};
pub(crate) use hub::{Hub, SessionReads};
pub(crate) use reads::ObservedReads;
pub use session_diff::SessionChange;
pub(crate) use session_diff::{HoldKey, SessionFact};

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

/// One change (of a name's leases, or of a session), numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered<C = Change> {
    /// Larger than every id this process gave before.
    pub id: u64,
    pub change: C,
}

/// An observer: what was live when it started (a name's live leases, or a session and its
/// holds), then the changes after it.
#[derive(Debug)]
pub struct Observation<L = Vec<Holding>, C = Change> {
    /// What was live when the observation started: a name's leases in token order, or a session
    /// and its holds.
    pub live: L,
    /// The id of the last change folded into `live` (ids of `changes` are larger).
    pub last_id: u64,
    /// The changes after `live`, in order. It ends (`Closed`) when the service closes (and, for
    /// a session, after its `Ended`); it reports `Lagged` when this observer fell too far
    /// behind, and must then start again.
    pub changes: broadcast::Receiver<Arc<Numbered<C>>>,
    /// Counts this observer while it lives.
    pub(crate) _counted: hub::ObserverCount,
    /// Its place in the tenant's count of observers.
    pub(crate) seat: Option<crate::quota::ObserverSeat>,
}

/// An observer of a session: the session and its holds when it started, then each hold granted
/// or released under it, and the session's end.
pub type SessionObservation = Observation<crate::SessionHolds, SessionChange>;

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

    /// Hands `fact` to the watch of the session `holder` is, if it is one (`tenant`: where the
    /// lease is, an election's in its tenant's election namespace).
    fn session(&self, tenant: &Tenant, holder: &Owner, fact: impl FnOnce() -> SessionFact) {
        if !self.hub.watches_sessions() {
            return;
        }
        if let Some(id) = holder.session() {
            self.hub
                .session_fact(&lock_domain::sessions_tenant(tenant), &id, fact());
        }
    }

    /// A grant of `grant` (of `tenant`'s) to its holder, for the holder's session.
    fn session_grant(&self, tenant: &Tenant, grant: impl FnOnce() -> Grant, holder: &Owner) {
        self.session(tenant, holder, || {
            SessionFact::Holds(SessionHold::of(tenant, grant()))
        });
    }

    /// The end of `holder`'s lease `token` on lock `name` (an election's, in an election
    /// namespace), for the holder's session.
    fn session_lock_end(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        holder: &Owner,
        token: FencingToken,
    ) {
        let kind = if tenant.election_namespace_of().is_some() {
            LeaseKind::Election
        } else {
            LeaseKind::Lock
        };
        self.session(tenant, holder, || {
            SessionFact::Released(HoldKey {
                kind,
                name: name.clone(),
                token,
            })
        });
    }
}

/// An election's leader as the lease its session holds.
fn grant_of_leader(leader: &Leader) -> Grant {
    Grant {
        place: Place::Lock(leader.election.clone()),
        lease: Lease {
            owner: leader.candidate.clone(),
            weight: Weight::EXCLUSIVE,
            capacity: Capacity::LOCK,
            acquired_at: leader.elected_at,
            expires_at: leader.expires_at,
            fencing_token: leader.term,
            value: leader.value.clone(),
        },
    }
}

impl LockEvents for ObservingEvents {
    fn acquired(&self, tenant: &Tenant, resource: &ResourceName, owner: &Owner, how: &Acquired) {
        if let Acquired::Granted { lock, .. } = how {
            self.lock(tenant, resource, Fact::Holds(holding_of_lock(lock)));
            self.session_grant(tenant, || Grant::of_lock(lock.clone()), &lock.owner);
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
            self.session_lock_end(tenant, resource, owner, token);
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
            self.session_lock_end(tenant, &lock.resource, &lock.owner, lock.fencing_token);
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
            let grant = || Grant::of_permit(permit.clone());
            self.session_grant(tenant, grant, &permit.lease.owner);
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
            self.session(tenant, owner, || {
                SessionFact::Released(HoldKey {
                    kind: LeaseKind::Semaphore,
                    name: name.clone(),
                    token,
                })
            });
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
            self.session(tenant, &permit.lease.owner, || {
                SessionFact::Released(HoldKey {
                    kind: LeaseKind::Semaphore,
                    name: permit.name.clone(),
                    token: permit.lease.fencing_token,
                })
            });
        }
        self.inner.permit_grant_undone(tenant, permit, undone, why);
    }

    fn force_released(&self, tenant: &Tenant, report: crate::ForceReleased<'_>) {
        let observed = match report.kind {
            lock_domain::LeaseKind::Lock => Observed::Lock,
            lock_domain::LeaseKind::Semaphore => Observed::Semaphore,
            lock_domain::LeaseKind::Election => Observed::Election,
        };
        for (holder, token) in report.ended {
            self.hub
                .fact(tenant, observed, report.name, Fact::Ended(*token));
            self.session(tenant, holder, || {
                SessionFact::Released(HoldKey {
                    kind: report.kind,
                    name: report.name.clone(),
                    token: *token,
                })
            });
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
        match report {
            ElectionReport::Campaigned(Campaigned::Elected { leader, .. }) => {
                let grant = || grant_of_leader(leader);
                self.session_grant(&tenant.elections(), grant, &leader.candidate);
            }
            ElectionReport::Resigned(ReleaseResult::Released(term)) => {
                self.session_lock_end(&tenant.elections(), election, candidate, term);
            }
            _ => {}
        }
        self.inner.election(tenant, election, candidate, report);
    }

    fn session_opened(&self, tenant: &Tenant, session: &Session) {
        self.inner.session_opened(tenant, session);
    }

    fn session_kept(&self, tenant: &Tenant, kept: Option<&Option<Session>>) {
        if let Some(Some(session)) = kept.filter(|_| self.hub.watches_sessions()) {
            let fact = SessionFact::Kept(session.clone());
            self.hub.session_fact(tenant, &session.id, fact);
        }
        self.inner.session_kept(tenant, kept);
    }

    fn sessions_counted(&self, live: u64) {
        self.inner.sessions_counted(live);
    }

    fn session_ended(
        &self,
        tenant: &Tenant,
        session: &Session,
        how: SessionEnd,
        holds: &[SessionHold],
    ) {
        if self.hub.watches_sessions() {
            let fact = SessionFact::Ended {
                reason: how,
                holds: holds.to_vec(),
            };
            self.hub.session_fact(tenant, &session.id, fact);
        }
        self.inner.session_ended(tenant, session, how, holds);
    }

    fn counted(&self, live_locks: u64, expired_takeovers: u64) {
        self.inner.counted(live_locks, expired_takeovers);
    }

    fn trouble(&self, trouble: Trouble<'_>) {
        self.inner.trouble(trouble);
    }

    fn waited(&self, primitive: crate::Primitive, how: crate::Waited, waited: std::time::Duration) {
        self.inner.waited(primitive, how, waited);
    }

    fn contended(&self, primitive: crate::Primitive) {
        self.inner.contended(primitive);
    }

    fn hold_ended(
        &self,
        primitive: crate::Primitive,
        how: crate::HoldEnd,
        held: std::time::Duration,
    ) {
        self.inner.hold_ended(primitive, how, held);
    }
}
