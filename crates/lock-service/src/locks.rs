//! The use cases of locks ([`Locks`]): acquire (at once, or waiting in this process's queue of
//! the lock), status, release (which wakes the waiters), renew, list, the fence check, the
//! lock-delay's end and the force-release, of exclusive and shared locks (`locks/modes.rs`) and of
//! sets of locks (`locks/multi.rs`), each reported to the events port.

pub(crate) mod modes;
pub(crate) mod multi;

use std::time::Duration;

use tokio::time::Instant;

use chrono::{DateTime, Utc};
use lock_domain::{
    check_lock_fence, Claim, FenceVerdict, FencingToken, ForceReason, Hold, LeaseKind, LeaseOp,
    LeaseTerms, LeaseValue, ListPage, ListQuery, Lock, LockMode, Owner, Place, Refusal,
    ReleaseResult, RenewResult, RepositoryError, ResourceName, Tenant, Ttl,
};

use crate::core::Core;
use crate::outcomes::AcquireError;
use crate::outcomes::{Acquired, Fenced, Looked};
use crate::outcomes::{HoldEnd, Primitive};
use crate::quota::LeaseGate;
use crate::waiting::{Handed, WaitOutcome};

/// An acquire, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireRequest {
    pub tenant: Tenant,
    pub resource: ResourceName,
    /// Exclusive (v1) or shared.
    pub mode: LockMode,
    /// The lease asked for: its owner, TTL, value (a re-grant keeps the one it had when `None`)
    /// and lock-delay (exclusive acquires; a shared acquire must ask for none).
    pub terms: LeaseTerms,
    /// How long the acquire may wait for the lock; zero answers at once.
    pub wait: Duration,
}

/// A lock acquire's outcome as its caller hears it (the reason of a refusal, when it says more
/// than "held", is in the answer: the lock-delay's end, the mode the caller holds).
pub(crate) fn answer(
    acquired: Result<lock_domain::Grant, Refusal>,
    waited: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> Acquired {
    match acquired {
        Ok(grant) => Acquired::Granted {
            lock: grant.into_lock(),
            waited,
        },
        Err(Refusal::Delayed { until }) => Acquired::Delayed {
            retry_after_seconds: crate::lock_delay::seconds_until(until, now),
        },
        Err(Refusal::ModeMismatch(_)) => Acquired::ModeMismatch,
        Err(Refusal::Held { holders, .. }) => Acquired::Held {
            holders: holders
                .into_iter()
                .map(lock_domain::Grant::into_lock)
                .collect(),
        },
        Err(_) => Acquired::Held { holders: vec![] },
    }
}

/// The use cases of locks: a view over the process's [`Core`], from
/// [`crate::LockService::locks`].
#[derive(Clone, Copy)]
pub struct Locks<'a> {
    pub(crate) core: &'a Core,
}

