//! Acquires of semaphore permits that wait: per (tenant, name) with waiters in this process, a
//! FIFO and one task that makes the attempts for the head waiter only. The head is never
//! overtaken: a head that needs 3 permits holds back later waiters that need 1, so it cannot
//! starve. A new acquire of this process (waiting or not) goes behind the queue too (see
//! `Semaphores::acquire`).
//!
//! The task attempts when the semaphore may have room: at once after a release or renew through
//! this process ([`PermitQueues::wake`]) or a hint from the store that another process freed
//! permits (PostgreSQL's `LISTEN`, shared with the locks' waits), just after the earliest live
//! lease ends, and now and then for what other processes did: every 200 ms without hints, every
//! 5 s with them (`Waiting::poll_period`). A hint that only says another process committed
//! something (SQLite's) costs a look first (a read): the task tries again only if the semaphore
//! no longer stands as it did when its head was refused ([`Sight`]). A waiter whose time runs
//! out while an attempt is made for it waits for that attempt and answers its outcome, so "not
//! acquired" never hides a grant; a grant made for a waiter that has gone is undone (only that
//! exact grant).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use lock_domain::{
    Clock, Grant, LeaseOp, LeaseOutcome, LeaseStore, Owner, PermitRequest, Place, RepositoryError,
    ResourceName, SemaphoreAcquireOutcome, Tenant,
};
use tokio::sync::{oneshot, Notify};

use crate::events::{LockEvents, Trouble};
use crate::outcomes::AcquireError;
use crate::quota::{Count, LeaseGate, QuotaExceeded, Quotas, Refusal as QuotaRefusal};
use crate::waiting::{WaitEnd, Waiting};

use super::Sight;

/// How often a queue whose semaphore has no live grant but no room either (grants in their
/// lock-delay) tries again.
const DELAYED_RETRY: Duration = Duration::from_millis(250);

/// How long after the earliest lease's end the queue tries: the store's clock decides.
const EXPIRY_MARGIN: Duration = Duration::from_millis(2);

/// After a failed attempt, before the next.
const FAILURE_BACKOFF: Duration = Duration::from_millis(50);

type QueueKey = (Tenant, ResourceName);

/// What a waiter hears from its queue.
pub(crate) type Reply = Result<SemaphoreAcquireOutcome, AcquireError>;

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a waiter stands. Moved under its own mutex by the waiter and by the queue's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// In line; no attempt is being made for it.
    Queued,
    /// The task is making an attempt for it.
    Attempting,
    /// Its time ran out during an attempt: the attempt's outcome is its answer, whatever it is.
    LastAttempt,
    /// It has gone (timed out while queued, or its request was dropped): skipped.
    Gone,
}

pub(crate) struct PermitWaiter {
    pub(crate) request: PermitRequest,
    pub(crate) standing: Mutex<Standing>,
    reply: Mutex<Option<oneshot::Sender<Reply>>>,
    /// What the queue's last look for this waiter found in its way: the semaphore's room at its
    /// last refused attempt, or the tenant's quota.
    last_refusal: Mutex<Option<Refusal>>,
}

/// Why the queue's last look did not grant a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The store refused: `available` permits were free, too few, and the earliest of the
    /// holders' leases (or of the lock-delays keeping permits) ended at `free_at`.
    NoRoom {
        available: u64,
        free_at: Option<DateTime<Utc>>,
    },
    /// Its grant would have gone over the tenant's `max_live_leases`.
    Quota(QuotaExceeded),
}

impl PermitWaiter {
    pub(crate) fn standing(&self) -> MutexGuard<'_, Standing> {
        locked(&self.standing)
    }

    /// Why the queue's last look did not grant this waiter, if it looked.
    pub(crate) fn last_refusal(&self) -> Option<Refusal> {
        *locked(&self.last_refusal)
    }

    fn refused(&self, refusal: Option<Refusal>) {
        *locked(&self.last_refusal) = refusal;
    }
}

struct Queue {
    waiters: Mutex<VecDeque<Arc<PermitWaiter>>>,
    wake: Notify,
    /// Another process committed, what is not known (SQLite's hint): the task looks whether the
    /// semaphore changed before it tries again ([`stands_as_refused`]).
    elsewhere: Notify,
    /// Set while its tenant's `max_live_leases` holds back the head's grant, until an attempt is
    /// admitted: a wait behind the head that ends meanwhile is answered with it too.
    held_back: Mutex<Option<QuotaExceeded>>,
}

