//! Lock-delay in the use cases: when a lock or an election that no live lease holds is available
//! again to other owners (the store's `available_at`), and the `Retry-After` that says so.

use chrono::{DateTime, Utc};
use lock_domain::{RepositoryError, ResourceName, Tenant};

use crate::LockService;

impl LockService {
    /// When `resource`, held by no live lease, is available again to other owners than its last
    /// holder: the end of the lock-delay of a lease that ran out, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn available_at(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        self.locks.available_at(tenant, resource).await
    }

    /// When the first permits of semaphore `name` kept by grants that ran out (in their
    /// lock-delay) are available again, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn permits_available_at(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        self.semaphores.permits_available_at(tenant, name).await
    }

    /// Whole seconds from now until `until`, rounded up, at least 1: a `Retry-After`.
    pub fn retry_after_seconds(&self, until: DateTime<Utc>) -> u64 {
        seconds_until(until, self.clock.now())
    }
}

/// Whole seconds from `now` until `until`, rounded up, at least 1: a `Retry-After`.
pub(crate) fn seconds_until(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let millis = (until - now).num_milliseconds().max(0);
    u64::try_from(millis).unwrap_or(0).div_ceil(1_000).max(1)
}
