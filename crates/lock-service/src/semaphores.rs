//! The use cases of semaphores ([`Semaphores`]): acquire permits (waiting in this process's FIFO
//! of the semaphore, `semaphores/queue.rs`), status, release (which wakes the waiters), renew,
//! list, the fence check, the lock-delay's end and the force-release, each reported to the events
//! port.

pub(crate) mod queue;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use lock_domain::{
    check_permit_fence, Capacity, FenceVerdict, FencingToken, ForceReason, Grant, Holding, Lease,
    LeaseKind, LeaseOp, LeaseValue, ListQuery, Owner, Permit, PermitReleaseResult,
    PermitRenewResult, PermitRequest, Place, RepositoryError, ResourceName,
    SemaphoreAcquireOutcome, SemaphorePage, SemaphoreState, Tenant, Ttl,
};
use tokio::sync::oneshot;
use tokio::time::Instant;

use queue::PermitQueues;
use queue::{holds_grant, PermitWaiter, Refusal, Reply, Standing};

use crate::core::Core;
use crate::events::ForceReleased;
use crate::lock_delay::seconds_until;
use crate::outcomes::AcquireError;
use crate::outcomes::{Fenced, HeldSemaphore, HoldEnd, Looked, PermitsAcquired, Primitive, Waited};
use crate::quota::LeaseGate;
use crate::waiting::WaitEnd;

/// An acquire of semaphore permits, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermitsRequest {
    pub tenant: Tenant,
    pub name: ResourceName,
    pub permit: PermitRequest,
    /// How long the acquire may wait for room; zero answers at once.
    pub wait: Duration,
}

/// The use cases of semaphores: a view over the process's [`Core`], from
/// [`crate::LockService::semaphores`].
#[derive(Clone, Copy)]
pub struct Semaphores<'a> {
    pub(crate) core: &'a Core,
}

