//! One lock's queue of waiters, and what a waiter receives.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use lock_domain::{Applied, FencingToken, LeaseOp, LeaseTerms, Lock, LockMode, RepositoryError};
use tokio::sync::{oneshot, Notify};

use super::locked;
use crate::quota::QuotaExceeded;

pub(super) type Grant = Result<Granted, Refused>;

/// Why a waiter was answered without a grant before its wait ended.
pub(super) enum Refused {
    /// The store failed.
    Store(RepositoryError),
    /// The waiter's owner holds the lock in the other mode (no change of mode in place).
    ModeMismatch,
    /// The waiter's session is not live (it ended during the wait).
    SessionNotFound,
}

/// A lock granted to a waiter.
pub(super) struct Granted {
    pub(super) lock: Lock,
    /// Tells the queue that the waiter has taken the grant (`false`) or that it was undone
    /// (`true`); dropped unsent, it means the undo could not be made. The queue waits for it
    /// before it makes its next grant.
    pub(super) settled: oneshot::Sender<bool>,
}

/// A release of the lock that the service handed to the queue's task
/// ([`super::Waiting::hand_off`]), to be made together with the head waiter's attempt.
pub(super) struct HandedRelease {
    pub(super) op: LeaseOp,
    pub(super) answer: ReleaseAnswer,
}

/// Where the releasing request hears what became of its release.
pub(super) struct ReleaseAnswer(pub(super) oneshot::Sender<Handed>);

/// What became of a release handed to a queue.
pub(crate) enum Handed {
    /// The task made it (with the head's attempt, or alone): its outcome.
    Made(Applied),
    /// The queue ended (nobody waits any more) before the task took it: not made, the caller
    /// makes it.
    Declined(LeaseOp),
}

impl ReleaseAnswer {
    /// Answers the releasing request with the outcome of its release.
    pub(super) fn made(self, outcome: Applied) {
        let _ = self.0.send(Handed::Made(outcome));
    }
}

/// The waiters of one lock, first come first served.
pub(super) struct Queue {
    pub(super) waiters: Mutex<VecDeque<Waiter>>,
    /// Releases of the lock handed over by the service, oldest first.
    releases: Mutex<VecDeque<HandedRelease>>,
    pub(super) wake: Notify,
    /// A release may have freed the lock: attempt an acquire.
    pub(super) freed: AtomicBool,
    /// The lease may have changed (a renew, lost hints): look at the lock's status.
    pub(super) recheck: AtomicBool,
    /// The holder's lease as the queue's task last saw it (its token and end), for
    /// `Retry-After` and for the poller to tell a change.
    holder: Mutex<Option<(FencingToken, DateTime<Utc>)>>,
    /// When the lock, held by no live lease, leaves the lock-delay of one that ran out (as the
    /// queue's task last saw it), for `Retry-After`.
    delayed_until: Mutex<Option<DateTime<Utc>>>,
    /// The waiter an acquire attempt is being made for, until its grant is sent or the attempt
    /// failed. A waiter whose time runs out meanwhile waits for that attempt: the attempt may be
    /// granted, and answering "not acquired" then would hide a grant (a lease that someone else
    /// sees held, with no request to explain it).
    pub(super) attempting: Mutex<Option<u64>>,
    /// Notified when `attempting` is cleared.
    pub(super) attempt_done: Notify,
    /// Set while its tenant's `max_live_leases` holds back the head's grant (the limit), until an
    /// attempt is admitted: a wait that ends meanwhile, the head's or one behind it, is answered
    /// with it (the quota, not the lock, keeps every waiter here from its turn).
    held_back: Mutex<Option<QuotaExceeded>>,
    /// How often the queue's task found the lock held by another holder (an attempt refused
    /// as held, or a look): a waiter that saw this grow while it waited found the lock held
    /// (`lockd_contended_acquires_total`).
    pub(super) found_held: AtomicU64,
}

pub(super) struct Waiter {
    pub(super) id: u64,
    pub(super) mode: LockMode,
    pub(super) terms: LeaseTerms,
    pub(super) grant: oneshot::Sender<Grant>,
}

/// The head waiter, as the queue's task attempts for it.
#[derive(Debug, Clone)]
pub(super) struct Head {
    pub(super) id: u64,
    pub(super) mode: LockMode,
    /// The terms of the lease it waits for.
    pub(super) terms: LeaseTerms,
}

impl Queue {
    pub(super) fn new() -> Self {
        Self {
            waiters: Mutex::new(VecDeque::new()),
            releases: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            freed: AtomicBool::new(false),
            // A new queue looks before it leaps: knowing the holder tells a re-grant of the
            // holder's own lease (kept if its requester is gone) from a new grant (released).
            recheck: AtomicBool::new(true),
            holder: Mutex::new(None),
            delayed_until: Mutex::new(None),
            attempting: Mutex::new(None),
            attempt_done: Notify::new(),
            held_back: Mutex::new(None),
            found_held: AtomicU64::new(0),
        }
    }

    pub(super) fn wake(&self, freed: bool) {
        if freed {
            self.freed.store(true, Ordering::Release);
        } else {
            self.recheck.store(true, Ordering::Release);
        }
        self.wake.notify_one();
    }

    /// Whether the task has no attempt in flight and no release waiting.
    pub(super) fn is_idle(&self) -> bool {
        locked(&self.attempting).is_none() && locked(&self.releases).is_empty()
    }

    /// Takes a release for the task to make, and wakes it.
    pub(super) fn hand(&self, release: HandedRelease) {
        locked(&self.releases).push_back(release);
        self.wake.notify_one();
    }

