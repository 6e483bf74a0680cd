//! The task of one queue and the hand-over of a grant (the store's hints: `hints.rs`).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use lock_domain::{
    decide_acquire, is_expired, AcquireDecision, Applied, Claim, Holding, LeaseOp, LeaseOutcome,
    Lock, LockMode, Place, Refusal as LeaseRefusal, ResourceName, Tenant,
};
use tokio::sync::oneshot;

use super::queue::{Granted, HandedRelease, Head, Queue, ReleaseAnswer};
use super::sets::SetLooks;
use super::ticket::undo;
use super::{locked, QueueKey, Shared, EXPIRY_MARGIN, MAX_SKEW_BACKOFF};
use crate::events::Trouble;
use crate::held::{mode_held, mode_of};
use crate::quota::{Count, LeaseGate, Refusal};

/// The task of one queue: attempts acquires for the head waiter when the lock may be free, and
/// ends when the queue is empty.
pub(super) async fn serve(shared: Arc<Shared>, key: QueueKey, queue: Arc<Queue>) {
    let (tenant, resource) = key.clone();
    // The live lock as last seen (from a grant or a status), if any.
    let mut holder: Option<Lock> = None;
    let mut attempt = false;
    let mut head_id = None;
    // Extra wait after an expiry attempt found the same lease still live.
    let mut skew = Duration::ZERO;
    // When the lock, held by no live lease, leaves the lock-delay of one that ran out.
    let mut delayed_until: Option<DateTime<Utc>> = None;
    loop {
        let Some(head) = shared.head(&key, &queue) else {
            return;
        };
        let Head { id, mode, .. } = head;
        if head_id != Some(id) {
            head_id = Some(id);
            // A new head that already holds the lock (or a reader beside readers) is granted
            // at once.
            if may_grant_at_once(holder.as_ref(), &head, shared.clock.now())
                || delayed_until.is_some()
            {
                // (A lock-delay keeps the place from others, not from its lease's own owner.)
                attempt = true;
            }
        }
        if queue.freed.swap(false, Ordering::AcqRel) {
            attempt = true;
        }
        // A release handed over by the service: made with the head's attempt, in one step.
        let mut release = queue.take_release();
        if release.is_some() {
            attempt = true;
        }
        let mut look = queue.recheck.swap(false, Ordering::AcqRel);
        // How the lock is held, as a refused attempt or a look found it.
        let mut seen: Option<Holding> = None;
        if attempt {
            attempt = false;
            if !queue.start_attempt(id) {
                // The waiter's time ran out (or its request is gone) just now: the next one
                // tries instead, with the release.
                if let Some(release) = release.take() {
                    queue.put_back(release);
                }
                attempt = true;
                continue;
            }
            // The grant is counted against the tenant's `max_live_leases` now, when it would
            // be made, under the tenant's gate (held until the store has answered).
            let gate = match admit(&shared, &tenant, &resource, &head).await {
                Ok(gate) => {
                    queue.set_held_back(None);
                    gate
                }
                Err(Refusal::Exceeded(exceeded)) => {
                    // Over the limit: the head keeps its place (and holds back those behind it)
                    // until a lease of the tenant ends, or its wait does.
                    queue.set_held_back(Some(exceeded));
                    queue.end_attempt();
                    // The release goes alone. The lease it ends may make room: admit again
                    // at once (`answer_release` has told the quota of the lease's end).
                    if make_alone(&shared, &tenant, release.take()).await {
                        attempt = true;
                        continue;
                    }
                    tokio::select! {
                        () = queue.wake.notified() => {}
                        () = shared.quotas.room_may_be_free() => {}
                    }
                    attempt = true;
                    continue;
                }
                Err(Refusal::Store(error)) => {
                    queue.end_attempt();
                    make_alone(&shared, &tenant, release.take()).await;
                    shared.events.trouble(Trouble::WaitFailed {
                        resource: &resource,
                        error: &error,
                    });
                    queue.fail_all(&error);
                    continue;
                }
            };
            let op = LeaseOp::Acquire {
                place: Place::Lock(resource.clone()),
                claim: Claim::of_mode(mode),
                terms: head.terms.clone(),
            };
            let attempted = match release.take() {
                Some(HandedRelease {
                    op: release,
                    answer,
                }) => {
                    let (released, attempted) =
                        shared.leases.apply_then(tenant.clone(), release, op).await;
                    answer_release(&shared, answer, released);
                    attempted
                }
                None => shared.leases.apply(tenant.clone(), op).await,
            };
            let attempted = match attempted {
                Ok(outcome) => outcome.acquired(),
                Err(error) => Err(error),
            };
            drop(gate);
            if !matches!(attempted, Ok(Ok(_))) {
                queue.end_attempt();
            }
            match attempted {
                Ok(Err(LeaseRefusal::ModeMismatch(_))) => {
                    queue.refuse(id);
                    continue;
                }
                // The head's session ended: it alone is answered; the next in line tries.
                Ok(Err(LeaseRefusal::SessionNotFound)) => {
                    queue.refuse_with(id, super::queue::Refused::SessionNotFound);
                    continue;
                }
                Ok(Ok(grant)) => {
                    let lock = grant.into_lock();
                    skew = Duration::ZERO;
                    delayed_until = None;
                    queue.set_delayed_until(None);
                    if deliver(&shared, &queue, &tenant, id, lock.clone()).await {
                        // Undone: the lock is free again.
                        holder = None;
                        queue.set_holder(None);
                        attempt = true;
                    } else {
                        queue.set_holder(Some(&lock));
                        holder = Some(lock);
                    }
                    continue;
                }
                // The refusal says who holds the lock, or until when a lock-delay keeps it: as a
                // look would, at the instant the store refused.
                Ok(Err(LeaseRefusal::Held { holders, .. })) if !holders.is_empty() => {
                    queue.found_held.fetch_add(1, Ordering::Relaxed);
                    seen = Some(Holding {
                        holders,
                        delayed_until: None,
                    });
                }
                Ok(Err(LeaseRefusal::Delayed { until })) => {
                    seen = Some(Holding {
                        holders: Vec::new(),
                        delayed_until: Some(until),
                    });
                }
                Ok(Err(refusal)) => {
                    if matches!(refusal, LeaseRefusal::Held { .. }) {
                        queue.found_held.fetch_add(1, Ordering::Relaxed);
                    }
                    look = true;
                }
                Err(error) => {
                    shared.events.trouble(Trouble::WaitFailed {
                        resource: &resource,
                        error: &error,
                    });
                    queue.fail_all(&error);
                    continue;
                }
            }
        }
        if look && seen.is_none() {
            match crate::held::look(&*shared.leases, &tenant, &resource).await {
                Ok(holding) => seen = Some(holding),
                Err(error) => {
                    shared.events.trouble(Trouble::WaitFailed {
                        resource: &resource,
                        error: &error,
                    });
                    queue.fail_all(&error);
                    continue;
                }
            }
        }
        if let Some(holding) = seen.take() {
            let now = shared.clock.now();
            match holding.one_lease(&resource) {
                Some(lock) => {
                    let same = holder.as_ref().is_some_and(|held| {
                        held.fencing_token == lock.fencing_token
                            && held.expires_at == lock.expires_at
                    });
                    if same && is_expired(lock.expires_at, now) {
                        // Our clock says the lease is over, the store's does not yet.
                        skew = (skew * 2).clamp(Duration::from_millis(10), MAX_SKEW_BACKOFF);
                    } else if !same {
                        skew = Duration::ZERO;
                    }
                    match mode_of(&holding.holders, &head.terms.owner, now) {
                        // The waiter holds it in the other mode: told so, never queued.
                        Some(held) if held != mode => {
                            queue.refuse(id);
                            continue;
                        }
                        // The waiter already holds it: granted at once (a re-grant).
                        Some(_) => attempt = true,
                        // A reader beside readers: granted at once.
                        None if may_grant_at_once(Some(&lock), &head, now) => attempt = true,
                        // Another holder's: the waiters in line found it held.
                        None => {
                            queue.found_held.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    queue.set_holder(Some(&lock));
                    holder = Some(lock);
                }
                None => {
                    holder = None;
                    queue.set_holder(None);
                    // No live lease: free, or the place of one that ran out, in its lock-delay.
                    match holding.delayed_until {
                        Some(until) if until > now => {
                            delayed_until = Some(until);
                            queue.set_delayed_until(Some(until));
                        }
                        _ => {
                            delayed_until = None;
                            queue.set_delayed_until(None);
                            attempt = true;
                        }
                    }
                }
            }
            if attempt {
                continue;
            }
        }
        // Asleep until the lease ends, or until woken: by this process's release or renew, a
        // hint, or the poller (see `poll_queues`). The queue itself never polls.
        let now = shared.clock.now();
        let until_expiry = holder
            .as_ref()
            .map(|lock| lock.expires_at)
            .or(delayed_until)
            .map(|end| (end - now).to_std().unwrap_or(Duration::ZERO) + EXPIRY_MARGIN + skew);
        let timer_fired = match until_expiry {
            Some(sleep) => tokio::select! {
                () = queue.wake.notified() => false,
                () = tokio::time::sleep(sleep) => true,
            },
            None => {
                queue.wake.notified().await;
                false
            }
        };
        if timer_fired {
            match (&holder, delayed_until) {
                (Some(lock), _) if is_expired(lock.expires_at, shared.clock.now()) => {
                    attempt = true;
                }
                (None, Some(until)) if until <= shared.clock.now() => {
                    delayed_until = None;
                    attempt = true;
                }
                _ => queue.recheck.store(true, Ordering::Release),
            }
        }
    }
}

/// Makes a handed-over release alone (no attempt can go with it now) and answers its caller;
/// whether there was one to make.
async fn make_alone(shared: &Shared, tenant: &Tenant, release: Option<HandedRelease>) -> bool {
    let Some(HandedRelease { op, answer }) = release else {
        return false;
    };
    let outcome = shared.leases.apply(tenant.clone(), op).await;
    answer_release(shared, answer, outcome);
    true
}

/// Answers the caller of a handed release with its outcome. A lease it ended is counted out of
/// the quotas first ([`crate::quota::Quotas::lease_ended`]), so that a grant they hold back
/// (this queue's head among them) is admitted on its next look, not after the quotas' recheck:
/// the queue does not depend on when its caller's task runs.
fn answer_release(shared: &Shared, answer: ReleaseAnswer, outcome: Applied) {
    if matches!(outcome, Ok(LeaseOutcome::Released(_))) {
        shared.quotas.lease_ended();
    }
    answer.made(outcome);
}

/// Admits the grant `head` would be made under its tenant's `max_live_leases`: a lease the
/// owner already holds there (a re-grant) adds none.
async fn admit(
    shared: &Shared,
    tenant: &Tenant,
    resource: &ResourceName,
    head: &Head,
) -> Result<LeaseGate, Refusal> {
    shared
        .quotas
        .admit(tenant, 1, Count::Shared, || async {
            let held = mode_held(
                &*shared.leases,
                shared.clock.now(),
                tenant,
                resource,
                &head.terms.owner,
            )
            .await?;
            Ok(u64::from(held.is_some()))
        })
        .await
}

/// Whether `head` may be granted at once while `holder` (live or not) holds the lock: its owner
/// holds it in the same mode (a re-grant), or it wants to read and readers hold it. `holder` is
/// what the queue last saw: the readers' row from a status read, or the lease of the reader it
/// just granted; both are in shared mode.
fn may_grant_at_once(holder: Option<&Lock>, head: &Head, now: DateTime<Utc>) -> bool {
    match head.mode {
        LockMode::Exclusive => {
            decide_acquire(holder, &head.terms.owner, now) == AcquireDecision::Extend
        }
        LockMode::Shared => holder.is_some_and(|lock| read_by_readers(lock, now)),
    }
}

/// Whether `lock`, as the queue saw it, shows the lock held by readers at `now`.
fn read_by_readers(lock: &Lock, now: DateTime<Utc>) -> bool {
    lock.mode == LockMode::Shared && lock.is_live_at(now)
}

/// The one poller of a process's queues: every [`Shared::poll_period`] (often while the store
/// gives no hints of other processes' releases, now and then in case a hint was lost), and at
/// once when a hint says that any lock may have been freed ([`Shared::look_now`]), it reads how
/// every queued lock is held in one call ([`lock_domain::LeaseStore::look_many`]) and wakes only
/// the queues whose lock looks free or shows a lease their task has not seen
/// ([`Queue::observe`]); the same call reads the locks that refused each waiting set, and wakes
/// the sets that may be granted now ([`SetLooks`]). So idle waiters cost one batched read per
/// look on one task, whatever their number, and no thread each. However often the hints come,
/// the poller spends at most a fifth of its time looking: after a look that took `d`, the next
/// waits at least `4 d`. Ends when the `Waiting` is gone.
pub(super) async fn poll_queues(shared: Weak<Shared>) {
    let Some(look_now) = shared.upgrade().map(|alive| Arc::clone(&alive.look_now)) else {
        return;
    };
    loop {
        let Some(period) = shared.upgrade().map(|alive| alive.poll_period()) else {
            return;
        };
        tokio::select! {
            () = tokio::time::sleep(period) => {}
            () = look_now.notified() => {}
        }
        let Some(alive) = shared.upgrade() else {
            return;
        };
        let (keys, queues): (Vec<QueueKey>, Vec<Arc<Queue>>) = locked(&alive.queues)
            .iter()
            .map(|(key, queue)| (key.clone(), Arc::clone(queue)))
            .unzip();
        let sets = SetLooks::of(&alive);
        if keys.is_empty() && sets.is_empty() {
            continue;
        }
        let places = keys
            .into_iter()
            .map(|(tenant, resource)| (tenant, Place::Lock(resource)))
            .chain(sets.places())
            .collect::<Vec<_>>();
        let resources: Vec<ResourceName> = places
            .iter()
            .map(|(_, place)| place.name().clone())
            .collect();
        let started = tokio::time::Instant::now();
        match alive.leases.look_many(places).await {
            Ok(seen) => {
                let (of_queues, of_sets) = seen.split_at(queues.len().min(seen.len()));
                for ((queue, seen), resource) in queues.iter().zip(of_queues).zip(&resources) {
                    queue.observe(seen.one_lease(resource).as_ref());
                }
                sets.answer(of_sets, alive.clock.now());
            }
            // Each queue's task and each set look for themselves, and end their waits if the
            // store fails them.
            Err(_) => {
                queues.iter().for_each(|queue| queue.wake(false));
                sets.wake_all();
            }
        }
        drop(alive);
        tokio::time::sleep(started.elapsed() * LOOK_SHARE).await;
    }
}

/// After a look, the poller rests this many times as long as the look took.
const LOOK_SHARE: u32 = 4;

/// Hands a grant to waiter `id` and waits until the waiter has taken it or it has been undone;
/// whether it was undone. A waiter whose request is gone cannot take it: the grant is undone at
/// once (the store keeps a re-grant of a lease its owner already held).
async fn deliver(shared: &Shared, queue: &Queue, tenant: &Tenant, id: u64, lock: Lock) -> bool {
    let (settled, taken) = oneshot::channel();
    let grant = Granted {
        lock: lock.clone(),
        settled,
    };
    let sent = match queue.take(id) {
        Some(waiter) => waiter.grant.send(Ok(grant)).is_ok(),
        None => false,
    };
    // Sent (or not) before the attempt ends: a waiter whose time ran out takes it.
    queue.end_attempt();
    if sent {
        // `Err`: handed back without an undo (no runtime to make it on): make it here.
        if let Ok(undone) = taken.await {
            return undone;
        }
    }
    undo(shared, tenant, lock).await
}
