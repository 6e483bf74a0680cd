//! The service's outcomes, counted in `/metrics` and written to the audit log: this crate's
//! implementation of `lock_service::LockEvents`.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    FencingToken, Lock, Owner, Permit, PermitReleaseResult, PermitRenewResult, ReleaseResult,
    RenewResult, ResourceName, StoreEvents, Tenant, UnheardGrant,
};
use lock_service::{
    Acquired, Campaigned, ElectionReport, Fenced, HoldEnd, Leading, LockEvents, PermitsAcquired,
    Primitive, Trouble, Waited, WaitersFull,
};

use crate::audit;
use crate::metrics::{AcquireMetric, Metrics};

/// Counts every outcome in [`Metrics`] and writes it to the audit log (target `lockd::audit`);
/// background trouble becomes a warning in the log.
pub struct MetricsAndAudit {
    metrics: Arc<Metrics>,
}

impl MetricsAndAudit {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self { metrics }
    }
}

/// What the store did on its own goes to the same audit log as the use cases' outcomes, in the
/// same shape: one author of the audit log.
impl StoreEvents for MetricsAndAudit {
    fn unheard_grant(&self, grant: &UnheardGrant) {
        audit::unheard_grant(grant);
    }

    fn sessions_expired(&self, count: usize) {
        self.metrics
            .sessions_ended(lock_domain::SessionEnd::Expired.as_str(), count);
        tracing::info!(target: "lockd::audit", event = "sessions_expired", count);
    }
}

impl LockEvents for MetricsAndAudit {
    fn acquired(&self, tenant: &Tenant, resource: &ResourceName, owner: &Owner, how: &Acquired) {
        let metric = match how {
            Acquired::Granted { lock, waited } => {
                audit::granted(tenant, lock);
                Some(if *waited {
                    AcquireMetric::WaitedThenGranted
                } else {
                    AcquireMetric::Granted
                })
            }
            Acquired::Held { .. } => {
                audit::denied(tenant, resource, owner);
                Some(AcquireMetric::Held)
            }
            Acquired::ModeMismatch => {
                audit::denied(tenant, resource, owner);
                Some(AcquireMetric::ModeMismatch)
            }
            Acquired::TimedOut { .. } => {
                audit::denied(tenant, resource, owner);
                Some(AcquireMetric::TimedOut)
            }
            Acquired::Delayed { .. } => {
                audit::denied(tenant, resource, owner);
                Some(AcquireMetric::Delayed)
            }
            // Nobody reads this answer; the lock was not left to the gone client.
            Acquired::HungUp => {
                audit::denied(tenant, resource, owner);
                None
            }
        };
        if let Some(metric) = metric {
            self.metrics.acquire_outcome(metric);
        }
    }

    fn released(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: ReleaseResult,
    ) {
        audit::released(tenant, resource, owner, result);
        self.metrics.release_result(&result);
    }

    fn renewed(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: &RenewResult,
    ) {
        audit::renewed(tenant, resource, owner, result);
        self.metrics.renew_result(result);
    }

    fn waiter_rejected(&self, _tenant: &Tenant, full: WaitersFull) {
        self.metrics.waiter_rejected(full == WaitersFull::Tenant);
    }

    fn grant_undone(&self, tenant: &Tenant, lock: &Lock, undone: bool, why: &'static str) {
        audit::grant_undone(tenant, lock, undone, why);
    }

    fn permits_acquired(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        how: &PermitsAcquired,
    ) {
        let (event, outcome, permit) = match how {
            PermitsAcquired::Granted { permit, waited } => (
                "granted",
                if *waited {
                    "waited_then_granted"
                } else {
                    "granted"
                },
                Some(permit),
            ),
            PermitsAcquired::Unavailable { .. } => ("denied", "unavailable", None),
            PermitsAcquired::TimedOut { .. } => ("denied", "timed_out", None),
            PermitsAcquired::LimitMismatch(_) => ("denied", "limit_mismatch", None),
            PermitsAcquired::PermitsMismatch(_) => ("denied", "permits_mismatch", None),
            // Nobody reads this answer; the permits were not left to the gone client.
            PermitsAcquired::HungUp => ("denied", "hung_up", None),
        };
        audit::semaphore(event, tenant, name, owner, permit);
        self.metrics.semaphore_outcome("acquire", outcome);
    }

    fn permits_released(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: PermitReleaseResult,
    ) {
        let outcome = match result {
            PermitReleaseResult::Released(_) => "released",
            PermitReleaseResult::NotFound => "not_found",
        };
        let event = if outcome == "released" {
            "released"
        } else {
            "release_not_found"
        };
        audit::semaphore(event, tenant, name, owner, None);
        self.metrics.semaphore_outcome("release", outcome);
    }

    fn permits_renewed(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: &PermitRenewResult,
    ) {
        match result {
            PermitRenewResult::Renewed(permit) => {
                audit::semaphore("renewed", tenant, name, owner, Some(permit));
                self.metrics.semaphore_outcome("renew", "renewed");
            }
            PermitRenewResult::NotFound => {
                audit::semaphore("renew_not_found", tenant, name, owner, None);
                self.metrics.semaphore_outcome("renew", "not_found");
            }
        }
    }

    fn permit_grant_undone(
        &self,
        tenant: &Tenant,
        permit: &Permit,
        undone: bool,
        why: &'static str,
    ) {
        audit::permit_grant_undone(tenant, permit, undone, why);
    }