    /// The oldest release handed over and not yet made.
    pub(super) fn take_release(&self) -> Option<HandedRelease> {
        locked(&self.releases).pop_front()
    }

    /// Gives back a release the task took but could not make with an attempt now.
    pub(super) fn put_back(&self, release: HandedRelease) {
        locked(&self.releases).push_front(release);
    }

    /// Hands every release not yet made back to its caller, unmade: the queue is ending.
    pub(super) fn decline_releases(&self) {
        let releases: Vec<HandedRelease> = locked(&self.releases).drain(..).collect();
        for release in releases {
            let _ = release.answer.0.send(Handed::Declined(release.op));
        }
    }

    pub(super) fn head(&self) -> Option<Head> {
        let mut waiters = locked(&self.waiters);
        while waiters.front().is_some_and(|w| w.grant.is_closed()) {
            waiters.pop_front();
        }
        waiters.front().map(|w| Head {
            id: w.id,
            mode: w.mode,
            terms: w.terms.clone(),
        })
    }

    /// Whether an exclusive acquire waits here: new shared acquires then queue behind it.
    pub(super) fn has_exclusive_waiter(&self) -> bool {
        locked(&self.waiters)
            .iter()
            .any(|w| w.mode == LockMode::Exclusive && !w.grant.is_closed())
    }

    /// Answers waiter `id` that its owner holds the lock in the other mode.
    pub(super) fn refuse(&self, id: u64) {
        self.refuse_with(id, Refused::ModeMismatch);
    }

    /// Answers waiter `id` with `refused`, and takes it out of the queue.
    pub(super) fn refuse_with(&self, id: u64, refused: Refused) {
        if let Some(waiter) = self.take(id) {
            let _ = waiter.grant.send(Err(refused));
        }
    }

    /// Takes waiter `id` out of the queue.
    pub(super) fn take(&self, id: u64) -> Option<Waiter> {
        let mut waiters = locked(&self.waiters);
        let position = waiters.iter().position(|w| w.id == id)?;
        waiters.remove(position)
    }

    /// Ends every wait with `error`.
    pub(super) fn fail_all(&self, error: &RepositoryError) {
        let waiters: Vec<Waiter> = locked(&self.waiters).drain(..).collect();
        for waiter in waiters {
            let _ = waiter.grant.send(Err(Refused::Store(copy_error(error))));
        }
    }

    /// Marks an attempt for waiter `id` as in flight, unless the waiter has closed its channel
    /// (its wait ended): `false` then.
    pub(super) fn start_attempt(&self, id: u64) -> bool {
        let mut attempting = locked(&self.attempting);
        let open = locked(&self.waiters)
            .iter()
            .any(|w| w.id == id && !w.grant.is_closed());
        if open {
            *attempting = Some(id);
        }
        open
    }

    /// No attempt is in flight any more: waiters whose time ran out meanwhile may answer.
    pub(super) fn end_attempt(&self) {
        *locked(&self.attempting) = None;
        self.attempt_done.notify_waiters();
    }

    /// Records that the quota holds back the head's grant (`Some`), or that it let the head's
    /// attempt go ahead (`None`).
    pub(super) fn set_held_back(&self, held_back: Option<QuotaExceeded>) {
        *locked(&self.held_back) = held_back;
    }

    /// The limit that holds back the head's grant, if one does.
    pub(super) fn held_back(&self) -> Option<QuotaExceeded> {
        *locked(&self.held_back)
    }

    /// Records the holder's lease as the queue's task now sees it.
    pub(super) fn set_holder(&self, holder: Option<&Lock>) {
        *locked(&self.holder) = holder.map(|lock| (lock.fencing_token, lock.expires_at));
    }

    /// Records until when the lock, held by no live lease, is in a lock-delay.
    pub(super) fn set_delayed_until(&self, until: Option<DateTime<Utc>>) {
        *locked(&self.delayed_until) = until;
    }

    /// What the poller read of the lock: when it looks free, the task attempts; when it shows
    /// another lease than the task last saw, the task looks for itself. Nothing else wakes it.
    pub(super) fn observe(&self, seen: Option<&Lock>) {
        match seen {
            None => self.wake(true),
            Some(lock) => {
                let known = *locked(&self.holder);
                if known != Some((lock.fencing_token, lock.expires_at)) {
                    self.wake(false);
                }
            }
        }
    }

    /// Whether the queue's task has seen, and still counts as live at `now`, a lease that keeps
    /// the lock from its head: a holder's lease, or one in its lock-delay. A wait that ends
    /// without that knowledge (the store did not answer the task in time) cannot say the lock is
    /// held: it answers that the store is unavailable.
    pub(super) fn knows_it_held(&self, now: DateTime<Utc>) -> bool {
        let live = locked(&self.holder).is_some_and(|(_, expires_at)| now < expires_at);
        let delayed = locked(&self.delayed_until).is_some_and(|until| now < until);
        live || delayed
    }

    pub(super) fn retry_after_seconds(&self, now: DateTime<Utc>) -> u64 {
        let expires_at = locked(&self.holder).map(|(_, expires_at)| expires_at);
        let delayed_until = *locked(&self.delayed_until);
        expires_at
            .max(delayed_until)
            .and_then(|at| (at - now).to_std().ok())
            .map_or(1, |left| left.as_secs() + 1)
    }
}

/// The same failure, for another waiter (repository errors are not `Clone`).
pub(super) fn copy_error(error: &RepositoryError) -> RepositoryError {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    match error {
        RepositoryError::Unavailable(_) => RepositoryError::unavailable(text),
        RepositoryError::StorageFull(_) => RepositoryError::storage_full(text),
        RepositoryError::Internal(_) => RepositoryError::internal(text),
    }
}
