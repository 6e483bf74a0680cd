//! The reference shared-lock store: the shared decisions applied to a lock's row (the map of
//! locks) and its shared leases, under the one mutex.

use chrono::{DateTime, Utc};

use super::State;
use crate::{
    decide_shared_undo, holder_role, shared_lease, shared_lock, shared_row, HolderRole, LeaseValue,
    Lock, Owner, ReleaseResult, RenewResult, RepositoryError, ResourceName, Tenant, Ttl,
};

type Key = (Tenant, ResourceName);

impl State {
    /// Rewrites the row of `key` from its live shared leases (drops the ended ones): the row
    /// stands for them, or is gone when none is live.
    pub(super) fn rewrite_shared_row(&mut self, key: &Key, now: DateTime<Utc>) {
        let leases = self.shared.entry(key.clone()).or_default();
        leases.retain(|lease| lease.is_live_at(now));
        match shared_row(&key.1, leases, now) {
            Some(row) => {
                self.locks.insert(key.clone(), row);
            }
            None => {
                self.shared.remove(key);
                self.locks.remove(key);
            }
        }
        // The row of shared holders has no lock-delay of its own.
        self.lock_delays.remove(key);
        self.regranted.remove(key);
    }

    /// The shared leases of `key` as the decisions take them: none unless the row is the shared
    /// holders'.
    pub(super) fn shared_of(&self, key: &Key) -> &[crate::Lease] {
        self.shared.get(key).map(Vec::as_slice).unwrap_or(&[])
    }
}