impl Semaphores<'_> {
    /// Acquires permits of a semaphore, waiting up to `request.wait` for room. Waiters of one
    /// semaphore in this process are served first come first served, and a new acquire goes
    /// behind them (only an owner that already holds a live grant is answered at once: a
    /// re-grant, or a mismatch). `hung_up` is asked once a grant has arrived after a wait: when
    /// the client has gone, that grant is undone and the answer is [`PermitsAcquired::HungUp`].
    /// Must be called inside a tokio runtime. Every answer is reported to the events port.
    ///
    /// # Errors
    /// [`AcquireError::Store`] when the store failed (nothing was granted);
    /// [`AcquireError::WaitersFull`] when the acquire would wait but the limits are reached;
    /// [`AcquireError::QuotaExceeded`] when it would go over a limit of its tenant.
    pub async fn acquire(
        &self,
        request: PermitsRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<PermitsAcquired, AcquireError> {
        let arrived = Instant::now();
        let answered = self.acquire_measuring(&request, hung_up).await;
        let (how, contended) = match &answered {
            Ok((outcome, contended)) => (
                Some(match outcome {
                    PermitsAcquired::Granted { .. } => Waited::Granted,
                    PermitsAcquired::TimedOut { .. } => Waited::TimedOut,
                    PermitsAcquired::HungUp => Waited::HungUp,
                    PermitsAcquired::Unavailable { .. }
                    | PermitsAcquired::LimitMismatch(_)
                    | PermitsAcquired::PermitsMismatch(_) => Waited::Refused,
                }),
                *contended,
            ),
            Err(error) => (error.waited(), false),
        };
        self.core
            .acquire_measured(Primitive::Semaphore, request.wait, arrived, how, contended);
        answered.map(|(outcome, _)| outcome)
    }

    /// [`Self::acquire`], reported but not measured; with whether it found too few permits free
    /// (refused for it, or waited in line: behind others, or for permits to come back).
    async fn acquire_measuring(
        &self,
        request: &PermitsRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<(PermitsAcquired, bool), AcquireError> {
        // Counted and granted under the tenant's gate; a waiting acquire hands the gate back
        // before it joins the queue, whose grant is admitted again when it is made.
        let gate = self
            .core
            .admit_leases(&request.tenant, 1, || async {
                holds_grant(
                    &*self.core.leases,
                    &request.tenant,
                    &request.name,
                    &request.permit.terms.owner,
                )
                .await
                .map(u64::from)
            })
            .await?;
        let (outcome, contended) = self
            .acquire_permits_unreported(request, gate, hung_up)
            .await?;
        self.core.events.permits_acquired(
            &request.tenant,
            &request.name,
            &request.permit.terms.owner,
            &outcome,
        );
        Ok((outcome, contended))
    }

    async fn acquire_permits_unreported(
        &self,
        request: &PermitsRequest,
        gate: LeaseGate,
        hung_up: impl Fn() -> bool,
    ) -> Result<(PermitsAcquired, bool), AcquireError> {
        let PermitsRequest {
            tenant,
            name,
            permit,
            wait,
        } = request;
        // Answered before any wait: contended when too few permits were free.
        let at_once = |outcome: PermitsAcquired| {
            let contended = matches!(outcome, PermitsAcquired::Unavailable { .. });
            Ok((outcome, contended))
        };
        if self.core.permit_queues.waiters(tenant, name) > 0 {
            // Behind the waiters of this process, unless the owner already holds a grant.
            let holding = self.holding(tenant, name).await?;
            let holds = holding
                .holders
                .iter()
                .any(|grant| grant.lease.owner == permit.terms.owner);
            let now = self.core.clock.now();
            let in_use: u64 = holding
                .holders
                .iter()
                .map(|grant| u64::from(grant.lease.weight.get()))
                .sum();
            match holding.holders.first() {
                _ if holds => return at_once(self.acquire_permits_now(request).await?),
                Some(first) if first.lease.capacity != permit.limit => {
                    return at_once(PermitsAcquired::LimitMismatch(first.lease.capacity))
                }
                _ if wait.is_zero() => {
                    return at_once(PermitsAcquired::Unavailable {
                        limit: permit.limit,
                        available: u64::from(permit.limit.get()).saturating_sub(in_use),
                        retry_after_seconds: holding
                            .delayed_until
                            .map(|until| seconds_until(until, now)),
                    })
                }
                _ => {}
            }
        } else {
            let now = self.acquire_permits_now(request).await?;
            if wait.is_zero() || !matches!(now, PermitsAcquired::Unavailable { .. }) {
                return at_once(now);
            }
        }
        drop(gate);
        // Behind waiters of this process, or refused for too few permits just now.
        Ok((self.wait_for_permits(request, hung_up).await?, true))
    }

    async fn acquire_permits_now(
        &self,
        request: &PermitsRequest,
    ) -> Result<PermitsAcquired, AcquireError> {
        let key = (request.tenant.clone(), request.name.clone());
        let (outcome, seen) = queue::acquire(&*self.core.leases, &key, &request.permit).await?;
        let mut answered = answer(outcome, false);
        if let PermitsAcquired::Unavailable {
            retry_after_seconds,
            ..
        } = &mut answered
        {
            // Permits kept by grants in their lock-delay: when the first come back.
            let now = self.core.clock.now();
            *retry_after_seconds = seen.delayed_until.map(|until| seconds_until(until, now));
        }
        Ok(answered)
    }

    async fn wait_for_permits(
        &self,
        request: &PermitsRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<PermitsAcquired, AcquireError> {
        let _seat = self
            .core
            .waiting
            .seat(&request.tenant)
            .map_err(|full| self.core.waiter_refused(&request.tenant, full))?;
        let (waiter, replied) = self.core.permit_queues.enqueue(
            request.tenant.clone(),
            request.name.clone(),
            request.permit.clone(),
        );
        let mut place = InLine {
            waiter,
            replied: Some(replied),
            queues: self.core.permit_queues.clone(),
            tenant: request.tenant.clone(),
            name: request.name.clone(),
        };
        let reply = {
            let replied = place.replied.as_mut().expect("the reply is awaited once");
            let closed = self.core.waiting.closed();
            tokio::select! {
                reply = &mut *replied => Some(reply),
                () = tokio::time::sleep(request.wait) => None,
                () = closed => None,
            }
        };
        let reply = match reply {
            Some(reply) => Some(reply),
            None => place.time_is_up().await,
        };
        place.replied = None;
        // Held back by the quota: this waiter's own grant at its last look, or (never at the
        // head) the head's in front of it.
        let held_back = match place.waiter.last_refusal() {
            Some(Refusal::Quota(exceeded)) => Some(exceeded),
            Some(Refusal::NoRoom { .. }) => None,
            None => self
                .core
                .permit_queues
                .held_back(&request.tenant, &request.name),
        };
        match (reply, held_back) {
            // The wait ended while its tenant's quota held its grant back (a reply dropped
            // unsent says so too).
            (None | Some(Err(_)), Some(exceeded)) => {
                self.core.waiting.count_wait_end(WaitEnd::TimedOut);
                Err(AcquireError::QuotaExceeded(
                    self.core.over_quota(&request.tenant, exceeded),
                ))
            }
            (reply, _) => self.answer_wait(request, &place, reply, hung_up).await,
        }
    }

    /// The answer of a wait the quota did not end.
    async fn answer_wait(
        &self,
        request: &PermitsRequest,
        place: &InLine,
        reply: Option<Result<Reply, oneshot::error::RecvError>>,
        hung_up: impl Fn() -> bool,
    ) -> Result<PermitsAcquired, AcquireError> {
        match reply {
            None => self.timed_out(request, place.waiter.last_refusal()).await,
            Some(Err(_)) => Err(AcquireError::Store(RepositoryError::internal(
                "the queue of waiting permit acquires ended without an answer",
            ))),
            Some(Ok(Err(error))) => Err(error),
            Some(Ok(Ok(SemaphoreAcquireOutcome::Unavailable { .. }))) => {
                self.timed_out(request, place.waiter.last_refusal()).await
            }
            Some(Ok(Ok(SemaphoreAcquireOutcome::Granted(grant)))) if hung_up() => {
                // Spawned: this request may be dropped at any await now that its client is gone.
                let (queues, tenant) = (self.core.permit_queues.clone(), request.tenant.clone());
                tokio::spawn(async move { queues.undo(tenant, grant).await });
                Ok(PermitsAcquired::HungUp)
            }
            Some(Ok(Ok(outcome))) => {
                if matches!(outcome, SemaphoreAcquireOutcome::Granted(_)) {
                    self.core.waiting.count_wait_end(WaitEnd::Granted);
                }
                Ok(answer(outcome, true))
            }
        }
    }

    /// The answer of a wait that ended without room: the free permits as the refusal of its
    /// last attempt saw them (so "not acquired" and `available` describe one instant), or, for a
    /// waiter that never came to the head of the queue, as the semaphore is now; when the store
    /// cannot say how it is (an outage), that the store is unavailable rather than a guess.
    async fn timed_out(
        &self,
        request: &PermitsRequest,
        last_refusal: Option<Refusal>,
    ) -> Result<PermitsAcquired, AcquireError> {
        let limit = request.permit.limit;
        self.core.waiting.count_wait_end(WaitEnd::TimedOut);
        let now = self.core.clock.now();
        let left = |end: DateTime<Utc>| {
            let left = (end - now).to_std().unwrap_or_default();
            left.as_secs_f64().ceil().max(1.0) as u64
        };
        let (available, retry_after_seconds) = match last_refusal {
            // What the last attempt's refusal saw: "not acquired" and `available` are one instant.
            Some(Refusal::NoRoom { available, free_at }) => (available, free_at.map_or(1, left)),
            // It never came to the head: the semaphore as it is now.
            _ => {
                let holding = self.holding(&request.tenant, &request.name).await?;
                let in_use: u64 = holding
                    .holders
                    .iter()
                    .map(|grant| u64::from(grant.lease.weight.get()))
                    .sum();
                let next = holding
                    .holders
                    .iter()
                    .map(|grant| grant.lease.expires_at)
                    .min();
                (
                    u64::from(limit.get()).saturating_sub(in_use),
                    next.map_or(1, left),
                )
            }
        };
        Ok(PermitsAcquired::TimedOut {
            limit,
            available,
            retry_after_seconds,
        })
    }

    /// How semaphore `name` is held now, in one read.
    async fn holding(
        &self,
        tenant: &Tenant,
        name: &ResourceName,
    ) -> Result<Holding, RepositoryError> {
        self.core
            .leases
            .apply(
                tenant.clone(),
                LeaseOp::Look(Place::Semaphore(name.clone())),
            )
            .await?
            .looked()
    }

    /// The live holders of semaphore `name`, or `None` when no grant is live.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn status(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<SemaphoreState>, RepositoryError> {
        let holding = self.holding(&tenant, &name).await?;
        Ok(state_of(name, holding))
    }

    /// The live holders of semaphore `name` and its waiters in this process, and when it has no
    /// live holder, whether grants in their lock-delay keep places: the status of a semaphore in
    /// one call.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn look(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Looked<HeldSemaphore>, RepositoryError> {
        let waiting = self.waiters(&tenant, &name);
        let holding = self.holding(&tenant, &name).await?;
        let delayed = holding.delayed_until;
        let held = state_of(name, holding).map(|state| HeldSemaphore { state, waiting });
        let delayed = match held {
            Some(_) => None,
            None => delayed,
        };
        Ok(Looked::of(held, delayed, self.core.clock.now()))
    }

    /// Acquires of permits of `name` waiting in this process right now.
    pub fn waiters(&self, tenant: &Tenant, name: &ResourceName) -> usize {
        self.core.permit_queues.waiters(tenant, name)
    }

    /// Releases `owner`'s live grant on `name`, reports it, and on success wakes the
    /// semaphore's waiters in this process.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn release(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
    ) -> Result<PermitReleaseResult, RepositoryError> {
        let op = LeaseOp::Release {
            place: Place::Semaphore(name.clone()),
            owner: owner.clone(),
        };
        let (_, ended) = self
            .core
            .leases
            .apply(tenant.clone(), op)
            .await?
            .released_lease()?;
        let result = match ended {
            Some(ended) => {
                self.core
                    .hold_ended(Primitive::Semaphore, HoldEnd::Released, ended.acquired_at);
                PermitReleaseResult::Released(ended.fencing_token)
            }
            None => PermitReleaseResult::NotFound,
        };
        self.core
            .events
            .permits_released(&tenant, &name, &owner, result);
        if let PermitReleaseResult::Released(_) = result {
            self.core.permit_queues.wake(&tenant, &name);
        }
        Ok(result)
    }

    /// Renews `owner`'s live grant on `name` to now + `ttl` (replacing its value when `value`
    /// is `Some`), reports it, and lets the waiters look again (a renew may shorten a lease).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn renew(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<PermitRenewResult, RepositoryError> {
        let op = LeaseOp::Renew {
            place: Place::Semaphore(name.clone()),
            owner: owner.clone(),
            ttl,
            value,
        };
        let result = self
            .core
            .leases
            .apply(tenant.clone(), op)
            .await?
            .renewed_permit()?;
        self.core
            .events
            .permits_renewed(&tenant, &name, &owner, &result);
        if let PermitRenewResult::Renewed(_) = result {
            self.core.permit_queues.wake(&tenant, &name);
        }
        Ok(result)
    }

    /// A page of `tenant`'s semaphores that have a live holder.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.core.leases.list_semaphores(tenant, query).await
    }

    /// When the first permits of semaphore `name` kept by grants that ran out (in their
    /// lock-delay) are available again, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn available_at(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        Ok(self.holding(&tenant, &name).await?.delayed_until)
    }

    /// Whether `token` is the fencing token of a live grant of semaphore `name` right now (any
    /// holder's); reported as a fence check of a semaphore.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn check_fence(
        &self,
        tenant: Tenant,
        name: ResourceName,
        token: FencingToken,
    ) -> Result<FenceVerdict<Lease>, RepositoryError> {
        let live = self
            .status(tenant.clone(), name.clone())
            .await?
            .map(|state| state.holders)
            .unwrap_or_default();
        let verdict = check_permit_fence(live, token);
        self.core.events.fence_checked(
            &tenant,
            Fenced::Semaphore,
            &name,
            token,
            verdict.is_valid(),
        );
        Ok(verdict)
    }

    /// Ends every live grant of the semaphore `name` and returns them: what an admin of the
    /// tenant may do that no holder may, reported and recorded with its reason; waiters here look
    /// at once.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Permit>, RepositoryError> {
        let op = LeaseOp::ForceRelease {
            place: Place::Semaphore(name.clone()),
            reason: reason.clone(),
        };
        let ended: Vec<Permit> = self
            .core
            .leases
            .apply(tenant.clone(), op)
            .await?
            .force_released()?
            .into_iter()
            .map(Grant::into_permit)
            .collect();
        for permit in &ended {
            self.core.hold_ended(
                Primitive::Semaphore,
                HoldEnd::ForceReleased,
                Some(permit.lease.acquired_at),
            );
        }
        let owners: Vec<(Owner, FencingToken)> = ended
            .iter()
            .map(|grant| (grant.lease.owner.clone(), grant.lease.fencing_token))
            .collect();
        self.core.events.force_released(
            &tenant,
            ForceReleased {
                kind: LeaseKind::Semaphore,
                name: &name,
                ended: &owners,
                reason: &reason,
            },
        );
        if !ended.is_empty() {
            self.core.permit_queues.wake(&tenant, &name);
        }
        Ok(ended)
    }
}

