//! Why a guard (a [`crate::LockGuard`] or a [`crate::SessionGuard`]) could not be had, could
//! not take something, or could not give it up.

use std::time::Duration;

use lock_domain::{LockSetError, RepositoryError, ResourceName};
use lock_service::{AcquireError, OpenSessionError};

/// Why a guard could not be had, take a hold, or release.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// Another owner holds a live lock on the resource (or a lock-delay keeps it, or the caller
    /// holds it in the other mode).
    #[error("the lock on {0} is held by another owner")]
    Held(ResourceName),
    /// Some locks of a set could not be granted (these): none of the set was.
    #[error("the locks on {} are held by other owners; none of the set was taken", names(.0))]
    SetHeld(Vec<ResourceName>),
    /// A set of locks was not one: empty, over the maximum, or naming a resource twice.
    #[error("not a set of locks: {0}")]
    Set(#[from] LockSetError),
    /// Too few of the semaphore's permits are free.
    #[error("too few permits of semaphore {name} are free ({available} of the limit)")]
    Unavailable { name: ResourceName, available: u64 },
    /// The semaphore's holders use another limit, or this owner holds other permits of it;
    /// nothing changed.
    #[error("semaphore {name}: {why}")]
    Conflict { name: ResourceName, why: String },
    /// Another candidate leads the election (or a lock-delay keeps the office).
    #[error("election {0} is led by another candidate")]
    NotElected(ResourceName),
    /// The repository failed (nothing was granted, or the release is unknown).
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    /// The repository did not answer within the call timeout.
    #[error("the lock repository did not answer within {0:?}")]
    Timeout(Duration),
    /// The service refused to queue a waiting acquire: too many acquires wait already (a
    /// [`crate::LockGuard`]'s acquire does not wait, so only a service with a limit of zero
    /// waiters answers it that).
    #[error("too many acquires are waiting for locks")]
    TooManyWaiters,
    /// The acquire (or the opening of a session) would go over a limit of its tenant, set on
    /// the service (`Tenants::set_limits`): nothing was granted.
    #[error(transparent)]
    QuotaExceeded(#[from] lock_service::QuotaExceeded),
    /// The acquire named a session that is not live: nothing was granted.
    #[error("the session is not live (never opened here, closed, forced or run out)")]
    SessionNotFound,
    /// The [`crate::SessionGuard`]'s session is lost ([`crate::SessionGuard::is_lost`]): it
    /// takes nothing more.
    #[error("the session is lost: it takes nothing more")]
    SessionLost,
    /// The guard's runtime could not be started.
    #[error("cannot start the lock guard's runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl From<AcquireError> for GuardError {
    fn from(error: AcquireError) -> Self {
        match error {
            AcquireError::Store(error) => Self::Repository(error),
            AcquireError::WaitersFull(_) => Self::TooManyWaiters,
            AcquireError::QuotaExceeded(exceeded) => Self::QuotaExceeded(exceeded),
            AcquireError::SessionNotFound => Self::SessionNotFound,
        }
    }
}

impl From<OpenSessionError> for GuardError {
    fn from(error: OpenSessionError) -> Self {
        match error {
            OpenSessionError::Store(error) => Self::Repository(error),
            OpenSessionError::QuotaExceeded(exceeded) => Self::QuotaExceeded(exceeded),
        }
    }
}

fn names(resources: &[ResourceName]) -> String {
    resources
        .iter()
        .map(ResourceName::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