/// The queues of waiting permit acquires of one process. Cheap to clone.
#[derive(Clone)]
pub(crate) struct PermitQueues {
    shared: Arc<Shared>,
}

struct Shared {
    leases: Arc<dyn LeaseStore>,
    clock: Arc<dyn Clock>,
    events: Arc<dyn LockEvents>,
    waiting: Waiting,
    /// Each head's grant is admitted under its tenant's `max_live_leases` when it is made.
    quotas: Quotas,
    queues: Mutex<HashMap<QueueKey, Arc<Queue>>>,
}

impl PermitQueues {
    pub(crate) fn new(
        leases: Arc<dyn LeaseStore>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn LockEvents>,
        waiting: Waiting,
        quotas: Quotas,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                leases,
                clock,
                events,
                waiting,
                quotas,
                queues: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Hands the store's hints of freed permits (from `waiting`'s subscription) to these
    /// queues, without keeping them alive.
    pub(crate) fn hear_hints(&self, waiting: &Waiting) {
        let queues = Arc::downgrade(&self.shared);
        waiting.on_permits_freed(Box::new(move |semaphore| {
            let Some(shared) = queues.upgrade() else {
                return;
            };
            let queues = PermitQueues { shared };
            match semaphore {
                Some((tenant, name)) => queues.wake(tenant, name),
                None => queues.changed_elsewhere(),
            }
        }));
    }

    /// Another process committed something, what is not known: each queue looks (a read)
    /// whether its semaphore changed since its head was refused, and only then tries again (a
    /// write). A busy process on the same SQLite file gives such a hint every few milliseconds;
    /// trying each time, every queue here would take the file's write lock as often, for nothing.
    fn changed_elsewhere(&self) {
        self.shared.quotas.lease_ended();
        let queues: Vec<Arc<Queue>> = locked(&self.shared.queues).values().cloned().collect();
        for queue in queues {
            queue.elsewhere.notify_one();
        }
    }

    /// Waiters of `name` in this process that have not gone.
    pub(crate) fn waiters(&self, tenant: &Tenant, name: &ResourceName) -> usize {
        let queue = locked(&self.shared.queues)
            .get(&(tenant.clone(), name.clone()))
            .cloned();
        queue.map_or(0, |queue| {
            locked(&queue.waiters)
                .iter()
                .filter(|waiter| *waiter.standing() != Standing::Gone)
                .count()
        })
    }

    /// Something changed on `name` through this process (a release, a renew): its head tries
    /// at once, and so does every grant held back by its tenant's quota.
    pub(crate) fn wake(&self, tenant: &Tenant, name: &ResourceName) {
        self.shared.quotas.lease_ended();
        let queue = locked(&self.shared.queues)
            .get(&(tenant.clone(), name.clone()))
            .cloned();
        if let Some(queue) = queue {
            queue.wake.notify_one();
        }
    }

    /// The limit that holds back the grant of the head of `name`'s queue, if one does.
    pub(crate) fn held_back(&self, tenant: &Tenant, name: &ResourceName) -> Option<QuotaExceeded> {
        let queue = locked(&self.shared.queues)
            .get(&(tenant.clone(), name.clone()))
            .cloned();
        queue.and_then(|queue| *locked(&queue.held_back))
    }

    /// Puts `request` at the end of `name`'s queue. Must be called inside a tokio runtime.
    pub(crate) fn enqueue(
        &self,
        tenant: Tenant,
        name: ResourceName,
        request: PermitRequest,
    ) -> (Arc<PermitWaiter>, oneshot::Receiver<Reply>) {
        let (reply, replied) = oneshot::channel();
        let waiter = Arc::new(PermitWaiter {
            request,
            standing: Mutex::new(Standing::Queued),
            reply: Mutex::new(Some(reply)),
            last_refusal: Mutex::new(None),
        });
        let key = (tenant, name);
        let mut queues = locked(&self.shared.queues);
        let queue = match queues.get(&key) {
            Some(queue) => Arc::clone(queue),
            None => {
                let queue = Arc::new(Queue {
                    waiters: Mutex::new(VecDeque::new()),
                    wake: Notify::new(),
                    elsewhere: Notify::new(),
                    held_back: Mutex::new(None),
                });
                queues.insert(key.clone(), Arc::clone(&queue));
                tokio::spawn(serve(Arc::clone(&self.shared), key, Arc::clone(&queue)));
                queue
            }
        };
        locked(&queue.waiters).push_back(Arc::clone(&waiter));
        queue.wake.notify_one();
        drop(queues);
        self.shared.waiting.start_hints();
        (waiter, replied)
    }

