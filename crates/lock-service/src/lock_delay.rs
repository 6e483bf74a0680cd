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
}

/// Whole seconds from `now` until `until`, rounded up, at least 1: a `Retry-After`.
pub(crate) fn seconds_until(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let millis = (until - now).num_milliseconds().max(0);
    u64::try_from(millis).unwrap_or(0).div_ceil(1_000).max(1)
}
