//! The semaphore port over the store's writer: every operation is one [`PermitOp`].

use async_trait::async_trait;
use lock_domain::{
    LeaseValue, ListQuery, Owner, Permit, PermitReleaseResult, PermitRenewResult, PermitRequest,
    RepositoryError, ResourceName, SemaphoreAcquireOutcome, SemaphorePage, SemaphoreRepository,
    SemaphoreState, Tenant, Ttl,
};

use super::DieselLockRepository;
use crate::semaphores::{PermitAnswer, PermitOp};

impl DieselLockRepository {
    async fn permits(&self, tenant: Tenant, op: PermitOp) -> Result<PermitAnswer, RepositoryError> {
        self.inner.writer.permits(tenant, op).await
    }
}

/// An answer of another kind than the operation's: a bug in the store.
fn mismatched(answer: PermitAnswer) -> RepositoryError {
    RepositoryError::internal(format!("a semaphore operation answered {answer:?}"))
}

#[async_trait]
impl SemaphoreRepository for DieselLockRepository {
    async fn acquire_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        request: PermitRequest,
    ) -> Result<SemaphoreAcquireOutcome, RepositoryError> {
        match self
            .permits(tenant, PermitOp::Acquire { name, request })
            .await?
        {
            PermitAnswer::Acquired(outcome) => Ok(outcome),
            other => Err(mismatched(other)),
        }
    }

    /// A read on a pooled connection (not through the writer): an answer for `Retry-After` and
    /// a status's `available_at`, never a decision.
    async fn permits_available_at(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, RepositoryError> {
        let ms = self
            .inner
            .pooled
            .run(move |conn, now_ms| {
                crate::lock_delay::permits_available_at_ms(
                    conn,
                    tenant.as_str(),
                    name.as_str(),
                    now_ms,
                )
                .map_err(crate::error::from_query)
            })
            .await?;
        ms.map(|ms| {
            chrono::DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| RepositoryError::internal(format!("corrupt time {ms}")))
        })
        .transpose()
    }

    async fn semaphore(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<SemaphoreState>, RepositoryError> {
        match self.permits(tenant, PermitOp::Status { name }).await? {
            PermitAnswer::Status(state) => Ok(state),
            other => Err(mismatched(other)),
        }
    }

    async fn release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
    ) -> Result<PermitReleaseResult, RepositoryError> {
        let hint = (tenant.clone(), name.clone());
        match self
            .permits(tenant, PermitOp::Release { name, owner })
            .await?
        {
            PermitAnswer::Released(result) => {
                if let PermitReleaseResult::Released(_) = result {
                    self.hint_freed_permits(&hint.0, &hint.1);
                }
                Ok(result)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn renew_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<PermitRenewResult, RepositoryError> {
        let hint = (tenant.clone(), name.clone());
        let op = PermitOp::Renew {
            name,
            owner,
            ttl,
            value,
        };
        match self.permits(tenant, op).await? {
            PermitAnswer::Renewed(result) => {
                // The grant may be shorter now: waiters elsewhere must look at its new end.
                if let PermitRenewResult::Renewed(_) = result {
                    self.hint_freed_permits(&hint.0, &hint.1);
                }
                Ok(result)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn undo_permit_grant(
        &self,
        tenant: Tenant,
        grant: Permit,
    ) -> Result<bool, RepositoryError> {
        let hint = (tenant.clone(), grant.name.clone());
        match self.permits(tenant, PermitOp::Undo { grant }).await? {
            PermitAnswer::Undone(undone) => {
                if undone {
                    self.hint_freed_permits(&hint.0, &hint.1);
                }
                Ok(undone)
            }
            other => Err(mismatched(other)),
        }
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        match self.permits(tenant, PermitOp::List { query }).await? {
            PermitAnswer::Listed(page) => Ok(page),
            other => Err(mismatched(other)),
        }
    }

    async fn record_permit_expiry(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        fencing_token: lock_domain::FencingToken,
    ) -> Result<bool, RepositoryError> {
        if !self.inner.record_history {
            return Ok(false);
        }
        let op = PermitOp::RecordExpiry {
            name,
            owner,
            fencing_token,
        };
        match self.permits(tenant, op).await? {
            PermitAnswer::ExpiryRecorded(recorded) => Ok(recorded),
            other => Err(mismatched(other)),
        }
    }
}
