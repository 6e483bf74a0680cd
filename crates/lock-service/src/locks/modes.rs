//! The use cases of shared (read/write) locks beside the exclusive ones: a shared acquire that
//! does not barge in ahead of waiting writers, and what a caller holds already (answered at
//! once, never queued behind waiters for its own lock).

use lock_domain::{Claim, LeaseOp, LockMode, Place, RepositoryError};

use crate::held::mode_held;
use crate::locks::{AcquireRequest, Locks};
use crate::outcomes::Acquired;

impl Locks<'_> {
    /// A shared acquire that does not wait: refused at once while an exclusive acquire waits
    /// for the lock in this process (it is not overtaken), else decided by the store.
    pub(crate) async fn acquire_shared_now(
        &self,
        request: &AcquireRequest,
    ) -> Result<Acquired, crate::AcquireError> {
        let AcquireRequest {
            tenant, resource, ..
        } = request;
        if self.core.waiting.has_exclusive_waiter(tenant, resource) {
            // Only the lock's own readers may pass the waiting writer (a re-grant); its writer
            // asking to read is told so.
            match self.mode_held_by(request).await? {
                Some(LockMode::Shared) => {}
                Some(LockMode::Exclusive) => return Ok(Acquired::ModeMismatch),
                None => return Ok(Acquired::Held { holders: vec![] }),
            }
        }
        let op = LeaseOp::Acquire {
            place: Place::Lock(resource.clone()),
            claim: Claim::Shared,
            terms: request.terms.clone(),
        };
        let outcome = self.core.leases.apply(tenant.clone(), op).await?;
        let acquired = crate::outcomes::acquired(outcome)?;
        Ok(crate::locks::answer(acquired, false, self.core.clock.now()))
    }

    /// The mode in which the caller holds the lock right now, if it does: a caller that holds
    /// it is answered at once (a re-grant, or a mode mismatch), never queued behind waiters for
    /// its own lock.
    pub(crate) async fn mode_held_by(
        &self,
        request: &AcquireRequest,
    ) -> Result<Option<LockMode>, RepositoryError> {
        mode_held(
            &*self.core.leases,
            self.core.clock.now(),
            &request.tenant,
            &request.resource,
            &request.terms.owner,
        )
        .await
    }
}

#[cfg(test)]
mod tests;
