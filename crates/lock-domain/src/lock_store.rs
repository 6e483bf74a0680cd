//! [`LockStore`]: a store that implements every port the use cases run over, named once so that
//! whatever takes "a whole store" says so in one word.

use crate::{
    AdminRepository, HistoryRepository, LeaseUsage, LockRepository, MultiLockRepository,
    SemaphoreRepository, SharedLockRepository,
};

/// Every port of the use cases from one store: locks, shared locks, sets, semaphores, history,
/// force-release and the count of live leases. Implemented by every type that implements them
/// all (the reference store, the diesel store); never implemented by hand.
pub trait LockStore:
    LockRepository
    + SharedLockRepository
    + MultiLockRepository
    + SemaphoreRepository
    + HistoryRepository
    + AdminRepository
    + LeaseUsage
{
}

impl<S> LockStore for S where
    S: LockRepository
        + SharedLockRepository
        + MultiLockRepository
        + SemaphoreRepository
        + HistoryRepository
        + AdminRepository
        + LeaseUsage
{
}