/// The store's outcome as the caller hears it.
fn answer(outcome: SemaphoreAcquireOutcome, waited: bool) -> PermitsAcquired {
    match outcome {
        SemaphoreAcquireOutcome::Granted(permit) => PermitsAcquired::Granted { permit, waited },
        SemaphoreAcquireOutcome::Unavailable { limit, available } => PermitsAcquired::Unavailable {
            limit,
            available,
            retry_after_seconds: None,
        },
        SemaphoreAcquireOutcome::LimitMismatch(limit) => PermitsAcquired::LimitMismatch(limit),
        SemaphoreAcquireOutcome::PermitsMismatch(permits) => {
            PermitsAcquired::PermitsMismatch(permits)
        }
    }
}

/// What a refusal for want of room saw of the permits in the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NoRoomSeen {
    /// The earliest end of a live holder's lease, or of a lock-delay keeping permits.
    pub(crate) free_at: Option<DateTime<Utc>>,
    /// The earliest end of a lock-delay keeping permits.
    pub(crate) delayed_until: Option<DateTime<Utc>>,
    /// How the semaphore stood; `None` for any other outcome than a refusal for want of room.
    pub(crate) sight: Option<Sight>,
}

/// How a semaphore's permits stood when an attempt was refused or a look read them: each live
/// lease (its token and end, in token order) and the end of the lock-delay keeping permits. An
/// attempt refused at one sight is refused again while the semaphore stands the same (the
/// leases' ends, which a waiter times itself, aside): a lease that ended, a grant released or a
/// new one, a renewal, a lock-delay begun or over, each changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sight {
    leases: Vec<(FencingToken, DateTime<Utc>)>,
    delayed_until: Option<DateTime<Utc>>,
}

