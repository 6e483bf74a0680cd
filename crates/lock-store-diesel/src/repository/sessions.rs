//! The session port over the store's writer: each operation one transaction (see
//! `crate::sessions`), and a closed or forced session tells waiters elsewhere that its holds'
//! places are free.

use async_trait::async_trait;
use lock_domain::{
    Place, RepositoryError, SessionOp, SessionOutcome, SessionPage, SessionQuery, SessionStore,
    Tenant,
};

use super::DieselLockRepository;

#[async_trait]
impl SessionStore for DieselLockRepository {
    async fn apply_session(
        &self,
        tenant: Tenant,
        op: SessionOp,
    ) -> Result<SessionOutcome, RepositoryError> {
        let outcome = self.inner.writer.apply_session(tenant.clone(), op).await?;
        if let SessionOutcome::Ended { holds, .. } = &outcome {
            for hold in holds {
                let stored = hold.stored_tenant(&tenant);
                match &hold.grant.place {
                    Place::Lock(resource) => self.hint_freed(&stored, resource),
                    Place::Semaphore(name) => self.hint_freed_permits(&stored, name),
                }
            }
        }
        Ok(outcome)
    }

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError> {
        self.inner.writer.list_sessions(tenant, query).await
    }

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        self.inner.writer.live_sessions(tenant).await
    }
}
