//! The reference semaphore store: the holders' decisions applied to each semaphore's leases.

use super::State;
use crate::{
    decide_release_among, FencingToken, LeaseValue, ListQuery, Owner, Permit, PermitRenewResult,
    PermitRequest, ReleaseResult, RepositoryError, ResourceName, SemaphorePage, SemaphoreState,
    Tenant, Ttl,
};

impl State {
    pub(super) fn release_permits(
        &mut self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<crate::EndedLease>, RepositoryError> {
        let state = self;
        let Some(leases) = state.semaphores.get_mut(&(tenant, name)) else {
            return Ok(None);
        };
        Ok(match decide_release_among(leases, &owner, now) {
            ReleaseResult::Released(token) => {
                let ended = leases
                    .iter()
                    .find(|lease| lease.fencing_token == token)
                    .map(|lease| crate::EndedLease::of(lease, false));
                leases.retain(|lease| lease.fencing_token != token);
                ended
            }
            ReleaseResult::NotFound | ReleaseResult::Forbidden => None,
        })
    }

    pub(super) fn renew_permits(
        &mut self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<PermitRenewResult, RepositoryError> {
        let state = self;
        let Some(leases) = state.semaphores.get_mut(&(tenant, name.clone())) else {
            return Ok(PermitRenewResult::NotFound);
        };
        let Some(own) = leases
            .iter_mut()
            .find(|lease| lease.owner == owner && lease.is_live_at(now))
        else {
            return Ok(PermitRenewResult::NotFound);
        };
        own.expires_at = now + ttl.as_time_delta();
        if value.is_some() {
            own.value = value;
        }
        Ok(PermitRenewResult::Renewed(Permit {
            name,
            lease: own.clone(),
        }))
    }

    pub(super) fn undo_permit_grant(
        &mut self,
        tenant: Tenant,
        grant: Permit,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let owner_key = (
            tenant.clone(),
            grant.name.clone(),
            grant.lease.owner.clone(),
        );
        if state.regranted_permits.contains(&owner_key) {
            return Ok(false);
        }
        state.history.ending = Some((crate::HistoryEvent::Undone, None));
        let Some(leases) = state.semaphores.get_mut(&(tenant, grant.name)) else {
            return Ok(false);
        };
        let before = leases.len();
        leases.retain(|lease| {
            !(lease.is_live_at(now)
                && lease.owner == grant.lease.owner
                && lease.fencing_token == grant.lease.fencing_token
                && lease.acquired_at == grant.lease.acquired_at
                && crate::same_end(&lease.owner, lease.expires_at, grant.lease.expires_at))
        });
        Ok(leases.len() < before)
    }

    pub(super) fn record_permit_expiry(
        &mut self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let owner_key = (tenant.clone(), name.clone(), owner.clone());
        let delay = state.permit_delays.get(&owner_key).copied().unwrap_or(0);
        let Some(leases) = state.semaphores.get_mut(&(tenant, name)) else {
            return Ok(false);
        };
        let before = leases.len();
        leases.retain(|lease| {
            !(lease.owner == owner
                && lease.fencing_token == fencing_token
                && crate::place_is_free(lease, delay, now))
        });
        Ok(leases.len() < before)
    }

    pub(super) fn list_semaphores(
        &mut self,
        tenant: Tenant,
        query: ListQuery,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<SemaphorePage, RepositoryError> {
        let state = &*self;
        let mut matching: Vec<SemaphoreState> = state
            .semaphores
            .iter()
            .filter(|((t, name), _)| {
                *t == tenant
                    && query.prefix.matches(name)
                    && query.after.as_ref().is_none_or(|after| name > after)
            })
            .filter_map(|((_, name), leases)| SemaphoreState::of_leases(name.clone(), leases, now))
            .collect();
        matching.sort_by(|a, b| a.name.as_str().as_bytes().cmp(b.name.as_str().as_bytes()));
        let has_more = matching.len() > query.limit.get();
        matching.truncate(query.limit.get());
        Ok(SemaphorePage {
            semaphores: matching,
            has_more,
        })
    }
}

impl State {
    /// Makes the grant of permits the one decision decided (`extend`: the owner's live grant
    /// with this token, re-granted; else a new grant), under the mutex.
    pub(super) fn grant_permits(
        &mut self,
        key: (Tenant, ResourceName),
        request: PermitRequest,
        extend: Option<crate::FencingToken>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Permit, RepositoryError> {
        let state = self;
        let leases = state.semaphores.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let delay_of = |lease: &crate::Lease| {
            let owner_key = (key.0.clone(), key.1.clone(), lease.owner.clone());
            state.permit_delays.get(&owner_key).copied().unwrap_or(0)
        };
        let with_delays: Vec<(crate::Lease, i64)> = leases
            .iter()
            .map(|lease| (lease.clone(), delay_of(lease)))
            .collect();
        // Grants of others that ran out keep their permits during their lock-delay.
        let places = crate::holding_places(with_delays.clone(), &request.terms.owner, now);
        let delayed: std::collections::HashSet<crate::FencingToken> = places
            .iter()
            .filter(|lease| {
                with_delays.iter().any(|(held, _)| {
                    held.fencing_token == lease.fencing_token && !held.is_live_at(now)
                })
            })
            .map(|lease| lease.fencing_token)
            .collect();
        let owner_key = (key.0.clone(), key.1.clone(), request.terms.owner.clone());
        let expires_at = now + request.terms.ttl.as_time_delta();
        let lease = match extend {
            Some(token) => {
                state
                    .permit_delays
                    .insert(owner_key.clone(), request.terms.lock_delay.millis());
                let leases = state.semaphores.entry(key.clone()).or_default();
                let own = leases
                    .iter_mut()
                    .find(|lease| {
                        lease.owner == request.terms.owner && lease.fencing_token == token
                    })
                    .ok_or_else(|| RepositoryError::internal("the extended lease is gone"))?;
                own.acquired_at = now;
                own.expires_at = expires_at;
                if request.terms.value.is_some() {
                    own.value = request.terms.value;
                }
                let lease = own.clone();
                state.regranted_permits.insert(owner_key);
                lease
            }
            None => {
                let fencing_token = state.next_token()?;
                let lease = crate::Lease {
                    owner: request.terms.owner,
                    weight: request.permits,
                    capacity: request.limit,
                    acquired_at: now,
                    expires_at,
                    fencing_token,
                    value: request.terms.value,
                };
                let leases = state.semaphores.entry(key.clone()).or_default();
                leases.retain(|held| {
                    (held.is_live_at(now) || delayed.contains(&held.fencing_token))
                        && held.owner != lease.owner
                });
                leases.push(lease.clone());
                state.regranted_permits.remove(&owner_key);
                state
                    .permit_delays
                    .insert(owner_key, request.terms.lock_delay.millis());
                lease
            }
        };
        Ok(Permit { name: key.1, lease })
    }
}
