//! A waiting request's place in its queue, its share of the limits, and the undo of a grant
//! that arrived for a request that is gone.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use lock_domain::{Lock, RepositoryError, Tenant};
use tokio::sync::oneshot;

use super::queue::{Grant, Granted, Queue, Refused};
use super::{locked, QueueKey, Shared};
use crate::events::Trouble;
use crate::outcomes::WaitersFull;
use crate::quota::{Limit, QuotaExceeded};

/// How a wait ended.
pub(crate) enum WaitOutcome {
    Granted(Lock),
    /// The wait ended without a grant; try again after this many seconds.
    TimedOut {
        retry_after_seconds: u64,
    },
    Failed(RepositoryError),
    /// The owner holds the lock in the other mode: nothing was granted.
    ModeMismatch,
    /// Granted, but the client had hung up by then: the grant is undone (a re-grant of the
    /// owner's earlier lease is left as it was).
    HungUp,
    /// The wait ended while the tenant's `max_live_leases` held the grant back: nothing was
    /// granted.
    QuotaExceeded(QuotaExceeded),
    /// The acquire's session ended during the wait: nothing was granted.
    SessionNotFound,
}

impl From<Refused> for WaitOutcome {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Store(error) => WaitOutcome::Failed(error),
            Refused::ModeMismatch => WaitOutcome::ModeMismatch,
            Refused::SessionNotFound => WaitOutcome::SessionNotFound,
        }
    }
}

/// A waiter's share of the limits, taken before it joins a queue and given back when its
/// [`Ticket`] is dropped (which also lowers `live`).
pub(super) struct WaiterSeat {
    pub(super) shared: Arc<Shared>,
    tenant: Tenant,
}

impl WaiterSeat {
    pub(super) fn take(shared: &Arc<Shared>, tenant: &Tenant) -> Result<Self, WaitersFull> {
        // An election's waiters count for the tenant whose namespace it is.
        let tenant = &tenant
            .election_namespace_of()
            .unwrap_or_else(|| tenant.clone());
        let mut by_tenant = locked(&shared.waiters_by_tenant);
        if shared.presence.count() >= shared.limits.total {
            return Err(WaitersFull::Total);
        }
        let of_tenant = by_tenant.entry(tenant.clone()).or_insert(0);
        if *of_tenant >= shared.limits.per_tenant {
            return Err(WaitersFull::Tenant);
        }
        let quota = shared.quotas.of(tenant).get(Limit::MaxWaiters);
        if let Some(allowed) = quota.filter(|allowed| *of_tenant >= *allowed) {
            return Err(WaitersFull::Quota { allowed });
        }
        *of_tenant += 1;
        shared.presence.arrive();
        Ok(Self {
            shared: Arc::clone(shared),
            tenant: tenant.clone(),
        })
    }
}

impl super::Waiting {
    /// Requests of `tenant` waiting right now, for any lock or semaphore.
    pub(crate) fn waiters_of_tenant(&self, tenant: &Tenant) -> u64 {
        locked(&self.shared.waiters_by_tenant)
            .get(tenant)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for WaiterSeat {
    fn drop(&mut self) {
        let mut by_tenant = locked(&self.shared.waiters_by_tenant);
        if let Some(of_tenant) = by_tenant.get_mut(&self.tenant) {
            *of_tenant = of_tenant.saturating_sub(1);
            if *of_tenant == 0 {
                by_tenant.remove(&self.tenant);
            }
        }
    }
}

/// How a wait ended, for the counters of [`crate::WaitingStats`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum WaitEnd {
    Granted,
    TimedOut,
    /// Granted after its client had gone, and undone.
    Abandoned,
}

/// A waiter's share of the limits, outside a lock's queue: given back, and the count of live
/// waiters lowered, when dropped.
pub(crate) struct Seat {
    pub(super) seat: WaiterSeat,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.seat.shared.presence.leave();
    }
}

/// One waiting request's place in a queue. Dropping it (the request is gone) leaves the queue
/// at once, and undoes a grant that arrived too late to be answered.
pub(crate) struct Ticket {
    /// Given back when the ticket is dropped.
    pub(super) _seat: WaiterSeat,
    /// This waiter's place in its queue.
    pub(super) id: u64,
    pub(super) granted: oneshot::Receiver<Grant>,
    pub(super) queue: Arc<Queue>,
    pub(super) shared: Arc<Shared>,
    pub(super) key: QueueKey,
    /// The outcome has been taken out of the channel (nothing left to undo).
    pub(super) settled: bool,
    /// How the lock was when this waiter joined its queue, to tell whether it found it held.
    pub(super) joined: Joined,
}

/// What a waiter saw of its queue when it joined: see [`Ticket::contention`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Joined {
    /// Others were in line before it, or the queue knew the lock held (or kept).
    pub(super) behind: bool,
    /// The queue's count of finding the lock held, then.
    pub(super) found_held: u64,
}

/// Whether a waiter found its lock held by another holder, asked once its wait is over.
pub(crate) struct Contention {
    queue: Arc<Queue>,
    joined: Joined,
}

impl Contention {
    /// Others were in line before it, the queue knew the lock held when it joined, or found it
    /// held by another holder while it waited.
    pub(crate) fn found_held(&self) -> bool {
        self.joined.behind || self.queue.found_held.load(Ordering::Relaxed) > self.joined.found_held
    }
}

impl Ticket {
    /// What tells, once the wait is over, whether this waiter found its lock held.
    pub(crate) fn contention(&self) -> Contention {
        Contention {
            queue: Arc::clone(&self.queue),
            joined: self.joined,
        }
    }

