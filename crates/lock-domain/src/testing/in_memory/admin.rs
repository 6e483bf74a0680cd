//! The reference store's admin operations: every lease of a name ended at once, under the mutex,
//! recorded as force-released.

use super::State;
use crate::{
    shared_lock, ForceReason, HistoryEvent, Lock, Permit, RepositoryError, ResourceName, Tenant,
};

impl State {
    pub(super) fn force_release_lock(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<Lock>, RepositoryError> {
        let state = self;
        state.history.ending = Some((
            HistoryEvent::ForceReleased,
            Some(reason.as_str().to_owned()),
        ));
        let key = (tenant, resource);
        let mut ended = Vec::new();
        if let Some(row) = state.locks.remove(&key) {
            if !row.owner.is_shared_holders() && row.is_live_at(now) {
                ended.push(row);
            }
        }
        state.regranted.remove(&key);
        state.lock_delays.remove(&key);
        for lease in state.shared.remove(&key).unwrap_or_default() {
            state
                .regranted_shared
                .remove(&(key.0.clone(), key.1.clone(), lease.owner.clone()));
            if lease.is_live_at(now) {
                ended.push(shared_lock(&key.1, &lease));
            }
        }
        Ok(ended)
    }

    pub(super) fn force_release_permits(
        &mut self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<Permit>, RepositoryError> {
        let state = self;
        state.history.ending = Some((
            HistoryEvent::ForceReleased,
            Some(reason.as_str().to_owned()),
        ));
        let key = (tenant, name);
        let mut ended = Vec::new();
        for lease in state.semaphores.remove(&key).unwrap_or_default() {
            let owner_key = (key.0.clone(), key.1.clone(), lease.owner.clone());
            state.regranted_permits.remove(&owner_key);
            state.permit_delays.remove(&owner_key);
            if lease.is_live_at(now) {
                ended.push(Permit {
                    name: key.1.clone(),
                    lease,
                });
            }
        }
        Ok(ended)
    }
}
