//! Atomic multi-lock use cases: acquire a set of locks together (waiting, holding nothing, until
//! all are available at once or the wait ends), and release many.

use std::time::Duration;

use tokio::time::Instant;

use chrono::{DateTime, Utc};
use lock_domain::{
    Grant, Holding, LeaseOp, LeaseOutcome, Lock, LockSet, Owner, Place, Refusal, ReleaseResult,
    RepositoryError, ResourceName, Tenant,
};

use crate::held::mode_held;
use crate::locks::Locks;
use crate::outcomes::AcquireError;
use crate::outcomes::Acquired;
use crate::outcomes::{MultiAcquired, Primitive, Waited};
use crate::quota::{self, Count};
use crate::waiting::WaitEnd;

/// How long past a holder's `expires_at` a waiting multi-lock tries again.
const EXPIRY_MARGIN: Duration = Duration::from_millis(2);

/// A multi-lock acquire, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiAcquireRequest {
    pub tenant: Tenant,
    pub set: LockSet,
    /// How long to wait for all of them to be available together; zero answers at once.
    pub wait: Duration,
}

impl Locks<'_> {
    /// Acquires every lock of `request.set` together, or none: at once, or (with a wait) as
    /// soon as all are available at one instant. Nothing is held while waiting, so two
    /// multi-locks can never deadlock. `hung_up` is asked once a grant has arrived after a wait:
    /// when the client has gone, every grant is undone. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`AcquireError::Store`] when the store failed (nothing was granted, or what was is
    /// undone); [`AcquireError::WaitersFull`] when the request would wait but the limits are
    /// reached.
    pub async fn acquire_all(
        &self,
        request: MultiAcquireRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<MultiAcquired, AcquireError> {
        let arrived = Instant::now();
        let wait = request.wait;
        let answered = self.acquire_all_unmeasured(request, hung_up).await;
        let (how, contended) = match &answered {
            Ok((outcome, contended)) => (
                Some(match outcome {
                    MultiAcquired::Granted { .. } => Waited::Granted,
                    MultiAcquired::TimedOut { .. } => Waited::TimedOut,
                    MultiAcquired::Unavailable { .. } => Waited::Refused,
                    MultiAcquired::HungUp => Waited::HungUp,
                }),
                *contended,
            ),
            Err(error) => (error.waited(), false),
        };
        self.core
            .acquire_measured(Primitive::Set, wait, arrived, how, contended);
        answered.map(|(outcome, _)| outcome)
    }

    /// [`Self::acquire_all`], reported but not measured; with whether an attempt found a lock of
    /// the set unavailable.
    async fn acquire_all_unmeasured(
        &self,
        request: MultiAcquireRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<(MultiAcquired, bool), AcquireError> {
        let MultiAcquireRequest { tenant, set, wait } = request;
        let mut found_held = false;
        let wanted = set.locks().len() as u64;
        // The first attempt is counted and granted under the tenant's gate taken on arrival
        // (refused at once over the limit); each later attempt of a waiting set is admitted
        // again when it is made.
        let mut gate = Some(
            self.core
                .admit_leases(&tenant, wanted, || self.held_of(&tenant, &set))
                .await?,
        );
        let seat = if wait.is_zero() {
            None
        } else {
            let seat = self
                .core
                .waiting
                .seat(&tenant)
                .map_err(|full| self.core.waiter_refused(&tenant, full))?;
            self.core.waiting.start_hints();
            Some(seat)
        };
        let deadline = tokio::time::Instant::now() + wait;
        let mut waited = false;
        // Watch the set's locks before trying, so that a release between a try and the sleep
        // after it wakes the set.
        let watch = seat.as_ref().map(|_| {
            self.core.waiting.watch_set(
                &tenant,
                set.locks().iter().map(|(resource, _)| resource.clone()),
            )
        });
        let outcome = loop {
            let admitted = match gate.take() {
                Some(gate) => gate,
                None => match self
                    .core
                    .quotas
                    .admit(&tenant, wanted, Count::Shared, || {
                        self.held_of(&tenant, &set)
                    })
                    .await
                {
                    Ok(gate) => gate,
                    Err(quota::Refusal::Exceeded(exceeded)) => {
                        // Over the limit: wait for a lease of the tenant to end, or for the
                        // end of the wait, answered with the quota then.
                        waited = true;
                        let now = tokio::time::Instant::now();
                        let over = now >= deadline
                            || tokio::select! {
                                () = self.core.quotas.room_may_be_free() => false,
                                () = tokio::time::sleep(deadline - now) => false,
                                () = self.core.waiting.closed() => true,
                            };
                        if over || tokio::time::Instant::now() >= deadline {
                            self.core.waiting.count_wait_end(WaitEnd::TimedOut);
                            return Err(AcquireError::QuotaExceeded(
                                self.core.over_quota(&tenant, exceeded),
                            ));
                        }
                        continue;
                    }
                    Err(quota::Refusal::Store(error)) => return Err(AcquireError::Store(error)),
                },
            };
            let outcome = self
                .core
                .leases
                .apply(tenant.clone(), LeaseOp::AcquireAll(set.clone()))
                .await?;
            let attempted = crate::outcomes::acquired_all(outcome)?;
            drop(admitted);
            match attempted {
                Ok(grants) => {
                    let locks: Vec<Lock> = grants.into_iter().map(Grant::into_lock).collect();
                    if waited && hung_up() {
                        self.undo_set(&tenant, locks).await;
                        self.core.waiting.count_wait_end(WaitEnd::Abandoned);
                        break MultiAcquired::HungUp;
                    }
                    if seat.is_some() {
                        self.core.waiting.count_wait_end(WaitEnd::Granted);
                    }
                    // `waited`: asked to wait (as a single acquire's answer counts it).
                    break MultiAcquired::Granted {
                        locks,
                        waited: seat.is_some(),
                    };
                }
                Err(refusal) => {
                    found_held = true;
                    let Refusal::SetUnavailable(resources) = refusal else {
                        return Err(AcquireError::Store(RepositoryError::internal(format!(
                            "a set's acquire refused with {refusal:?}"
                        ))));
                    };
                    // Only a set that waits watches its locks.
                    let Some(watch) = &watch else {
                        break MultiAcquired::Unavailable { resources };
                    };
                    // Sleep until one of the locks that refused it may be free: a release of
                    // one of them here or named by a hint, the poller's look after a hint that
                    // names none (told what refused the set before the set's own look), or the
                    // end of their leases.
                    watch.refused(
                        &tenant,
                        set.owner(),
                        set.locks()
                            .iter()
                            .filter(|(resource, _)| resources.contains(resource))
                            .cloned()
                            .collect(),
                    );
                    let looked = self.look_at(&tenant, &resources).await?;
                    let until_free = until_all_may_be_free(&looked, self.core.clock.now());
                    let now = tokio::time::Instant::now();
                    if now >= deadline {
                        self.core.waiting.count_wait_end(WaitEnd::TimedOut);
                        break MultiAcquired::TimedOut {
                            resources,
                            retry_after_seconds: until_free.as_secs() + 1,
                        };
                    }
                    let nap = until_free
                        .min(self.core.waiting.poll_period())
                        .min(deadline - now);
                    waited = true;
                    tokio::select! {
                        () = watch.freed() => {}
                        () = tokio::time::sleep(nap) => {}
                        () = self.core.waiting.closed() => {
                            self.core.waiting.count_wait_end(WaitEnd::TimedOut);
                            break MultiAcquired::TimedOut {
                                resources,
                                retry_after_seconds: until_free.as_secs() + 1,
                            };
                        }
                    }
                }
            }
        };
        self.report_set(&tenant, &set, &outcome);
        Ok((outcome, found_held))
    }

    /// How many of the locks of `set` its owner holds now (in either mode): re-grants, which add
    /// no lease to its tenant's count.
    async fn held_of(&self, tenant: &Tenant, set: &LockSet) -> Result<u64, RepositoryError> {
        let mut held = 0;
        for (resource, _) in set.locks() {
            let now = self.core.clock.now();
            let holds = mode_held(&*self.core.leases, now, tenant, resource, set.owner()).await?;
            held += u64::from(holds.is_some());
        }
        Ok(held)
    }

    /// How each of `tenant`'s locks `resources` is held now.
    async fn look_at(
        &self,
        tenant: &Tenant,
        resources: &[ResourceName],
    ) -> Result<Vec<Holding>, RepositoryError> {
        let places = resources
            .iter()
            .map(|resource| (tenant.clone(), Place::Lock(resource.clone())))
            .collect();
        self.core.leases.look_many(places).await
    }

    /// Undoes each grant of a set nobody will use (a re-grant of a lease its owner held is
    /// left as it was).
    async fn undo_set(&self, tenant: &Tenant, locks: Vec<Lock>) {
        for lock in locks {
            let undone = self
                .core
                .leases
                .apply(tenant.clone(), LeaseOp::Undo(Grant::of_lock(lock.clone())))
                .await
                .and_then(LeaseOutcome::undone);
            match undone {
                Ok(undone) => {
                    self.core.events.grant_undone(
                        tenant,
                        &lock,
                        undone,
                        "the waiting client hung up",
                    );
                    if undone {
                        self.core.waiting.freed(tenant, &lock.resource);
                    }
                }
                Err(error) => self.core.events.trouble(crate::Trouble::UndoFailed {
                    resource: &lock.resource,
                    error: &error,
                }),
            }
        }
    }

    /// Reports a multi-lock to the events port, lock by lock: each granted lock, or each lock
    /// that was unavailable.
    fn report_set(&self, tenant: &Tenant, set: &LockSet, outcome: &MultiAcquired) {
        let owner = set.owner();
        match outcome {
            MultiAcquired::Granted { locks, waited } => {
                for lock in locks {
                    let how = Acquired::Granted {
                        lock: lock.clone(),
                        waited: *waited,
                    };
                    self.core
                        .events
                        .acquired(tenant, &lock.resource, owner, &how);
                }
            }
            MultiAcquired::Unavailable { resources } => {
                for resource in resources {
                    self.core.events.acquired(
                        tenant,
                        resource,
                        owner,
                        &Acquired::Held { holders: vec![] },
                    );
                }
            }
            MultiAcquired::TimedOut {
                resources,
                retry_after_seconds,
            } => {
                let how = Acquired::TimedOut {
                    retry_after_seconds: *retry_after_seconds,
                };
                for resource in resources {
                    self.core.events.acquired(tenant, resource, owner, &how);
                }
            }
            MultiAcquired::HungUp => {}
        }
    }

    /// Releases each of `resources` held by `owner` (in either mode), one after another, each
    /// exactly as [`Self::release`]: the answers in request order.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; the releases answered before it stand.
    pub async fn release_all(
        &self,
        tenant: Tenant,
        owner: Owner,
        resources: Vec<ResourceName>,
    ) -> Result<Vec<(ResourceName, ReleaseResult)>, RepositoryError> {
        let mut results = Vec::with_capacity(resources.len());
        for resource in resources {
            let result = self
                .release(tenant.clone(), resource.clone(), owner.clone())
                .await?;
            results.push((resource, result));
        }
        Ok(results)
    }
}

/// How long from `now` until every one of the locks `looked` at may be free, by the ends of
/// their leases and lock-delays, plus a margin: zero only when none is held (another attempt
/// may succeed at once). A lease the store still counted live waits the margin even if its end
/// has passed by this process's clock, whose time may run ahead of the store's.
fn until_all_may_be_free(looked: &[Holding], now: DateTime<Utc>) -> Duration {
    looked
        .iter()
        .filter_map(|holding| {
            // The latest end of a holder, or of the lock-delay keeping the place.
            let held = holding
                .holders
                .iter()
                .map(|grant| grant.lease.expires_at)
                .max();
            held.or(holding.delayed_until)
        })
        .map(|end| (end - now).to_std().unwrap_or_default())
        .max()
        .map_or(Duration::ZERO, |latest| latest + EXPIRY_MARGIN)
}

#[cfg(test)]
mod tests;
