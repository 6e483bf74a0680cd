//! The force-release of a lock or an election: what an admin of a tenant may do that no holder
//! may, end every lease of one name at once, reported and recorded with its reason; waiters here
//! look at once. One step for both (an election is a lock in its tenant's election namespace),
//! asked by [`crate::locks::Locks::force_release`] and
//! [`crate::elections::Elections::force_release`] (a semaphore's is its own).

use lock_domain::{
    FencingToken, ForceReason, LeaseKind, Lock, Owner, RepositoryError, ResourceName, Tenant,
};

use crate::core::Core;
use crate::events::ForceReleased;

impl Core {
    pub(crate) async fn force_release_in(
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