    /// Undoes `grant` (made for a waiter that has gone), counts and reports it.
    pub(crate) async fn undo(&self, tenant: Tenant, grant: lock_domain::Permit) {
        undo(&self.shared, tenant, grant).await;
    }
}

/// The head of the queue, after dropping those that have gone; `None` once the queue is empty,
/// in which case it has been removed (under the map's lock, so no waiter joins it after).
fn head(shared: &Shared, key: &QueueKey, queue: &Arc<Queue>) -> Option<Arc<PermitWaiter>> {
    let mut queues = locked(&shared.queues);
    let mut waiters = locked(&queue.waiters);
    while let Some(first) = waiters.front() {
        if *first.standing() == Standing::Gone {
            waiters.pop_front();
        } else {
            return Some(Arc::clone(first));
        }
    }
    if queues.get(key).is_some_and(|q| Arc::ptr_eq(q, queue)) {
        queues.remove(key);
    }
    None
}

/// The task of one queue: attempts for its head until the queue is empty.
async fn serve(shared: Arc<Shared>, key: QueueKey, queue: Arc<Queue>) {
    while let Some(waiter) = head(&shared, &key, &queue) {
        {
            let mut standing = waiter.standing();
            if *standing != Standing::Queued {
                continue;
            }
            *standing = Standing::Attempting;
        }
        // The grant is counted against the tenant's `max_live_leases` now, when it would be
        // made, under the tenant's gate (held until the store has answered).
        let outcome = match admit(&shared, &key, &waiter.request.terms.owner).await {
            Ok(gate) => {
                *locked(&queue.held_back) = None;
                let outcome = acquire(&*shared.leases, &key, &waiter.request).await;
                drop(gate);
                outcome
            }
            Err(QuotaRefusal::Exceeded(exceeded)) => {
                // Over the limit: the head keeps its place, holding back those behind it, until
                // a lease of the tenant ends or its wait does (answered with the quota then).
                waiter.refused(Some(Refusal::Quota(exceeded)));
                *locked(&queue.held_back) = Some(exceeded);
                let last = {
                    let mut standing = waiter.standing();
                    let last = *standing != Standing::Attempting;
                    if !last {
                        *standing = Standing::Queued;
                    }
                    last
                };
                if last {
                    // Its time ran out meanwhile: dropping the reply unsent answers it.
                    locked(&queue.waiters).retain(|queued| !Arc::ptr_eq(queued, &waiter));
                    drop(locked(&waiter.reply).take());
                    continue;
                }
                tokio::select! {
                    () = queue.wake.notified() => {}
                    () = shared.quotas.room_may_be_free() => {}
                }
                continue;
            }
            Err(QuotaRefusal::Store(error)) => Err(AcquireError::Store(error)),
        };
        let (outcome, free_at, sight) = match outcome {
            Ok((outcome, seen)) => (Ok(outcome), seen.free_at, seen.sight),
            Err(error) => (Err(error), None, None),
        };
        let finished = match &outcome {
            Ok(SemaphoreAcquireOutcome::Unavailable { available, .. }) => {
                waiter.refused(Some(Refusal::NoRoom {
                    available: *available,
                    free_at,
                }));
                let mut standing = waiter.standing();
                if *standing == Standing::Attempting {
                    *standing = Standing::Queued;
                    false
                } else {
                    true
                }
            }
            _ => true,
        };
        if finished {
            locked(&queue.waiters).retain(|queued| !Arc::ptr_eq(queued, &waiter));
            if let Err(AcquireError::Store(error)) = &outcome {
                shared.events.trouble(Trouble::WaitFailed {
                    resource: &key.1,
                    error,
                });
            }
            // A store's failure pauses the queue; a waiter whose session ended is answered alone.
            let failed = matches!(outcome, Err(AcquireError::Store(_)));
            let reply = locked(&waiter.reply).take();
            let unheard = match reply {
                Some(reply) => reply.send(outcome).err(),
                None => Some(outcome),
            };
            if let Some(Ok(SemaphoreAcquireOutcome::Granted(grant))) = unheard {
                undo(&shared, key.0.clone(), grant).await;
            }
            if failed {
                tokio::time::sleep(FAILURE_BACKOFF).await;
            }
            continue;
        }
        // No room yet: wait for a change here, the earliest end of a lease the refusal named (or
        // of a lock-delay keeping permits), or the next look.
        let until_expiry = free_at
            .map(|end| (end - shared.clock.now()).to_std().unwrap_or_default() + EXPIRY_MARGIN)
            .or(Some(DELAYED_RETRY));
        let poll = shared.waiting.poll_period();
        let pause = until_expiry.map_or(poll, |left| left.min(poll));
        let next_look = tokio::time::Instant::now() + pause;
        loop {
            tokio::select! {
                () = queue.wake.notified() => break,
                () = tokio::time::sleep_until(next_look) => break,
                () = queue.elsewhere.notified() => {
                    if !stands_as_refused(&shared, &key, sight.as_ref()).await {
                        break;
                    }
                }
            }
        }
    }
}