    fn fence_checked(
        &self,
        tenant: &Tenant,
        what: Fenced,
        name: &ResourceName,
        token: FencingToken,
        valid: bool,
    ) {
        let primitive = match what {
            Fenced::Lock => "lock",
            Fenced::Semaphore => "semaphore",
            Fenced::Election => "election",
        };
        if !valid {
            audit::fence_stale(tenant, primitive, name, token);
        }
        self.metrics.fence_checked(primitive, valid);
    }

    fn election(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
        candidate: &Owner,
        report: ElectionReport<'_>,
    ) {
        let (operation, outcome, leader) = match report {
            ElectionReport::Campaigned(Campaigned::Elected {
                leader,
                waited,
                new_term,
            }) => {
                if *new_term {
                    self.metrics.election_term_changed();
                }
                (
                    "campaign",
                    if *waited {
                        "waited_then_elected"
                    } else {
                        "elected"
                    },
                    Some(leader),
                )
            }
            ElectionReport::Campaigned(Campaigned::NotElected {
                retry_after_seconds,
                ..
            }) => (
                "campaign",
                if retry_after_seconds.is_some() {
                    "timed_out"
                } else {
                    "not_elected"
                },
                None,
            ),
            ElectionReport::Campaigned(Campaigned::HungUp) => ("campaign", "hung_up", None),
            ElectionReport::Proclaimed(leading) => {
                leading_outcome("proclaim", "proclaimed", leading)
            }
            ElectionReport::Renewed(leading) => leading_outcome("renew", "renewed", leading),
            ElectionReport::Resigned(result) => (
                "resign",
                match result {
                    ReleaseResult::Released(_) => "resigned",
                    ReleaseResult::Forbidden => "not_leader",
                    ReleaseResult::NotFound => "vacant",
                },
                None,
            ),
        };
        audit::election(operation, outcome, tenant, election, candidate, leader);
        self.metrics.election_outcome(operation, outcome);
    }

    fn counted(&self, live_locks: u64, expired_takeovers: u64) {
        self.metrics.set_live_locks(live_locks);
        self.metrics.set_expired_takeovers(expired_takeovers);
    }

    fn force_released(&self, tenant: &Tenant, report: lock_service::ForceReleased<'_>) {
        self.metrics
            .force_released(report.kind.as_str(), report.ended.len());
        audit::force_released(tenant, &report);
    }

    fn session_opened(&self, tenant: &Tenant, session: &lock_domain::Session) {
        tracing::info!(
            target: "lockd::audit",
            event = "session_opened",
            tenant = %tenant,
            session = %session.id,
            owner = %session.owner,
            ttl_seconds = session.ttl.seconds(),
        );
    }

    fn session_kept(&self, _tenant: &Tenant, kept: Option<&Option<lock_domain::Session>>) {
        self.metrics.session_keepalive(match kept {
            Some(Some(_)) => "kept",
            Some(None) => "not_found",
            None => "failed",
        });
    }

    fn session_ended(
        &self,
        tenant: &Tenant,
        session: &lock_domain::Session,
        how: lock_domain::SessionEnd,
        holds: &[lock_domain::SessionHold],
    ) {
        self.metrics.sessions_ended(how.as_str(), 1);
        tracing::info!(
            target: "lockd::audit",
            event = "session_ended",
            tenant = %tenant,
            session = %session.id,
            reason = how.as_str(),
            holds = holds.len(),
        );
    }

    fn sessions_counted(&self, live: u64) {
        self.metrics.set_live_sessions(live);
    }

    fn quota_exceeded(&self, tenant: &Tenant, exceeded: lock_service::QuotaExceeded) {
        self.metrics
            .quota_exceeded(tenant.as_str(), exceeded.limit.key());
        tracing::info!(
            target: "lockd::audit",
            event = "quota_exceeded",
            tenant = %tenant,
            limit = exceeded.limit.key(),
            allowed = exceeded.allowed,
        );
    }

    fn waited(&self, primitive: Primitive, how: Waited, waited: Duration) {
        self.metrics.waited(primitive, how, waited);
    }

    fn contended(&self, primitive: Primitive) {
        self.metrics.contended(primitive);
    }

    fn hold_ended(&self, primitive: Primitive, how: HoldEnd, held: Duration) {
        self.metrics.hold_ended(primitive, how, held);
    }

    fn trouble(&self, trouble: Trouble<'_>) {
        match trouble {
            Trouble::WaitFailed { resource, error } => {
                tracing::warn!(%error, resource = %resource.as_str(), "the store failed for waiting acquires; ending their waits");
            }
            Trouble::UndoFailed { resource, error } => {
                tracing::warn!(%error, resource = %resource.as_str(), "could not undo a grant for a request that is gone; it expires with its lease");
            }
            Trouble::HintsLost { error: Some(error) } => {
                tracing::warn!(%error, "cannot subscribe to hints of released locks; polling");
            }
            Trouble::HintsLost { error: None } => {
                tracing::warn!("the store stopped sending hints of released locks; polling");
            }
            Trouble::CountFailed { error } => {
                self.metrics.live_lock_count_failed();
                tracing::warn!(%error, "counting live locks for /metrics failed");
            }
            Trouble::HistoryFailed { error } => {
                tracing::warn!(%error, "reading the history for the event streams failed; reading again");
            }
        }
    }
}

/// The outcome of an operation only the leader may make, named `done` when it was made.
fn leading_outcome<'a>(
    operation: &'static str,
    done: &'static str,
    leading: &'a Leading,
) -> (&'static str, &'static str, Option<&'a lock_domain::Leader>) {
    match leading {
        Leading::Leader(leader) => (operation, done, Some(leader)),
        Leading::NotLeader => (operation, "not_leader", None),
        Leading::Vacant => (operation, "vacant", None),
    }
}
