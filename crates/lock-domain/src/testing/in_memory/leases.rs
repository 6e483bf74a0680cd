//! The reference store's lease port: every [`LeaseOp`] applied under the one mutex, every
//! acquire decided by the domain's one decision ([`decide_claim`]), which also says why it
//! refused.

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};

use super::{InMemoryLockRepository, State};
use crate::{
    decide_claim, hold_of, live_grants, Claim, ClaimDecision, Grant, Hold, Holding, Lease, LeaseOp,
    LeaseOutcome, LeaseStore, LeaseTerms, ListPage, ListQuery, LockMode, LockSet, Owner,
    PermitRenewResult, PermitRequest, Place, Refusal, RepositoryError, ResourceName, SemaphorePage,
    Tenant,
};

type Key = (Tenant, ResourceName);

impl State {
    /// Every lease the store has on `place` (live or not), each with its lock-delay in ms: a
    /// lock's exclusive lease or its readers, a semaphore's grants.
    fn leases_at(&self, key: &Key, place: &Place) -> Vec<(Lease, i64)> {
        match place {
            Place::Lock(_) => {
                let row = self
                    .locks
                    .get(key)
                    .filter(|row| !row.owner.is_shared_holders())
                    .map(|row| {
                        let delay = self.lock_delays.get(key).copied().unwrap_or(0);
                        (Grant::of_lock(row.clone()).lease, delay)
                    });
                let readers = self
                    .shared
                    .get(key)
                    .into_iter()
                    .flatten()
                    .map(|lease| (lease.clone(), 0));
                row.into_iter().chain(readers).collect()
            }
            Place::Semaphore(_) => self
                .semaphores
                .get(key)
                .into_iter()
                .flatten()
                .map(|lease| {
                    let owner_key = (key.0.clone(), key.1.clone(), lease.owner.clone());
                    let delay = self.permit_delays.get(&owner_key).copied().unwrap_or(0);
                    (lease.clone(), delay)
                })
                .collect(),
        }
    }

    /// How `place` is held at `now`.
    fn look(&self, key: &Key, place: &Place, now: DateTime<Utc>) -> Holding {
        match place {
            Place::Lock(resource) => {
                let holders = match hold_of(resource, self.locks.get(key), self.shared_of(key), now)
                {
                    None => vec![],
                    Some(Hold::Exclusive(lock)) => vec![Grant::of_lock(lock)],
                    Some(Hold::Shared(readers)) => {
                        readers.into_iter().map(Grant::of_lock).collect()
                    }
                };
                // Available to anyone but the lease's own owner: ask as nobody in particular.
                let delayed_until = if holders.is_empty() {
                    self.delayed_until(key, &Owner::shared_holders(), now)
                } else {
                    None
                };
                Holding {
                    holders,
                    delayed_until,
                }
            }
            Place::Semaphore(_) => {
                let leases = self.leases_at(key, place);
                let delayed_until = leases
                    .iter()
                    .filter(|(lease, _)| !lease.is_live_at(now))
                    .map(|(lease, delay)| lease.expires_at + TimeDelta::milliseconds(*delay))
                    .filter(|until| now < *until)
                    .min();
                Holding {
                    holders: live_grants(place, &leases, now),
                    delayed_until,
                }
            }
        }
    }

    /// An acquire of `claim` on `place`: the one decision, then the grant of its kind.
    fn acquire_claim(
        &mut self,
        key: Key,
        place: &Place,
        claim: Claim,
        terms: LeaseTerms,
        now: DateTime<Utc>,
    ) -> Result<LeaseOutcome, RepositoryError> {
        let leases = self.leases_at(&key, place);
        let extend = match decide_claim(place, &leases, &terms.owner, claim, now) {
            ClaimDecision::Refused(refusal) => return Ok(LeaseOutcome::Refused(refusal)),
            ClaimDecision::Extend(token) => Some(token),
            ClaimDecision::GrantNew => None,
        };
        let granted = match claim {
            Claim::Exclusive => Grant::of_lock(self.grant_exclusive(key, terms, extend, now)?),
            Claim::Shared => {
                let LeaseTerms {
                    owner, ttl, value, ..
                } = terms;
                Grant::of_lock(self.grant_shared(key, owner, ttl, value, extend, now)?)
            }
            Claim::Permits { permits, limit } => {
                let request = PermitRequest {
                    permits,
                    limit,
                    terms,
                };
                Grant::of_permit(self.grant_permits(key, request, extend, now)?)
            }
        };
        Ok(LeaseOutcome::Granted(granted))
    }

