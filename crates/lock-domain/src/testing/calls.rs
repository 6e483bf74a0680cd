//! One-line calls of the lease port for tests: each builds one [`LeaseOp`], sends it through
//! [`LeaseStore::apply`] and answers in the primitive's own types, so that a test reads as the
//! use case it checks while every call goes through the one seam. A refusal comes as the
//! primitive's refusal; a test that checks why a store refused calls `apply` itself.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    AcquireOutcome, Claim, FencingToken, ForceReason, Grant, Hold, LeaseOp, LeaseOutcome,
    LeaseStore, LeaseTerms, LeaseValue, ListPage, ListQuery, Lock, LockDelay, LockSet,
    MultiAcquireOutcome, Owner, Permit, PermitReleaseResult, PermitRenewResult, PermitRequest,
    Place, Refusal, ReleaseResult, RenewResult, RepositoryError, ResourceName,
    SemaphoreAcquireOutcome, SemaphoreState, SharedAcquireOutcome, Tenant, Ttl,
};

fn terms(owner: Owner, ttl: Ttl, value: Option<LeaseValue>, lock_delay: LockDelay) -> LeaseTerms {
    LeaseTerms {
        owner,
        ttl,
        value,
        lock_delay,
    }
}

/// A lock's holders as a [`Hold`], or `None` when nobody holds it.
pub fn hold_of_grants(holders: Vec<Grant>) -> Option<Hold> {
    crate::Holding {
        holders,
        delayed_until: None,
    }
    .hold()
}

/// The calls, for every lease store.
#[async_trait]
pub trait LeaseCalls: LeaseStore {
    /// How `place` is held now.
    async fn look(&self, tenant: Tenant, place: Place) -> Result<crate::Holding, RepositoryError> {
        self.apply(tenant, LeaseOp::Look(place)).await?.looked()
    }

    async fn acquire_with_delay(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    ) -> Result<AcquireOutcome, RepositoryError> {
        let op = LeaseOp::Acquire {
            place: Place::Lock(resource),
            claim: Claim::Exclusive,
            terms: terms(owner, ttl, value, lock_delay),
        };
        Ok(match self.apply(tenant, op).await?.acquired()? {
            Ok(grant) => AcquireOutcome::Granted(grant.into_lock()),
            Err(_) => AcquireOutcome::Held,
        })
    }

    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<AcquireOutcome, RepositoryError> {
        self.acquire_with_delay(tenant, resource, owner, ttl, value, LockDelay::NONE)
            .await
    }

    /// The live lock as one lease: the exclusive holder's, or for readers the one lease that
    /// stands for them all (from the earliest start to the latest end, with the largest token,
    /// owned by [`Owner::shared_holders`]).
    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Lock>, RepositoryError> {
        let holding = self.look(tenant, Place::Lock(resource.clone())).await?;
        Ok(holding.one_lease(&resource))
    }

    async fn statuses(
        &self,
        locks: Vec<(Tenant, ResourceName)>,
    ) -> Result<Vec<Option<Lock>>, RepositoryError> {
        let resources: Vec<ResourceName> = locks.iter().map(|(_, r)| r.clone()).collect();
        let places = locks
            .into_iter()
            .map(|(tenant, resource)| (tenant, Place::Lock(resource)))
            .collect();
        Ok(self
            .look_many(places)
            .await?
            .iter()
            .zip(&resources)
            .map(|(holding, resource)| holding.one_lease(resource))
            .collect())
    }

    async fn available_at(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        let holding = self.look(tenant, Place::Lock(resource)).await?;
        Ok(holding.delayed_until)
    }

    async fn hold(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Hold>, RepositoryError> {
        let holding = self.look(tenant, Place::Lock(resource)).await?;
        Ok(hold_of_grants(holding.holders))
    }

    /// Releases `owner`'s lease on the lock, whichever its mode.
    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let op = LeaseOp::Release {
            place: Place::Lock(resource),
            owner,
        };
        self.apply(tenant, op).await?.released()
    }

