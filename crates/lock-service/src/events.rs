//! The outbound port for what happened: every outcome of a use case, for metrics and the audit
//! log. The service reports; an adapter (the HTTP crate's metrics and audit log) decides what to
//! count and write. Reports are synchronous and must be cheap: they run on the request's path.

use std::time::Duration;

use crate::outcomes::{
    Acquired, Campaigned, Fenced, HoldEnd, Leading, PermitsAcquired, Primitive, Waited, WaitersFull,
};
use lock_domain::{
    FencingToken, Lock, Owner, Permit, PermitReleaseResult, PermitRenewResult, ReleaseResult,
    RenewResult, RepositoryError, ResourceName, Tenant,
};

/// What an election operation came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionReport<'a> {
    Campaigned(&'a Campaigned),
    Proclaimed(&'a Leading),
    Renewed(&'a Leading),
    Resigned(ReleaseResult),
}

/// Something went wrong in the background of the use cases: worth a warning in the log, never
/// an answer to anyone.
#[derive(Debug)]
pub enum Trouble<'a> {
    /// The store failed an attempt made for waiting acquires: their waits end with the error.
    WaitFailed {
        resource: &'a ResourceName,
        error: &'a RepositoryError,
    },
    /// A grant nobody will hear of could not be undone: it expires with its lease.
    UndoFailed {
        resource: &'a ResourceName,
        error: &'a RepositoryError,
    },
    /// The store's hints of freed locks stopped, or could not be subscribed to (then `error`):
    /// waiting acquires poll meanwhile.
    HintsLost { error: Option<&'a RepositoryError> },
    /// Counting the live locks failed.
    CountFailed { error: &'a RepositoryError },
    /// Reading the history for the event feed failed: the feed reads again at its next tick.
    HistoryFailed { error: &'a RepositoryError },
}

/// What an admin's force-release ended.
#[derive(Debug, Clone, Copy)]
pub struct ForceReleased<'a> {
    /// What the name is of.
    pub kind: lock_domain::LeaseKind,
    pub name: &'a ResourceName,
    /// The owner and fencing token of each lease ended (none: nothing was held).
    pub ended: &'a [(Owner, FencingToken)],
    pub reason: &'a lock_domain::ForceReason,
}

/// Receives every outcome of the lock use cases.
pub trait LockEvents: Send + Sync {
    /// An acquire was answered (or, for [`Acquired::HungUp`], would have been).
    fn acquired(&self, tenant: &Tenant, resource: &ResourceName, owner: &Owner, how: &Acquired);

    /// A release was answered.
    fn released(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: ReleaseResult,
    );

    /// A renew was answered.
    fn renewed(
        &self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: &Owner,
        result: &RenewResult,
    );

    /// A waiting acquire was refused (429): too many already wait.
    fn waiter_rejected(&self, tenant: &Tenant, full: WaitersFull);

    /// A grant nobody will hear of (its client hung up) was undone (`undone`), or was left
    /// because it was no longer exactly that grant.
    fn grant_undone(&self, tenant: &Tenant, lock: &Lock, undone: bool, why: &'static str);

    /// An acquire of semaphore permits was answered (or, for [`PermitsAcquired::HungUp`],
    /// would have been).
    fn permits_acquired(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        how: &PermitsAcquired,
    );

    /// A release of semaphore permits was answered.
    fn permits_released(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: PermitReleaseResult,
    );

    /// A renew of semaphore permits was answered.
    fn permits_renewed(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
        result: &PermitRenewResult,
    );

    /// A permit grant nobody will hear of (its client hung up) was undone (`undone`), or was
    /// left because it was no longer exactly that grant.
    fn permit_grant_undone(
        &self,
        tenant: &Tenant,
        permit: &Permit,
        undone: bool,
        why: &'static str,
    );

    /// A fence check of `token` on `name` was answered: the token was a live holder's
    /// (`valid`) or not.
    fn fence_checked(
        &self,
        tenant: &Tenant,
        what: Fenced,
        name: &ResourceName,
        token: FencingToken,
        valid: bool,
    );

    /// An election operation of `candidate` on `election` was answered (or, for a campaign that
    /// hung up, would have been).
    fn election(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
        candidate: &Owner,
        report: ElectionReport<'_>,
    );

    /// The live locks of every tenant were counted, and the expired takeovers read.
    fn counted(&self, live_locks: u64, expired_takeovers: u64);

    /// See [`Trouble`].
    fn trouble(&self, trouble: Trouble<'_>);
    /// An admin force-released every lease of a name (of the tenant's, for an election).
    fn force_released(&self, _tenant: &Tenant, _report: ForceReleased<'_>) {}

    /// A session was opened.
    fn session_opened(&self, _tenant: &Tenant, _session: &lock_domain::Session) {}

    /// A keepalive was answered: the session as it is now, `None` when it was not live (or the
    /// store failed).
    fn session_kept(&self, _tenant: &Tenant, _kept: Option<&Option<lock_domain::Session>>) {}

    /// The live sessions of every tenant were counted (the background count).
    fn sessions_counted(&self, _live: u64) {}

    /// A session was ended (`how`: closed or forced), with these holds.
    fn session_ended(
        &self,
        _tenant: &Tenant,
        _session: &lock_domain::Session,
        _how: lock_domain::SessionEnd,
        _holds: &[lock_domain::SessionHold],
    ) {
    }

    /// A request was refused (429) because it would go over a limit of its tenant.
    fn quota_exceeded(&self, _tenant: &Tenant, _exceeded: crate::QuotaExceeded) {}

    /// An acquire of `primitive` that asked to wait (`wait_seconds` > 0) was answered `how`,
    /// `waited` after it arrived (a grant at once included). Not reported when the store failed.
    fn waited(&self, _primitive: Primitive, _how: Waited, _waited: Duration) {}

    /// An acquire of `primitive` found its place held by another holder: refused for it, or
    /// waiting for it (whether then granted, timed out or gone). Reported once an acquire.
    fn contended(&self, _primitive: Primitive) {}

    /// A hold of `primitive` ended `how`, `held` after its grant (or its owner's last re-grant).
    fn hold_ended(&self, _primitive: Primitive, _how: HoldEnd, _held: Duration) {}
}

/// Reports nowhere: for tests and tools that want no metrics and no audit log.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl LockEvents for NoEvents {
    fn acquired(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &Acquired) {}
    fn released(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: ReleaseResult) {}
    fn renewed(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &RenewResult) {}
    fn waiter_rejected(&self, _: &Tenant, _: WaitersFull) {}
    fn grant_undone(&self, _: &Tenant, _: &Lock, _: bool, _: &'static str) {}
    fn permits_acquired(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &PermitsAcquired) {}
    fn permits_released(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: PermitReleaseResult) {}
    fn permits_renewed(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &PermitRenewResult) {}
    fn permit_grant_undone(&self, _: &Tenant, _: &Permit, _: bool, _: &'static str) {}
    fn fence_checked(&self, _: &Tenant, _: Fenced, _: &ResourceName, _: FencingToken, _: bool) {}
    fn election(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: ElectionReport<'_>) {}
    fn counted(&self, _: u64, _: u64) {}
    fn trouble(&self, _: Trouble<'_>) {}
}
