//! The fence check use cases: is this fencing token a live holder's right now? A read of the
//! lock's or semaphore's live leases, then the domain's verdict, reported by primitive and result.

use lock_domain::{
    check_lock_fence, check_permit_fence, FenceVerdict, FencingToken, Lease, Lock, RepositoryError,
    ResourceName, Tenant,
};

use crate::outcomes::Fenced;
use crate::LockService;

impl LockService {
    /// Whether `token` is the fencing token of a live lease on lock `resource` right now (for a
    /// shared lock, any live holder's); reported as a fence check of a lock.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn check_lock_fence(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        token: FencingToken,
    ) -> Result<FenceVerdict<Lock>, RepositoryError> {
        let hold = self.status(tenant.clone(), resource.clone()).await?;
        let verdict = check_lock_fence(hold, token);
        self.events
            .fence_checked(&tenant, Fenced::Lock, &resource, token, verdict.is_valid());
        Ok(verdict)
    }

    /// Whether `token` is the fencing token of a live grant of semaphore `name` right now (any
    /// holder's); reported as a fence check of a semaphore.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn check_permit_fence(
        &self,
        tenant: Tenant,
        name: ResourceName,
        token: FencingToken,
    ) -> Result<FenceVerdict<Lease>, RepositoryError> {
        let live = self
            .semaphore(tenant.clone(), name.clone())
            .await?
            .map(|state| state.holders)
            .unwrap_or_default();
        let verdict = check_permit_fence(live, token);
        self.events
            .fence_checked(&tenant, Fenced::Semaphore, &name, token, verdict.is_valid());
        Ok(verdict)
    }
}