impl Sight {
    /// The sight of live holders `holders` and lock-delay end `delayed_until`, in any order.
    pub(crate) fn of(holders: &[Grant], delayed_until: Option<DateTime<Utc>>) -> Self {
        let mut leases: Vec<(FencingToken, DateTime<Utc>)> = holders
            .iter()
            .map(|grant| (grant.lease.fencing_token, grant.lease.expires_at))
            .collect();
        leases.sort_unstable();
        Self {
            leases,
            delayed_until,
        }
    }
}

/// An acquire's outcome in the semaphore's words, and when refused for want of room, what the
/// refusal saw.
pub(crate) fn outcome_of(
    acquired: Result<Grant, lock_domain::Refusal>,
    limit: Capacity,
) -> (SemaphoreAcquireOutcome, NoRoomSeen) {
    let none = NoRoomSeen::default();
    match acquired {
        Ok(grant) => (SemaphoreAcquireOutcome::Granted(grant.into_permit()), none),
        Err(lock_domain::Refusal::LimitMismatch(limit)) => {
            (SemaphoreAcquireOutcome::LimitMismatch(limit), none)
        }
        Err(lock_domain::Refusal::PermitsMismatch(held)) => {
            (SemaphoreAcquireOutcome::PermitsMismatch(held), none)
        }
        Err(lock_domain::Refusal::Held {
            holders,
            available,
            delayed_until,
        }) => {
            let held_until = holders.iter().map(|grant| grant.lease.expires_at).min();
            let free_at = match (held_until, delayed_until) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let seen = NoRoomSeen {
                free_at,
                delayed_until,
                sight: Some(Sight::of(&holders, delayed_until)),
            };
            (
                SemaphoreAcquireOutcome::Unavailable { limit, available },
                seen,
            )
        }
        Err(_) => (
            SemaphoreAcquireOutcome::Unavailable {
                limit,
                available: 0,
            },
            none,
        ),
    }
}

