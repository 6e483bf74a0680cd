//! How a lock is held right now, and what an owner holds of it: asked by the status use cases and
//! the watches, and before a grant that may be a re-grant (which answers at once and adds no lease
//! to its tenant's count). A leaf over the store's ports, for the use cases, the waiting queues
//! and the watches alike.

use lock_domain::{
    decide_acquire, AcquireDecision, Clock, Hold, LockMode, LockRepository, Owner, RepositoryError,
    ResourceName, SharedLockRepository, Tenant,
};

/// How the lock on `resource` is held now: by one exclusive holder, by shared holders, or
/// (`None`) by no one.
pub(crate) async fn hold(
    locks: &dyn LockRepository,
    shared_locks: &dyn SharedLockRepository,
    tenant: &Tenant,
    resource: &ResourceName,
) -> Result<Option<Hold>, RepositoryError> {
    match locks.status(tenant.clone(), resource.clone()).await? {
        Some(lock) if lock.owner.is_shared_holders() => {
            shared_locks.hold(tenant.clone(), resource.clone()).await
        }
        lock => Ok(lock.map(Hold::Exclusive)),
    }
}

/// The mode in which `owner` holds the lock on `resource` now, if it does (as the store's acquire
/// would re-grant it).
pub(crate) async fn mode_held(
    locks: &dyn LockRepository,
    shared_locks: &dyn SharedLockRepository,
    clock: &dyn Clock,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<Option<LockMode>, RepositoryError> {
    let current = locks.status(tenant.clone(), resource.clone()).await?;
    Ok(match current {
        Some(row) if row.owner.is_shared_holders() => {
            let hold = shared_locks.hold(tenant.clone(), resource.clone()).await?;
            hold.and_then(|hold| hold.mode_of(owner))
        }
        current => (decide_acquire(current.as_ref(), owner, clock.now())
            == AcquireDecision::Extend)
            .then_some(LockMode::Exclusive),
    })
}