/// Whether `key`'s semaphore stands as it did when its head's attempt was refused (`refused`),
/// by a look: then a new attempt would be refused again. `false` without a sight, or when the
/// look fails (the attempt then tells the waiter).
async fn stands_as_refused(shared: &Shared, key: &QueueKey, refused: Option<&Sight>) -> bool {
    let Some(refused) = refused else {
        return false;
    };
    let look = LeaseOp::Look(Place::Semaphore(key.1.clone()));
    match shared
        .leases
        .apply(key.0.clone(), look)
        .await
        .and_then(LeaseOutcome::looked)
    {
        Ok(holding) => Sight::of(&holding.holders, holding.delayed_until) == *refused,
        Err(_) => false,
    }
}

/// Admits the grant the head of `key`'s queue would be made, under its tenant's
/// `max_live_leases`: a grant `owner` already holds there (a re-grant) adds none.
async fn admit(shared: &Shared, key: &QueueKey, owner: &Owner) -> Result<LeaseGate, QuotaRefusal> {
    let (tenant, name) = key;
    shared
        .quotas
        .admit(tenant, 1, Count::Shared, || async {
            let holds = holds_grant(&*shared.leases, tenant, name, owner).await?;
            Ok(u64::from(holds))
        })
        .await
}

/// Whether `owner` holds a live grant of semaphore `name` now.
pub(crate) async fn holds_grant(
    leases: &dyn LeaseStore,
    tenant: &Tenant,
    name: &ResourceName,
    owner: &Owner,
) -> Result<bool, RepositoryError> {
    let holding = leases
        .apply(
            tenant.clone(),
            LeaseOp::Look(Place::Semaphore(name.clone())),
        )
        .await?
        .looked()?;
    Ok(holding
        .holders
        .iter()
        .any(|grant| grant.lease.owner.same_holder(owner)))
}

/// One attempt of `request` on `key`'s semaphore: its outcome in the semaphore's words, and
/// when refused for want of room, when the first permits in the way end (a holder's lease, or a
/// lock-delay keeping permits), as the refusal told.
pub(crate) async fn acquire(
    leases: &dyn LeaseStore,
    key: &QueueKey,
    request: &PermitRequest,
) -> Result<(SemaphoreAcquireOutcome, super::NoRoomSeen), AcquireError> {
    let op = LeaseOp::Acquire {
        place: Place::Semaphore(key.1.clone()),
        claim: request.claim(),
        terms: request.terms.clone(),
    };
    let acquired = crate::outcomes::acquired(leases.apply(key.0.clone(), op).await?)?;
    Ok(super::outcome_of(acquired, request.limit))
}

async fn undo(shared: &Shared, tenant: Tenant, grant: lock_domain::Permit) {
    shared.waiting.count_wait_end(WaitEnd::Abandoned);
    let undo = LeaseOp::Undo(Grant::of_permit(grant.clone()));
    match shared
        .leases
        .apply(tenant.clone(), undo)
        .await
        .and_then(LeaseOutcome::undone)
    {
        Ok(undone) => {
            if undone {
                shared.quotas.lease_ended();
            }
            shared.events.permit_grant_undone(
                &tenant,
                &grant,
                undone,
                "the waiting client hung up",
            );
        }
        Err(error) => shared.events.trouble(Trouble::UndoFailed {
            resource: &grant.name,
            error: &error,
        }),
    }
}