    /// Every lock of `set` or none, decided at one instant.
    fn acquire_set(
        &mut self,
        tenant: &Tenant,
        set: LockSet,
        now: DateTime<Utc>,
    ) -> Result<LeaseOutcome, RepositoryError> {
        // Every lock decided at the one instant, before any grant.
        let refused: Vec<ResourceName> = set
            .locks()
            .iter()
            .filter(|(resource, mode)| {
                let place = Place::Lock(resource.clone());
                let key = (tenant.clone(), resource.clone());
                let leases = self.leases_at(&key, &place);
                let claim = Claim::of_mode(*mode);
                matches!(
                    decide_claim(&place, &leases, set.owner(), claim, now),
                    ClaimDecision::Refused(_)
                )
            })
            .map(|(resource, _)| resource.clone())
            .collect();
        if !refused.is_empty() {
            return Ok(LeaseOutcome::Refused(Refusal::SetUnavailable(refused)));
        }
        let mut granted = Vec::with_capacity(set.locks().len());
        for (resource, mode) in set.locks() {
            let place = Place::Lock(resource.clone());
            // No lock-delay, but for a set under a session: the session's.
            let terms = set.terms().clone();
            let key = (tenant.clone(), resource.clone());
            match self.acquire_claim(key, &place, Claim::of_mode(*mode), terms, now)? {
                LeaseOutcome::Granted(grant) => granted.push(grant),
                _ => return Err(RepositoryError::internal("a decided grant was refused")),
            }
        }
        Ok(LeaseOutcome::GrantedAll(granted))
    }
}

