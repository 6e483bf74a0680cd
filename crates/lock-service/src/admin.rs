//! The force-release of a lock or an election: what an admin of a tenant may do that no holder
//! may, end every lease of one name at once, reported and recorded with its reason; waiters here
//! look at once. One step for both (an election is a lock in its tenant's election namespace),
//! asked by [`crate::locks::Locks::force_release`] and
//! [`crate::elections::Elections::force_release`] (a semaphore's is its own).

use lock_domain::{
    FencingToken, ForceReason, Grant, LeaseKind, LeaseOp, Lock, Owner, Place, RepositoryError,
    ResourceName, Tenant,
};

use crate::core::Core;
use crate::events::ForceReleased;
use crate::outcomes::{HoldEnd, Primitive};

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
        let op = LeaseOp::ForceRelease {
            place: Place::Lock(name.clone()),
            reason: reason.clone(),
        };
        let grants = self
            .leases
            .apply(stored.clone(), op)
            .await?
            .force_released()?;
        for grant in &grants {
            let primitive = match kind {
                LeaseKind::Election => Primitive::Election,
                _ => Primitive::of_lock(grant.mode() == Some(lock_domain::LockMode::Shared)),
            };
            self.hold_ended(
                primitive,
                HoldEnd::ForceReleased,
                Some(grant.lease.acquired_at),
            );
        }
        let ended: Vec<Lock> = grants.into_iter().map(Grant::into_lock).collect();
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
