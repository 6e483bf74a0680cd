//! What a guard holds, a lock or a grant of semaphore permits, and how each is renewed and
//! released through the service.

use lock_domain::{
    Owner, PermitReleaseResult, PermitRenewResult, ReleaseResult, RenewResult, RepositoryError,
    ResourceName, Ttl,
};
use lock_service::LockService;

use crate::GuardSettings;

/// What a guard holds.
#[derive(Debug, Clone)]
pub(super) enum Held {
    Lock(ResourceName),
    Permits(ResourceName),
}

impl Held {
    pub(super) fn name(&self) -> &ResourceName {
        match self {
            Held::Lock(name) | Held::Permits(name) => name,
        }
    }

    /// Renews for `ttl`: `Some(true)` renewed, `Some(false)` lost (not ours any more).
    pub(super) async fn renew(
        &self,
        service: &LockService,
        settings: &GuardSettings,
        owner: &Owner,
        ttl: Ttl,
    ) -> Result<bool, RepositoryError> {
        let tenant = settings.tenant.clone();
        Ok(match self {
            Held::Lock(resource) => matches!(
                service
                    .locks()
                    .renew(tenant, resource.clone(), owner.clone(), ttl, None)
                    .await?,
                RenewResult::Renewed(_)
            ),
            Held::Permits(name) => matches!(
                service
                    .semaphores()
                    .renew(tenant, name.clone(), owner.clone(), ttl, None)
                    .await?,
                PermitRenewResult::Renewed(_)
            ),
        })
    }

    pub(super) async fn release(
        self,
        service: LockService,
        settings: GuardSettings,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let tenant = settings.tenant;
        Ok(match self {
            Held::Lock(resource) => service.locks().release(tenant, resource, owner).await?,
            Held::Permits(name) => match service.semaphores().release(tenant, name, owner).await? {
                PermitReleaseResult::Released(token) => ReleaseResult::Released(token),
                PermitReleaseResult::NotFound => ReleaseResult::NotFound,
            },
        })
    }
}