#[async_trait]
impl LeaseStore for InMemoryLockRepository {
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        let now = self.clock.now();
        let mut state = self.state();
        let (op, session_end) = match state.resolve_session(&tenant, op, now) {
            Ok(resolved) => resolved,
            Err(answer) => return Ok(answer),
        };
        let key = (tenant.clone(), op.place().name().clone());
        let session_tenant = tenant.clone();
        let outcome = match op {
            LeaseOp::Acquire {
                place,
                claim,
                terms,
            } => state.acquire_claim(key, &place, claim, terms, now)?,
            LeaseOp::AcquireAll(set) => state.acquire_set(&tenant, set, now)?,
            LeaseOp::Look(place) => LeaseOutcome::Looked(state.look(&key, &place, now)),
            LeaseOp::Release {
                place: Place::Lock(resource),
                owner,
            } => state.release_held(tenant, resource, owner, now)?,
            LeaseOp::Release {
                place: Place::Semaphore(name),
                owner,
            } => match state.release_permits(tenant, name, owner, now)? {
                Some(ended) => LeaseOutcome::Released(ended),
                None => LeaseOutcome::NotFound,
            },
            LeaseOp::Renew {
                place: Place::Lock(resource),
                owner,
                ttl,
                value,
            } => state
                .renew_held(tenant, resource, owner, ttl, value, now)?
                .into(),
            LeaseOp::Renew {
                place: Place::Semaphore(name),
                owner,
                ttl,
                value,
            } => permit_renewed(state.renew_permits(tenant, name, owner, ttl, value, now)?),
            LeaseOp::SetValue {
                place: Place::Lock(resource),
                owner,
                value,
            } => state
                .set_value_held(tenant, resource, owner, value, now)?
                .into(),
            LeaseOp::SetValue {
                place: Place::Semaphore(name),
                owner,
                value,
            } => permit_renewed(state.set_permit_value(tenant, name, owner, value, now)),
            LeaseOp::Undo(grant) => LeaseOutcome::Undone(match grant.mode() {
                Some(LockMode::Exclusive) => state.undo_grant(tenant, grant.into_lock(), now)?,
                Some(LockMode::Shared) => {
                    state.undo_shared_grant(tenant, grant.into_lock(), now)?
                }
                None => state.undo_permit_grant(tenant, grant.into_permit(), now)?,
            }),
            LeaseOp::RecordExpiry {
                place: Place::Lock(resource),
                owner,
                fencing_token,
            } => LeaseOutcome::ExpiryRecorded(
                state.record_expiry(
                    tenant.clone(),
                    resource.clone(),
                    owner.clone(),
                    fencing_token,
                    now,
                )? || state.record_shared_expiry(tenant, resource, owner, fencing_token, now)?,
            ),
            LeaseOp::RecordExpiry {
                place: Place::Semaphore(name),
                owner,
                fencing_token,
            } => LeaseOutcome::ExpiryRecorded(state.record_permit_expiry(
                tenant,
                name,
                owner,
                fencing_token,
                now,
            )?),
            LeaseOp::ForceRelease {
                place: Place::Lock(resource),
                reason,
            } => LeaseOutcome::ForceReleased(
                state
                    .force_release_lock(tenant, resource, reason, now)?
                    .into_iter()
                    .map(Grant::of_lock)
                    .collect(),
            ),
            LeaseOp::ForceRelease {
                place: Place::Semaphore(name),
                reason,
            } => LeaseOutcome::ForceReleased(
                state
                    .force_release_permits(tenant, name, reason, now)?
                    .into_iter()
                    .map(Grant::of_permit)
                    .collect(),
            ),
        };
        // A grant under a session ends with the session.
        Ok(match (session_end, outcome) {
            (Some(until), LeaseOutcome::Granted(grant)) => {
                LeaseOutcome::Granted(state.hold_grant_until(&session_tenant, grant, until, now))
            }
            (Some(until), LeaseOutcome::GrantedAll(grants)) => LeaseOutcome::GrantedAll(
                grants
                    .into_iter()
                    .map(|grant| state.hold_grant_until(&session_tenant, grant, until, now))
                    .collect(),
            ),
            (_, outcome) => outcome,
        })
    }

    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        let now = self.clock.now();
        let mut state = self.state();
        let page = state.list(tenant.clone(), query, now)?;
        Ok(ListPage {
            locks: page
                .locks
                .into_iter()
                .flat_map(|listed| {
                    if !listed.lock.owner.is_shared_holders() {
                        return vec![listed];
                    }
                    let key = (tenant.clone(), listed.lock.resource.clone());
                    state
                        .look(&key, &Place::Lock(key.1.clone()), now)
                        .holders
                        .into_iter()
                        .map(|grant| crate::ListedLock {
                            ttl_remaining: (grant.lease.expires_at - now)
                                .to_std()
                                .unwrap_or_default(),
                            lock: grant.into_lock(),
                        })
                        .collect()
                })
                .collect(),
            has_more: page.has_more,
        })
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        let now = self.clock.now();
        self.state().list_semaphores(tenant, query, now)
    }
}

impl State {
    /// Replaces the value of `owner`'s live grant on `name`, and nothing else.
    fn set_permit_value(
        &mut self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        value: crate::LeaseValue,
        now: DateTime<Utc>,
    ) -> PermitRenewResult {
        let own = self
            .semaphores
            .get_mut(&(tenant, name.clone()))
            .and_then(|leases| {
                leases
                    .iter_mut()
                    .find(|lease| lease.owner == owner && lease.is_live_at(now))
            });
        match own {
            Some(own) => {
                own.value = Some(value);
                PermitRenewResult::Renewed(crate::Permit {
                    name,
                    lease: own.clone(),
                })
            }
            None => PermitRenewResult::NotFound,
        }
    }
}

fn permit_renewed(result: PermitRenewResult) -> LeaseOutcome {
    match result {
        PermitRenewResult::Renewed(permit) => LeaseOutcome::Renewed(Grant::of_permit(permit)),
        PermitRenewResult::NotFound => LeaseOutcome::NotFound,
    }
}