    /// After the wait ended: the outcome of an attempt in flight for this waiter (waiting for it
    /// to end), or of one whose grant was just sent; `None` when there is none. The channel is
    /// closed after, so the queue hands no later grant to this waiter.
    async fn last_word(&mut self) -> Option<Grant> {
        loop {
            let done = self.queue.attempt_done.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            {
                let attempting = locked(&self.queue.attempting);
                if *attempting != Some(self.id) {
                    // Closed under the lock the queue takes to start an attempt for an open
                    // waiter: no attempt starts for this one any more. A grant is sent before
                    // `attempting` is cleared, so one made for it is in the channel now.
                    self.granted.close();
                    drop(attempting);
                    return self.granted.try_recv().ok();
                }
            }
            tokio::select! {
                answered = &mut self.granted => return answered.ok(),
                () = done => {}
            }
        }
    }

    /// Waits for the grant, at most `wait`. `hung_up` is asked once a grant has arrived: when the
    /// client is already gone, the grant is undone (unless it only re-granted a lease the owner
    /// held before) and the outcome is [`WaitOutcome::HungUp`].
    pub(crate) async fn wait(mut self, wait: Duration, hung_up: impl Fn() -> bool) -> WaitOutcome {
        let shared = Arc::clone(&self.shared);
        let closing = shared.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        let answered = if shared.closed.load(Ordering::Acquire) {
            None
        } else {
            tokio::select! {
                answered = tokio::time::timeout(wait, &mut self.granted) => answered.ok(),
                () = closing => None,
            }
        };
        let mut settle = None;
        let outcome = match answered {
            Some(Ok(Ok(granted))) => {
                settle = Some(granted.settled);
                WaitOutcome::Granted(granted.lock)
            }
            Some(Ok(Err(refused))) => refused.into(),
            Some(Err(_)) => WaitOutcome::Failed(RepositoryError::internal(
                "the queue of waiting acquires ended without an answer",
            )),
            None => {
                // An attempt made for this waiter right now decides; a grant sent just now is
                // taken rather than left behind.
                match self.last_word().await {
                    Some(Ok(granted)) => {
                        settle = Some(granted.settled);
                        WaitOutcome::Granted(granted.lock)
                    }
                    Some(Err(refused)) => refused.into(),
                    None => {
                        self.queue.wake.notify_one();
                        let now = self.shared.clock.now();
                        let held_back = self.queue.held_back();
                        if held_back.is_some() || self.queue.knows_it_held(now) {
                            self.shared.timed_out.fetch_add(1, Ordering::Relaxed);
                        }
                        match held_back {
                            Some(exceeded) => WaitOutcome::QuotaExceeded(exceeded),
                            // The queue never saw who holds the lock (its reads of the store did
                            // not come back in time): "held by another owner" would be a guess,
                            // and a wrong one for the holder's own acquire.
                            None if !self.queue.knows_it_held(now) => {
                                WaitOutcome::Failed(RepositoryError::unavailable(
                                    "the lock store did not answer while the acquire waited",
                                ))
                            }
                            None => WaitOutcome::TimedOut {
                                retry_after_seconds: self.queue.retry_after_seconds(now),
                            },
                        }
                    }
                }
            }
        };
        self.settled = true;
        match (outcome, settle) {
            (WaitOutcome::Granted(lock), Some(settled)) if hung_up() => {
                // Spawned, not awaited: this request may be dropped at any await now that its
                // client is gone, and the undo must happen all the same.
                tokio::spawn(undo_abandoned(
                    Arc::clone(&self.shared),
                    self.key.0.clone(),
                    lock,
                    settled,
                ));
                WaitOutcome::HungUp
            }
            (outcome, settled) => {
                if let Some(settled) = settled {
                    self.shared.granted.fetch_add(1, Ordering::Relaxed);
                    let _ = settled.send(false);
                }
                outcome
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.shared.presence.leave();
        if self.settled {
            return;
        }
        // The request was dropped while waiting: leave the queue now (its task prunes closed
        // waiters when woken), and undo a grant that is already in the channel.
        self.granted.close();
        self.queue.wake.notify_one();
        if let Ok(Ok(Granted { lock, settled })) = self.granted.try_recv() {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                // No runtime to undo it on: dropping `settled` unsent makes the queue's task
                // undo it.
                return;
            };
            runtime.spawn(undo_abandoned(
                Arc::clone(&self.shared),
                self.key.0.clone(),
                lock,
                settled,
            ));
        }
    }
}

/// Undoes a grant nobody will use and tells the queue (which waits for it before its next
/// grant) whether the lock was freed.
pub(super) async fn undo_abandoned(
    shared: Arc<Shared>,
    tenant: Tenant,
    lock: Lock,
    settled: oneshot::Sender<bool>,
) {
    let undone = undo(&shared, &tenant, lock).await;
    let _ = settled.send(undone);
}

/// Undoes exactly the grant `lock` (`LeaseOp::Undo`, in either mode), counts it and reports
/// it; whether the lock was freed.
pub(super) async fn undo(shared: &Shared, tenant: &Tenant, lock: Lock) -> bool {
    shared.abandoned.fetch_add(1, Ordering::Relaxed);
    let undone = shared
        .leases
        .apply(
            tenant.clone(),
            lock_domain::LeaseOp::Undo(lock_domain::Grant::of_lock(lock.clone())),
        )
        .await
        .and_then(lock_domain::LeaseOutcome::undone);
    match undone {
        Ok(undone) => {
            if undone {
                shared.quotas.lease_ended();
            }
            shared
                .events
                .grant_undone(tenant, &lock, undone, "the waiting client hung up");
            undone
        }
        Err(error) => {
            shared.events.trouble(Trouble::UndoFailed {
                resource: &lock.resource,
                error: &error,
            });
            false
        }
    }
}
