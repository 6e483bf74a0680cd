//! The usage port: how many live leases a tenant holds, for its quota of live leases. A port of
//! its own, so a store or a test double implements what it has.

use async_trait::async_trait;

use crate::{RepositoryError, Tenant};

/// A store's count of a tenant's live leases.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LeaseUsage: Send + Sync {
    /// How many leases `tenant` holds live now, by the store's clock, of every kind (its
    /// election namespace, [`Tenant::elections`], included): each exclusive lock and each
    /// election's leader counts one, each reader of a shared lock one,
    /// and each holder of semaphore permits one, whatever its permits. A lease that has run out
    /// (in its lock-delay or not) counts none, nor does any other tenant's. The count is of one
    /// moment: a grant or release that commits just after may change it.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn count_live_leases(&self, tenant: Tenant) -> Result<u64, RepositoryError>;
}
