//! The shared-lock port over the store's writer: every operation is one [`SharedOp`].

use async_trait::async_trait;
use lock_domain::{
    Hold, LeaseValue, Lock, LockSet, MultiAcquireOutcome, MultiLockRepository, Owner,
    ReleaseResult, RenewResult, RepositoryError, ResourceName, SharedAcquireOutcome,
    SharedLockRepository, Tenant, Ttl,
};

use super::DieselLockRepository;
use crate::shared_locks::{SharedAnswer, SharedOp};

impl DieselLockRepository {
    async fn shared(&self, tenant: Tenant, op: SharedOp) -> Result<SharedAnswer, RepositoryError> {
        self.inner.writer.shared(tenant, op).await
    }
}

/// An answer of another kind than the operation's: a bug in the store.
fn mismatched(answer: SharedAnswer) -> RepositoryError {
    RepositoryError::internal(format!("a shared-lock operation answered {answer:?}"))
}

#[async_trait]
impl SharedLockRepository for DieselLockRepository {
    async fn acquire_shared(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<SharedAcquireOutcome, RepositoryError> {
        let op = SharedOp::Acquire {
            resource,
            owner,
            ttl,
            value,
        };
        match self.shared(tenant, op).await? {
            SharedAnswer::Acquired(outcome) => Ok(outcome),
            other => Err(mismatched(other)),
        }
    }

    async fn hold(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Hold>, RepositoryError> {
        match self.shared(tenant, SharedOp::Hold { resource }).await? {
            SharedAnswer::Hold(hold) => Ok(hold),
            other => Err(mismatched(other)),
        }
    }

    async fn release_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let hint = (tenant.clone(), resource.clone());
        match self
            .shared(tenant, SharedOp::Release { resource, owner })
            .await?
        {
            SharedAnswer::Released(result) => {
                if let ReleaseResult::Released(_) = result {
                    self.hint_freed(&hint.0, &hint.1);
                }
                Ok(result)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn renew_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        let hint = (tenant.clone(), resource.clone());
        let op = SharedOp::Renew {
            resource,
            owner,
            ttl,
            value,
        };
        match self.shared(tenant, op).await? {
            SharedAnswer::Renewed(result) => {
                // The lock's row may end sooner now: waiters elsewhere must look at it again.
                if let RenewResult::Renewed(_) = result {
                    self.hint_freed(&hint.0, &hint.1);
                }
                Ok(result)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn set_value_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        value: LeaseValue,
    ) -> Result<RenewResult, RepositoryError> {
        let op = SharedOp::SetValue {
            resource,
            owner,
            value,
        };
        match self.shared(tenant, op).await? {
            // The lease's end is unchanged: no waiter anywhere has anything new to look at.
            SharedAnswer::Renewed(result) => Ok(result),
            other => Err(mismatched(other)),
        }
    }

    async fn undo_shared_grant(
        &self,
        tenant: Tenant,
        grant: Lock,
    ) -> Result<bool, RepositoryError> {
        let hint = (tenant.clone(), grant.resource.clone());
        match self.shared(tenant, SharedOp::Undo { grant }).await? {
            SharedAnswer::Undone(undone) => {
                if undone {
                    self.hint_freed(&hint.0, &hint.1);
                }
                Ok(undone)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn record_shared_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: lock_domain::FencingToken,
    ) -> Result<bool, RepositoryError> {
        if !self.inner.record_history {
            return Ok(false);
        }
        let op = SharedOp::RecordExpiry {
            resource,
            owner,
            fencing_token,
        };
        match self.shared(tenant, op).await? {
            SharedAnswer::ExpiryRecorded(recorded) => Ok(recorded),
            other => Err(mismatched(other)),
        }
    }
}

#[async_trait]
impl MultiLockRepository for DieselLockRepository {
    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError> {
        self.inner.writer.acquire_all(tenant, set).await
    }
}
