//! The multi-lock port: several locks granted together or not at all.

use async_trait::async_trait;

use crate::{LockSet, MultiAcquireOutcome, RepositoryError, Tenant};

/// The multi-lock operation of a store, on the same locks as its [`crate::LockRepository`] and
/// [`crate::SharedLockRepository`]. MUST be atomic across every process that shares the
/// storage: either every lock of the set is granted at one instant, or none is and nothing
/// changes. Each lock is decided as its single-lock acquire would be (`decide_step`), at one
/// `now` read once every lock of the set is held, and the locks are taken in
/// [`LockSet::in_key_order`], so that two multi-locks never wait for each other in a circle.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MultiLockRepository: Send + Sync {
    /// Grants every lock of `set` to its owner (new grants, or re-grants of leases it holds in
    /// the same mode, with the value given or kept), returning them in request order; or returns
    /// `Unavailable` with every lock that could not be granted, changing nothing.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was granted.
    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError>;
}
