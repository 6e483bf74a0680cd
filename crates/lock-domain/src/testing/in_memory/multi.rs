//! The reference multi-lock: every lock of the set decided at one instant under the one mutex,
//! then every grant made, or none.

use async_trait::async_trait;

use super::InMemoryLockRepository;
use crate::{
    decide_step, AcquireOutcome, LockMode, LockSet, LockStep, MultiAcquireOutcome,
    MultiLockRepository, RepositoryError, SharedAcquireOutcome, Tenant,
};

#[async_trait]
impl MultiLockRepository for InMemoryLockRepository {
    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError> {
        let now = self.clock.now();
        let mut state = self.state();
        let refused: Vec<_> = set
            .locks()
            .iter()
            .filter(|(resource, mode)| {
                let key = (tenant.clone(), resource.clone());
                let row = state.locks.get(&key);
                let shared = state.shared.get(&key).map(Vec::as_slice).unwrap_or(&[]);
                state.delayed_until(&key, set.owner(), now).is_some()
                    || decide_step(row, shared, set.owner(), *mode, now) == LockStep::Refused
            })
            .map(|(resource, _)| resource.clone())
            .collect();
        if !refused.is_empty() {
            return Ok(MultiAcquireOutcome::Unavailable(refused));
        }
        let mut granted = Vec::with_capacity(set.locks().len());
        for (resource, mode) in set.locks() {
            let key = (tenant.clone(), resource.clone());
            let (owner, ttl, value) = (set.owner().clone(), set.ttl(), set.value().cloned());
            let lock = match mode {
                LockMode::Exclusive => {
                    match state.acquire(key, owner, ttl, value, crate::LockDelay::NONE, now)? {
                        AcquireOutcome::Granted(lock) => lock,
                        AcquireOutcome::Held => {
                            return Err(RepositoryError::internal("a decided grant was refused"))
                        }
                    }
                }
                LockMode::Shared => match state.acquire_shared(key, owner, ttl, value, now)? {
                    SharedAcquireOutcome::Granted(lock) => lock,
                    _ => return Err(RepositoryError::internal("a decided grant was refused")),
                },
            };
            granted.push(lock);
        }
        Ok(MultiAcquireOutcome::Granted(granted))
    }
}
