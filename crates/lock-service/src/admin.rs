//! What an admin of a tenant may do that no holder may: end every lease of one name at once
//! (a force-release), reported and recorded with its reason; waiters here look at once.

use lock_domain::{
    FencingToken, ForceReason, LeaseKind, Lock, Owner, Permit, RepositoryError, ResourceName,
    Tenant,
};

use crate::{ForceReleased, LockService};

impl LockService {
    /// Ends every live lease of the lock `resource` (its exclusive holder or every reader) and
    /// returns them (none: nothing was held).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        self.force_release_in(tenant, resource, reason, LeaseKind::Lock)
            .await
    }

    /// Ends the leader's lease of `election`, as [`Self::force_release_lock`].
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release_election(
        &self,
        tenant: Tenant,
        election: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        self.force_release_in(tenant, election, reason, LeaseKind::Election)
            .await
    }

    /// Ends every live grant of the semaphore `name` and returns them.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Permit>, RepositoryError> {
        let ended = self
            .admin
            .force_release_permits(tenant.clone(), name.clone(), reason.clone())
            .await?;
        let owners: Vec<(Owner, FencingToken)> = ended
            .iter()
            .map(|grant| (grant.lease.owner.clone(), grant.lease.fencing_token))
            .collect();
        self.events.force_released(
            &tenant,
            ForceReleased {
                kind: LeaseKind::Semaphore,
                name: &name,
                ended: &owners,
                reason: &reason,
            },
        );
        if !ended.is_empty() {
            self.permit_queues.wake(&tenant, &name);
        }
        Ok(ended)
    }

    async fn force_release_in(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
        kind: LeaseKind,
    ) -> Result<Vec<Lock>, RepositoryError> {
        // An election is a lock in its tenant's election namespace.
        let stored = if kind == LeaseKind::Election {
            tenant.elections()
        } else {
            tenant.clone()
        };
        let ended = self
            .admin
            .force_release_lock(stored.clone(), name.clone(), reason.clone())
            .await?;
        let owners: Vec<(Owner, FencingToken)> = ended
            .iter()
            .map(|lock| (lock.owner.clone(), lock.fencing_token))
            .collect();
        self.events.force_released(
            &tenant,
            ForceReleased {
                kind,
                name: &name,
                ended: &owners,
                reason: &reason,
            },
        );
        if !ended.is_empty() {
            self.waiting.freed(&stored, &name);
        }
        Ok(ended)
    }
}
