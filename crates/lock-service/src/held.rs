//! How a lock is held right now, and what an owner holds of it: asked by the status use cases and
//! the watches, and before a grant that may be a re-grant (which answers at once and adds no lease
//! to its tenant's count). A leaf over the lease port, for the use cases, the waiting queues and
//! the watches alike.

use chrono::{DateTime, Utc};
use lock_domain::{
    shared_row, Grant, Hold, Holding, LeaseOp, LeaseStore, Lock, LockMode, Owner, Place,
    RepositoryError, ResourceName, Tenant,
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

/// A lock's holders as a [`Hold`]: by one exclusive holder, by readers (in token order), or
/// (`None`) by no one.
pub(crate) fn hold_of(holders: &[Grant]) -> Option<Hold> {
    let mut locks: Vec<Lock> = holders.iter().cloned().map(Grant::into_lock).collect();
    match locks.first().map(|lock| lock.mode) {
        None => None,
        Some(LockMode::Exclusive) => Some(Hold::Exclusive(locks.remove(0))),
        Some(LockMode::Shared) => Some(Hold::Shared(locks)),
    }
}

/// The lock as one lease, as a queue of waiters follows it: its exclusive holder's, or for
/// readers one lease from the earliest start to the latest end (owned by nobody that can ask,
/// [`Owner::shared_holders`]).
pub(crate) fn one_lease(resource: &ResourceName, holders: &[Grant]) -> Option<Lock> {
    match hold_of(holders)? {
        Hold::Exclusive(lock) => Some(lock),
        Hold::Shared(readers) => {
            let leases: Vec<_> = readers
                .into_iter()
                .map(|lock| Grant::of_lock(lock).lease)
                .collect();
            let earliest = leases.iter().map(|lease| lease.acquired_at).min()?;
            shared_row(resource, &leases, earliest)
        }
    }
}

/// The mode in which `owner` holds a live lease among `holders` at `now`, if it does.
pub(crate) fn mode_of(holders: &[Grant], owner: &Owner, now: DateTime<Utc>) -> Option<LockMode> {
    holders
        .iter()
        .find(|grant| &grant.lease.owner == owner && grant.lease.is_live_at(now))
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