impl State {
    pub(super) fn release_held(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<crate::LeaseOutcome, RepositoryError> {
        let state = self;
        let key = (tenant, resource);
        let role = holder_role(state.locks.get(&key), state.shared_of(&key), &owner, now);
        let acquired_at = match role {
            HolderRole::Exclusive(_) => state.locks.get(&key).map(|lock| lock.acquired_at),
            HolderRole::Shared(token) => state
                .shared_of(&key)
                .iter()
                .find(|lease| lease.fencing_token == token)
                .map(|lease| lease.acquired_at),
            HolderRole::Forbidden | HolderRole::NotFound => None,
        };
        let shared = matches!(role, HolderRole::Shared(_));
        match role {
            HolderRole::Exclusive(_) => {
                state.locks.remove(&key);
                state.lock_delays.remove(&key);
                state.regranted.remove(&key);
            }
            HolderRole::Shared(_) => {
                if let Some(leases) = state.shared.get_mut(&key) {
                    leases.retain(|lease| lease.owner != owner);
                }
                state.rewrite_shared_row(&key, now);
            }
            HolderRole::Forbidden | HolderRole::NotFound => {}
        }
        Ok(match role.release_result() {
            ReleaseResult::Released(fencing_token) => {
                crate::LeaseOutcome::Released(crate::EndedLease {
                    fencing_token,
                    acquired_at,
                    shared,
                })
            }
            other => other.into(),
        })
    }

    pub(super) fn set_value_held(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        value: LeaseValue,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<RenewResult, RepositoryError> {
        let state = self;
        let key = (tenant, resource.clone());
        let role = holder_role(state.locks.get(&key), state.shared_of(&key), &owner, now);
        Ok(match role {
            HolderRole::NotFound => RenewResult::NotFound,
            HolderRole::Forbidden => RenewResult::Forbidden,
            HolderRole::Exclusive(_) => {
                let lock = state
                    .locks
                    .get_mut(&key)
                    .ok_or_else(|| RepositoryError::internal("the lock is gone"))?;
                lock.value = Some(value);
                RenewResult::Renewed(lock.clone())
            }
            HolderRole::Shared(_) => {
                let lease = state
                    .shared
                    .get_mut(&key)
                    .and_then(|leases| leases.iter_mut().find(|lease| lease.owner == owner))
                    .ok_or_else(|| RepositoryError::internal("the lease is gone"))?;
                lease.value = Some(value);
                RenewResult::Renewed(shared_lock(&resource, lease))
            }
        })
    }

    pub(super) fn renew_held(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<RenewResult, RepositoryError> {
        let expires_at = now + ttl.as_time_delta();
        let state = self;
        let key = (tenant, resource.clone());
        let role = holder_role(state.locks.get(&key), state.shared_of(&key), &owner, now);
        Ok(match role {
            HolderRole::NotFound => RenewResult::NotFound,
            HolderRole::Forbidden => RenewResult::Forbidden,
            HolderRole::Exclusive(_) => {
                let lock = state
                    .locks
                    .get_mut(&key)
                    .ok_or_else(|| RepositoryError::internal("the renewed lock is gone"))?;
                lock.expires_at = expires_at;
                if value.is_some() {
                    lock.value = value;
                }
                RenewResult::Renewed(lock.clone())
            }
            HolderRole::Shared(_) => {
                let lease = state
                    .shared
                    .get_mut(&key)
                    .and_then(|leases| leases.iter_mut().find(|lease| lease.owner == owner))
                    .ok_or_else(|| RepositoryError::internal("the renewed lease is gone"))?;
                lease.expires_at = expires_at;
                if value.is_some() {
                    lease.value = value;
                }
                let renewed = shared_lock(&resource, lease);
                state.rewrite_shared_row(&key, now);
                RenewResult::Renewed(renewed)
            }
        })
    }

    pub(super) fn undo_shared_grant(
        &mut self,
        tenant: Tenant,
        grant: Lock,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let key = (tenant, grant.resource.clone());
        let owner_key = (key.0.clone(), key.1.clone(), grant.owner.clone());
        let row_is_shared = state
            .locks
            .get(&key)
            .is_some_and(|row| row.owner.is_shared_holders() && row.is_live_at(now));
        let current = state
            .shared_of(&key)
            .iter()
            .find(|lease| lease.owner == grant.owner);
        let regranted = state.regranted_shared.contains(&owner_key);
        let undone =
            row_is_shared && decide_shared_undo(&grant.resource, current, regranted, &grant, now);
        if undone {
            state.history.ending = Some((crate::HistoryEvent::Undone, None));
            if let Some(leases) = state.shared.get_mut(&key) {
                leases.retain(|lease| lease.owner != grant.owner);
            }
            state.rewrite_shared_row(&key, now);
        }
        Ok(undone)
    }

    pub(super) fn record_shared_expiry(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: crate::FencingToken,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let Some(leases) = state.shared.get_mut(&(tenant, resource)) else {
            return Ok(false);
        };
        let before = leases.len();
        leases.retain(|lease| {
            !(lease.owner == owner
                && lease.fencing_token == fencing_token
                && !lease.is_live_at(now))
        });
        Ok(leases.len() < before)
    }
}

impl State {
    /// A shared acquire, under the mutex.
    /// Makes the shared grant the one decision decided (`extend`: the owner's live shared
    /// lease with this token, re-granted; else a new reader).
    pub(super) fn grant_shared(
        &mut self,
        key: Key,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        extend: Option<crate::FencingToken>,
        now: DateTime<Utc>,
    ) -> Result<Lock, RepositoryError> {
        let state = self;
        let resource = key.1.clone();
        let row = state.locks.get(&key).cloned();
        let expires_at = now + ttl.as_time_delta();
        let owner_key = (key.0.clone(), key.1.clone(), owner.clone());
        let (fencing_token, value) = match extend {
            Some(token) => {
                state.regranted_shared.insert(owner_key);
                let kept = state
                    .shared_of(&key)
                    .iter()
                    .find(|lease| lease.owner == owner)
                    .and_then(|lease| lease.value.clone());
                (token, value.or(kept))
            }
            None => {
                let live_row = row.as_ref().filter(|row| row.is_live_at(now));
                if live_row.is_none() {
                    // The row ended: whatever it stood for is over.
                    state.shared.remove(&key);
                    if row.is_some_and(|row| !row.owner.is_shared_holders()) {
                        state.expired_takeovers += 1;
                    }
                }
                state.regranted_shared.remove(&owner_key);
                (state.next_token()?, value)
            }
        };
        let lease = shared_lease(owner.clone(), now, expires_at, fencing_token, value);
        let leases = state.shared.entry(key.clone()).or_default();
        leases.retain(|held| held.owner != owner);
        leases.push(lease.clone());
        state.rewrite_shared_row(&key, now);
        Ok(shared_lock(&resource, &lease))
    }
}
