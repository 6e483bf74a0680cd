//! The admin port over the store's writer: a force-release is one shared-lock or semaphore
//! operation (`shared_locks::force`, `PermitOp::ForceRelease`), which every writer already runs
//! under the name's lock; other processes hear that the name is free.

use async_trait::async_trait;
use lock_domain::{
    AdminRepository, ForceReason, Lock, Permit, RepositoryError, ResourceName, Tenant,
};

use super::DieselLockRepository;
use crate::semaphores::{PermitAnswer, PermitOp};
use crate::shared_locks::{SharedAnswer, SharedOp};

#[async_trait]
impl AdminRepository for DieselLockRepository {
    async fn force_release_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        let op = SharedOp::ForceRelease {
            resource: resource.clone(),
            reason,
        };
        match self.inner.writer.shared(tenant.clone(), op).await? {
            SharedAnswer::ForceReleased(ended) => {
                if !ended.is_empty() {
                    self.hint_freed(&tenant, &resource);
                }
                Ok(ended)
            }
            other => Err(RepositoryError::internal(format!(
                "a force-release answered {other:?}"
            ))),
        }
    }

    async fn force_release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Permit>, RepositoryError> {
        let op = PermitOp::ForceRelease {
            name: name.clone(),
            reason,
        };
        match self.inner.writer.permits(tenant.clone(), op).await? {
            PermitAnswer::ForceReleased(ended) => {
                if !ended.is_empty() {
                    self.hint_freed_permits(&tenant, &name);
                }
                Ok(ended)
            }
            other => Err(RepositoryError::internal(format!(
                "a force-release answered {other:?}"
            ))),
        }
    }
}