impl Locks<'_> {
    /// Acquires a lock, waiting up to `request.wait` for it: at once when the lock is free, has
    /// expired, or the owner already holds it (a re-grant from now, keeping the token). A
    /// waiting acquire joins the lock's queue in this process, first come first served, and is
    /// granted when the lock is released (by any process sharing the store) or expires.
    /// `hung_up` is asked once a grant has arrived after a wait: when the client has gone, that
    /// grant is undone and the answer is [`Acquired::HungUp`]. Must be called inside a tokio
    /// runtime. Every answer is reported to the events port.
    ///
    /// # Errors
    /// [`AcquireError::Store`] when the store failed (nothing was granted);
    /// [`AcquireError::WaitersFull`] when the acquire would wait but the limits are reached;
    /// [`AcquireError::QuotaExceeded`] when it would go over its tenant's `max_live_leases` or
    /// `max_waiters`.
    pub async fn acquire(
        &self,
        request: AcquireRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<Acquired, AcquireError> {
        let arrived = Instant::now();
        let primitive = Primitive::of_lock(request.mode == LockMode::Shared);
        let answered = self.acquire_unreported(&request, hung_up).await;
        let (how, contended) = match &answered {
            Ok((outcome, contended)) => {
                self.core.events.acquired(
                    &request.tenant,
                    &request.resource,
                    &request.terms.owner,
                    outcome,
                );
                (Some(outcome.waited()), *contended)
            }
            Err(error) => (error.waited(), false),
        };
        self.core
            .acquire_measured(primitive, request.wait, arrived, how, contended);
        answered.map(|(outcome, _)| outcome)
    }

    /// [`Self::acquire`]'s answer, and whether it found the lock held by another holder.
    async fn acquire_unreported(
        &self,
        request: &AcquireRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<(Acquired, bool), AcquireError> {
        // Counted and granted under the tenant's gate; a waiting acquire hands the gate back
        // before it joins a queue, whose grant is admitted again when it is made.
        let gate = self.admit_acquire(request).await?;
        Ok(match (request.mode, request.wait.is_zero()) {
            (LockMode::Exclusive, true) => {
                let outcome = self.acquire_now(request).await?;
                let contended = matches!(outcome, Acquired::Held { .. });
                (outcome, contended)
            }
            (LockMode::Shared, true) => {
                let outcome = self.acquire_shared_now(request).await?;
                let contended = matches!(outcome, Acquired::Held { .. });
                (outcome, contended)
            }
            (_, false) => self.acquire_waiting(request, gate, hung_up).await?,
        })
    }

    /// Admits `request`'s grant under its tenant's `max_live_leases` (a re-grant adds nothing).
    pub(crate) async fn admit_acquire(
        &self,
        request: &AcquireRequest,
    ) -> Result<LeaseGate, AcquireError> {
        self.core
            .admit_leases(&request.tenant, 1, || async {
                Ok(u64::from(self.mode_held_by(request).await?.is_some()))
            })
            .await
    }

    pub(crate) async fn acquire_now(
        &self,
        request: &AcquireRequest,
    ) -> Result<Acquired, AcquireError> {
        let op = LeaseOp::Acquire {
            place: Place::Lock(request.resource.clone()),
            claim: Claim::Exclusive,
            terms: request.terms.clone(),
        };
        let outcome = self.core.leases.apply(request.tenant.clone(), op).await?;
        let acquired = crate::outcomes::acquired(outcome)?;
        Ok(answer(acquired, false, self.core.clock.now()))
    }

    /// Joins the lock's queue, except that the holder of the lock is granted again at once, as
    /// without a wait (it must not queue behind waiters for its own lock), and so is a reader
    /// that can share the lock now. `gate` (from [`Self::admit_acquire`]) is held for those
    /// attempts made at once and given back before the wait: the queue admits its own grant.
    /// With the answer, whether the acquire found the lock held by another holder (an attempt
    /// refused as held, others in line before it, or a wait that timed out).
    pub(crate) async fn acquire_waiting(
        &self,
        request: &AcquireRequest,
        gate: LeaseGate,
        hung_up: impl Fn() -> bool,
    ) -> Result<(Acquired, bool), AcquireError> {
        let AcquireRequest {
            tenant,
            resource,
            mode,
            terms,
            wait,
        } = request;
        let mut found_held = false;
        if *mode == LockMode::Shared && !self.core.waiting.has_exclusive_waiter(tenant, resource) {
            // Readers do not wait for each other: with no writer waiting here, a reader that can
            // share the lock now gets it now, as without a wait.
            match self.acquire_shared_now(request).await? {
                // Held, or in a lock-delay: wait for it in the queue.
                Acquired::Held { .. } => found_held = true,
                Acquired::Delayed { .. } => {}
                // Counted as a waiting acquire granted (it asked to wait), as the queue's are.
                Acquired::Granted { lock, .. } => {
                    return Ok((Acquired::Granted { lock, waited: true }, false))
                }
                answered => return Ok((answered, false)),
            }
        }
        if self.core.waiting.has_queue(tenant, resource) {
            // The holder is answered at once: re-granted in its mode, or told it holds the other.
            match self.mode_held_by(request).await? {
                Some(held) if held != *mode => return Ok((Acquired::ModeMismatch, false)),
                Some(_) => {
                    let now = match mode {
                        LockMode::Exclusive => self.acquire_now(request).await?,
                        LockMode::Shared => self.acquire_shared_now(request).await?,
                    };
                    if let answered @ (Acquired::Granted { .. } | Acquired::ModeMismatch) = now {
                        return Ok((answered, false));
                    }
                }
                None => {}
            }
        }
        let ticket = self
            .core
            .waiting
            .enqueue(tenant.clone(), resource.clone(), *mode, terms.clone())
            .map_err(|full| self.core.waiter_refused(tenant, full))?;
        drop(gate);
        let contention = ticket.contention();
        let answer = match ticket.wait(*wait, hung_up).await {
            WaitOutcome::Granted(lock) => Acquired::Granted { lock, waited: true },
            WaitOutcome::TimedOut {
                retry_after_seconds,
            } => Acquired::TimedOut {
                retry_after_seconds,
            },
            WaitOutcome::Failed(error) => return Err(error.into()),
            WaitOutcome::ModeMismatch => Acquired::ModeMismatch,
            WaitOutcome::HungUp => Acquired::HungUp,
            WaitOutcome::QuotaExceeded(exceeded) => {
                return Err(AcquireError::QuotaExceeded(
                    self.core.over_quota(tenant, exceeded),
                ))
            }
            WaitOutcome::SessionNotFound => return Err(AcquireError::SessionNotFound),
        };
        let timed_out = matches!(answer, Acquired::TimedOut { .. });
        Ok((answer, found_held || timed_out || contention.found_held()))
    }

    /// How `resource` is held now: by one exclusive holder, by shared holders, or (`None`) by
    /// no one.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Hold>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant, &resource).await?;
        Ok(holding.hold())
    }

    /// How `resource` is held now, and when it is not, whether a lock-delay keeps its place: the
    /// status of a lock in one read.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn look(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Looked<Hold>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant, &resource).await?;
        let hold = holding.hold();
        Ok(Looked::of(
            hold,
            holding.delayed_until,
            self.core.clock.now(),
        ))
    }

    /// Releases `owner`'s live lock on `resource` whichever its mode, reports it, and on
    /// success wakes the lock's waiters in this process. When requests here wait for the lock,
    /// its queue is idle and the store commits two operations together (SQLite), the release is
    /// made by the queue together with the next in line's attempt
    /// ([`crate::waiting::Waiting::hand_off`]): one commit, and the lock passes on in one step.
    /// Otherwise it goes to the store at once, as any release.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed: nothing was released (or, after a 503-like
    /// failure, it may have been; see the store's contract).
    pub async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        // The store decides among every holder of either mode at once.
        let op = LeaseOp::Release {
            place: Place::Lock(resource.clone()),
            owner: owner.clone(),
        };
        let (outcome, by_queue) = match self.core.waiting.hand_off(&tenant, &resource, op) {
            Ok(handed) => match handed.await {
                Ok(Handed::Made(outcome)) => (outcome, true),
                Ok(Handed::Declined(op)) => {
                    (self.core.leases.apply(tenant.clone(), op).await, false)
                }
                // The queue's task ended while it held the release (the runtime is shutting
                // down): it may have been made.
                Err(_) => (
                    Err(RepositoryError::unavailable(
                        "the lock's queue ended while it was releasing it",
                    )),
                    false,
                ),
            },
            Err(op) => (self.core.leases.apply(tenant.clone(), op).await, false),
        };
        let (result, ended) = outcome?.released_lease()?;
        self.core
            .events
            .released(&tenant, &resource, &owner, result);
        if let Some(ended) = ended {
            self.core.hold_ended(
                Primitive::of_lock(ended.shared),
                HoldEnd::Released,
                ended.acquired_at,
            );
        }
        match result {
            ReleaseResult::Released(_) if by_queue => {
                self.core.waiting.freed_by_queue(&tenant, &resource)
            }
            ReleaseResult::Released(_) => self.core.waiting.freed(&tenant, &resource),
            _ => {}
        }
        Ok(result)
    }

    /// Renews `owner`'s live lock on `resource` (in either mode) to now + `ttl`, replacing its
    /// value when `value` is `Some`, reports it, and on success lets the lock's waiters in this
    /// process look at the new expiry (a renew may shorten a lease).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        let op = LeaseOp::Renew {
            place: Place::Lock(resource.clone()),
            owner: owner.clone(),
            ttl,
            value,
        };
        let result = self
            .core
            .leases
            .apply(tenant.clone(), op)
            .await?
            .renewed_lock()?;
        self.core
            .events
            .renewed(&tenant, &resource, &owner, &result);
        if let RenewResult::Renewed(_) = result {
            self.core.waiting.lease_changed(&tenant, &resource);
        }
        Ok(result)
    }

    /// A page of `tenant`'s live locks; a lock held in shared mode shows each of its holders
    /// (`query.limit` counts locks, not holders).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        self.core.leases.list_locks(tenant, query).await
    }

    /// Acquires waiting for the lock on `resource` of `tenant` right now.
    pub fn waiters(&self, tenant: &Tenant, resource: &ResourceName) -> usize {
        self.core.waiting.waiters(tenant, resource)
    }

    /// When `resource`, held by no live lease, is available again to other owners than its last
    /// holder: the end of the lock-delay of a lease that ran out, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn available_at(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant, &resource).await?;
        Ok(holding.delayed_until)
    }

    /// Whether `token` is the fencing token of a live lease on lock `resource` right now (for a
    /// shared lock, any live holder's); reported as a fence check of a lock.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn check_fence(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        token: FencingToken,
    ) -> Result<FenceVerdict<Lock>, RepositoryError> {
        let hold = self.status(tenant.clone(), resource.clone()).await?;
        let verdict = check_lock_fence(hold, token);
        self.core
            .events
            .fence_checked(&tenant, Fenced::Lock, &resource, token, verdict.is_valid());
        Ok(verdict)
    }

    /// Ends every live lease of the lock `resource` (its exclusive holder or every reader) and
    /// returns them (none: nothing was held): what an admin of the tenant may do that no holder
    /// may, reported and recorded with its reason; waiters here look at once.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        self.core
            .force_release_in(tenant, resource, reason, LeaseKind::Lock)
            .await
    }
}
