//! How a lock is held right now, and what an owner holds of it: asked by the status use cases and
//! the watches, and before a grant that may be a re-grant (which answers at once and adds no lease
//! to its tenant's count). A leaf over the lease port, for the use cases, the waiting queues and
//! the watches alike.

use chrono::{DateTime, Utc};
use lock_domain::{
    Grant, Holding, LeaseOp, LeaseStore, LockMode, Owner, Place, RepositoryError, ResourceName,
    Tenant,
};

/// How the lock on `resource` is held now, in one read.
pub(crate) async fn look(
    leases: &dyn LeaseStore,
    tenant: &Tenant,
    resource: &ResourceName,
) -> Result<Holding, RepositoryError> {
    leases
        .apply(tenant.clone(), LeaseOp::Look(Place::Lock(resource.clone())))
        .await?
        .looked()
}

/// The mode in which `owner` holds a live lease among `holders` at `now`, if it does.
pub(crate) fn mode_of(holders: &[Grant], owner: &Owner, now: DateTime<Utc>) -> Option<LockMode> {
    holders
        .iter()
        .find(|grant| grant.lease.owner.same_holder(owner) && grant.lease.is_live_at(now))
        .and_then(Grant::mode)
}

/// The mode in which `owner` holds the lock on `resource` now, if it does (as the store's acquire
/// would re-grant it).
pub(crate) async fn mode_held(
    leases: &dyn LeaseStore,
    now: DateTime<Utc>,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<Option<LockMode>, RepositoryError> {
    let holding = look(leases, tenant, resource).await?;
    Ok(mode_of(&holding.holders, owner, now))
}