    async fn release_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        self.release(tenant, resource, owner).await
    }

    /// Renews `owner`'s lease on the lock, whichever its mode.
    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        let op = LeaseOp::Renew {
            place: Place::Lock(resource),
            owner,
            ttl,
            value,
        };
        self.apply(tenant, op).await?.renewed_lock()
    }

    async fn renew_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        self.renew(tenant, resource, owner, ttl, value).await
    }

    async fn set_value_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        value: LeaseValue,
    ) -> Result<RenewResult, RepositoryError> {
        let op = LeaseOp::SetValue {
            place: Place::Lock(resource),
            owner,
            value,
        };
        self.apply(tenant, op).await?.renewed_lock()
    }

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        self.apply(tenant, LeaseOp::Undo(Grant::of_lock(grant)))
            .await?
            .undone()
    }

    async fn undo_shared_grant(
        &self,
        tenant: Tenant,
        grant: Lock,
    ) -> Result<bool, RepositoryError> {
        self.undo_grant(tenant, grant).await
    }

    async fn record_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
    ) -> Result<bool, RepositoryError> {
        let op = LeaseOp::RecordExpiry {
            place: Place::Lock(resource),
            owner,
            fencing_token,
        };
        self.apply(tenant, op).await?.expiry_recorded()
    }

    async fn record_shared_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
    ) -> Result<bool, RepositoryError> {
        self.record_expiry(tenant, resource, owner, fencing_token)
            .await
    }

    async fn list(&self, tenant: Tenant, query: ListQuery) -> Result<ListPage, RepositoryError> {
        self.list_locks(tenant, query).await
    }

    async fn acquire_shared(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<SharedAcquireOutcome, RepositoryError> {
        let op = LeaseOp::Acquire {
            place: Place::Lock(resource),
            claim: Claim::Shared,
            terms: terms(owner, ttl, value, LockDelay::NONE),
        };
        Ok(match self.apply(tenant, op).await?.acquired()? {
            Ok(grant) => SharedAcquireOutcome::Granted(grant.into_lock()),
            Err(Refusal::ModeMismatch(_)) => SharedAcquireOutcome::ModeMismatch,
            Err(_) => SharedAcquireOutcome::Held,
        })
    }

    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError> {
        Ok(
            match self
                .apply(tenant, LeaseOp::AcquireAll(set))
                .await?
                .acquired_all()?
            {
                Ok(grants) => {
                    MultiAcquireOutcome::Granted(grants.into_iter().map(Grant::into_lock).collect())
                }
                Err(Refusal::SetUnavailable(names)) => MultiAcquireOutcome::Unavailable(names),
                Err(other) => {
                    return Err(RepositoryError::internal(format!(
                        "a set's acquire refused with {other:?}"
                    )))
                }
            },
        )
    }

    async fn acquire_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        request: PermitRequest,
    ) -> Result<SemaphoreAcquireOutcome, RepositoryError> {
        let limit = request.limit;
        let op = LeaseOp::Acquire {
            place: Place::Semaphore(name),
            claim: request.claim(),
            terms: request.terms,
        };
        Ok(match self.apply(tenant, op).await?.acquired()? {
            Ok(grant) => SemaphoreAcquireOutcome::Granted(grant.into_permit()),
            Err(Refusal::Held { available, .. }) => {
                SemaphoreAcquireOutcome::Unavailable { limit, available }
            }
            Err(Refusal::LimitMismatch(limit)) => SemaphoreAcquireOutcome::LimitMismatch(limit),
            Err(Refusal::PermitsMismatch(held)) => SemaphoreAcquireOutcome::PermitsMismatch(held),
            Err(other) => {
                return Err(RepositoryError::internal(format!(
                    "a semaphore refused with {other:?}"
                )))
            }
        })
    }

    async fn permits_available_at(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        let holding = self.look(tenant, Place::Semaphore(name)).await?;
        Ok(holding.delayed_until)
    }

    async fn semaphore(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<SemaphoreState>, RepositoryError> {
        let holding = self.look(tenant, Place::Semaphore(name.clone())).await?;
        let Some(first) = holding.holders.first() else {
            return Ok(None);
        };
        Ok(Some(SemaphoreState {
            name,
            limit: first.lease.capacity,
            holders: holding
                .holders
                .into_iter()
                .map(|grant| grant.lease)
                .collect(),
        }))
    }

    async fn release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
    ) -> Result<PermitReleaseResult, RepositoryError> {
        let op = LeaseOp::Release {
            place: Place::Semaphore(name),
            owner,
        };
        self.apply(tenant, op).await?.released_permit()
    }

    async fn renew_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<PermitRenewResult, RepositoryError> {
        let op = LeaseOp::Renew {
            place: Place::Semaphore(name),
            owner,
            ttl,
            value,
        };
        self.apply(tenant, op).await?.renewed_permit()
    }

    async fn undo_permit_grant(
        &self,
        tenant: Tenant,
        grant: Permit,
    ) -> Result<bool, RepositoryError> {
        self.apply(tenant, LeaseOp::Undo(Grant::of_permit(grant)))
            .await?
            .undone()
    }

    async fn record_permit_expiry(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
    ) -> Result<bool, RepositoryError> {
        let op = LeaseOp::RecordExpiry {
            place: Place::Semaphore(name),
            owner,
            fencing_token,
        };
        self.apply(tenant, op).await?.expiry_recorded()
    }

    async fn force_release_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        let op = LeaseOp::ForceRelease {
            place: Place::Lock(resource),
            reason,
        };
        Ok(self
            .apply(tenant, op)
            .await?
            .force_released()?
            .into_iter()
            .map(Grant::into_lock)
            .collect())
    }

    async fn force_release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Permit>, RepositoryError> {
        let op = LeaseOp::ForceRelease {
            place: Place::Semaphore(name),
            reason,
        };
        Ok(self
            .apply(tenant, op)
            .await?
            .force_released()?
            .into_iter()
            .map(Grant::into_permit)
            .collect())
    }
}

impl<S: LeaseStore + ?Sized> LeaseCalls for S {}

/// The outcome of `apply` when it is a refusal, for tests that check why a store refused.
pub fn refusal(outcome: LeaseOutcome) -> Refusal {
    match outcome {
        LeaseOutcome::Refused(refusal) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}