/// A semaphore's state from how it is held: `None` without a live holder.
fn state_of(name: ResourceName, holding: Holding) -> Option<SemaphoreState> {
    let limit = holding.holders.first()?.lease.capacity;
    Some(SemaphoreState {
        name,
        limit,
        holders: holding
            .holders
            .into_iter()
            .map(|grant| grant.lease)
            .collect(),
    })
}

/// A waiting request's place in its semaphore's queue. Dropped before its answer was taken (the
/// request is gone), it leaves the queue, and a grant already sent to it is undone.
struct InLine {
    waiter: Arc<PermitWaiter>,
    /// `None` once the answer has been taken.
    replied: Option<oneshot::Receiver<Reply>>,
    queues: PermitQueues,
    tenant: Tenant,
    name: ResourceName,
}

impl InLine {
    /// The wait is over: leaves the queue, unless an attempt is being made for this waiter
    /// right now, whose outcome (perhaps a grant) is then the answer.
    async fn time_is_up(&mut self) -> Option<Result<Reply, oneshot::error::RecvError>> {
        {
            let mut standing = self.waiter.standing();
            match *standing {
                Standing::Attempting => *standing = Standing::LastAttempt,
                _ => *standing = Standing::Gone,
            }
        }
        self.queues.wake(&self.tenant, &self.name);
        let replied = self.replied.as_mut()?;
        if *self.waiter.standing() == Standing::LastAttempt {
            return Some(replied.await);
        }
        // An answer sent just before the time ran out is taken rather than left behind.
        replied.close();
        replied.try_recv().ok().map(Ok)
    }
}

impl Drop for InLine {
    fn drop(&mut self) {
        let Some(mut replied) = self.replied.take() else {
            return;
        };
        *self.waiter.standing() = Standing::Gone;
        self.queues.wake(&self.tenant, &self.name);
        replied.close();
        if let Ok(Ok(SemaphoreAcquireOutcome::Granted(grant))) = replied.try_recv() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let (queues, tenant) = (self.queues.clone(), self.tenant.clone());
                runtime.spawn(async move { queues.undo(tenant, grant).await });
            }
        }
    }
}
