//! What each use case answers, as its caller hears it: the outcome types the use cases return
//! and the events port reports. A leaf: it knows the domain's values only, so the port that
//! reports them depends on no use case.

use chrono::{DateTime, Utc};
use lock_domain::{
    Capacity, Leader, Lock, Permit, RenewResult, RepositoryError, ResourceName, Weight,
};

use crate::quota::QuotaExceeded;

/// What a look at one name found (a lock's status, a semaphore's, an election's leader).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked<T> {
    /// Held by live leases: these.
    Held(T),
    /// No live lease, but the last one ran out and keeps its place (its lock-delay) until
    /// `available_at`, in about `retry_after_seconds` (at least 1).
    Delayed {
        available_at: DateTime<Utc>,
        retry_after_seconds: u64,
    },
    /// No live lease, and nothing keeps the place.
    Free,
}

impl<T> Looked<T> {
    /// `Held(held)`, or what a place with no live lease comes to: `Delayed` until the end of a
    /// lock-delay, `Free` without one.
    pub(crate) fn of(held: Option<T>, delayed: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Self {
        match (held, delayed) {
            (Some(held), _) => Self::Held(held),
            (None, Some(available_at)) => Self::Delayed {
                available_at,
                retry_after_seconds: crate::lock_delay::seconds_until(available_at, now),
            },
            (None, None) => Self::Free,
        }
    }
}

/// A semaphore with live holders, and how many acquires of it wait in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSemaphore {
    pub state: lock_domain::SemaphoreState,
    pub waiting: usize,
}

/// How an acquire ended, as the caller hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// Granted: at once, or after standing in line (`waited`).
    Granted { lock: Lock, waited: bool },
    /// Another owner holds the lock, and the request did not wait: these holders (the exclusive
    /// holder, or the readers), as the refusal named them at the instant it refused; none when
    /// it did not name them (a shared acquire kept behind a waiting writer of this process, a
    /// lock-delay's end said instead).
    Held { holders: Vec<Lock> },
    /// No live lease holds the lock, but one of another owner ran out less than its lock-delay
    /// ago: the lock is available again in about this many seconds (at least 1). Nothing changed.
    Delayed { retry_after_seconds: u64 },
    /// The caller holds the lock in the other mode (shared or exclusive): nothing changed.
    ModeMismatch,
    /// The wait ended without a grant; the holder's lease, as last seen, ends in about this
    /// many seconds (at least 1).
    TimedOut { retry_after_seconds: u64 },
    /// Granted after a wait, but the client had hung up by then: the grant was undone (a
    /// re-grant of a lease the owner already held is left as it was). Nobody hears this answer.
    HungUp,
}

impl Acquired {
    /// How an acquire that asked to wait was answered, for the wait histogram.
    pub(crate) fn waited(&self) -> Waited {
        match self {
            Acquired::Granted { .. } => Waited::Granted,
            Acquired::TimedOut { .. } => Waited::TimedOut,
            Acquired::HungUp => Waited::HungUp,
            Acquired::Held { .. } | Acquired::Delayed { .. } | Acquired::ModeMismatch => {
                Waited::Refused
            }
        }
    }
}

/// How an acquire of semaphore permits ended, as the caller hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermitsAcquired {
    /// Granted: at once, or after standing in line (`waited`).
    Granted { permit: Permit, waited: bool },
    /// Too few permits were free (or waiters of this process were first in line), and the
    /// request did not wait: `available` of `limit` were free. When grants that ran out keep
    /// permits in their lock-delay, the first of them are free again in about
    /// `retry_after_seconds` (at least 1).
    Unavailable {
        limit: Capacity,
        available: u64,
        retry_after_seconds: Option<u64>,
    },
    /// The wait ended without a grant: `available` of `limit` were free when it ended, and
    /// the earliest live lease ends in about `retry_after_seconds` (at least 1).
    TimedOut {
        limit: Capacity,
        available: u64,
        retry_after_seconds: u64,
    },
    /// The holders (live, or kept by a lock-delay) use this other limit: nothing changed.
    LimitMismatch(Capacity),
    /// The owner holds a live grant of these other permits: nothing changed.
    PermitsMismatch(Weight),
    /// Granted after a wait, but the client had hung up by then: the grant was undone.
    HungUp,
}

/// Which primitive a wait, a contended acquire or a hold was of: the `primitive` label of the
/// wait and hold histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// An exclusive lock.
    Lock,
    /// A lock in shared (read) mode.
    SharedLock,
    Semaphore,
    Election,
    /// A set of locks acquired all or none.
    Set,
}

impl Primitive {
    /// Every primitive, in the order of [`Self::index`].
    pub const ALL: [Primitive; 5] = [
        Primitive::Lock,
        Primitive::SharedLock,
        Primitive::Semaphore,
        Primitive::Election,
        Primitive::Set,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Primitive::Lock => "lock",
            Primitive::SharedLock => "shared_lock",
            Primitive::Semaphore => "semaphore",
            Primitive::Election => "election",
            Primitive::Set => "set",
        }
    }

    /// Its place in [`Self::ALL`], for tables of handles resolved once.
    pub fn index(self) -> usize {
        self as usize
    }

    /// A lock's lease in `shared` mode or not.
    pub fn of_lock(shared: bool) -> Self {
        if shared {
            Primitive::SharedLock
        } else {
            Primitive::Lock
        }
    }

    /// The primitive of a lease of `kind` (a reader's when `shared`).
    pub fn of_lease(kind: lock_domain::LeaseKind, shared: bool) -> Self {
        match kind {
            lock_domain::LeaseKind::Lock => Self::of_lock(shared),
            lock_domain::LeaseKind::Semaphore => Primitive::Semaphore,
            lock_domain::LeaseKind::Election => Primitive::Election,
        }
    }
}

/// How an acquire that asked to wait (`wait_seconds` > 0) was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Waited {
    /// Granted (elected), at once or after standing in line.
    Granted,
    /// The wait ended without a grant.
    TimedOut,
    /// Refused without waiting to the end: held in the other mode, another limit or number of
    /// permits, not available in a lock-delay, the tenant's quota, the session gone, too many
    /// waiters.
    Refused,
    /// Granted after its client had gone, and undone.
    HungUp,
}

impl Waited {
    /// Every answer, in the order of [`Self::index`].
    pub const ALL: [Waited; 4] = [
        Waited::Granted,
        Waited::TimedOut,
        Waited::Refused,
        Waited::HungUp,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Waited::Granted => "granted",
            Waited::TimedOut => "timed_out",
            Waited::Refused => "refused",
            Waited::HungUp => "hung_up",
        }
    }

    /// Its place in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a hold (a granted lease) ended: through this process (a release, a force-release), or
/// by running out, as the store recorded it and this process took it
/// (`StoreHealth::take_expired_holds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldEnd {
    /// Released (resigned) by its holder, or ended with its session closed by its client.
    Released,
    /// Ended by an admin's force-release (of its name, or of its session).
    ForceReleased,
    /// Ran out (its lease, or its session) before anyone ended it.
    Expired,
}

impl HoldEnd {
    /// Every end, in the order of [`Self::index`].
    pub const ALL: [HoldEnd; 3] = [HoldEnd::Released, HoldEnd::ForceReleased, HoldEnd::Expired];

    /// The label value (`force-released` as the sessions' reasons spell it, `expired` as the
    /// history does).
    pub fn as_str(self) -> &'static str {
        match self {
            HoldEnd::Released => "released",
            HoldEnd::ForceReleased => "force-released",
            HoldEnd::Expired => "expired",
        }
    }

    /// Its place in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Which limit refused a waiting acquire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitersFull {
    /// The server's limit of waiting acquires in all.
    Total,
    /// The limit of one tenant.
    Tenant,
    /// The tenant's own `max_waiters` quota, which is `allowed`.
    Quota { allowed: u64 },
}

/// What a fence check was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fenced {
    Lock,
    Semaphore,
    /// A term checked against an election's leader.
    Election,
}

/// How a campaign ended, as the candidate hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Campaigned {
    /// The candidate leads: newly elected (a new, larger term: `new_term`), or the sitting
    /// leader re-granted its lease from now (its term kept). `waited` when it stood in line
    /// first.
    Elected {
        leader: Leader,
        waited: bool,
        new_term: bool,
    },
    /// Another candidate leads (`leader`): refused at once, the leader the refusal named at the
    /// instant it refused; after a wait that ended, or in a lock-delay, the leader as read right
    /// after (`None` when the office fell vacant in between, or is vacant but in the lock-delay
    /// of a leader whose lease ran out). Never the candidate itself: a campaign whose wait ended
    /// and that then reads its own candidate as the leader is re-granted as the sitting leader's,
    /// and answered [`Campaigned::Elected`]. After a wait that ended, or in a lock-delay,
    /// `retry_after_seconds` is when the office may be free, as last seen (at least 1).
    NotElected {
        leader: Option<Leader>,
        retry_after_seconds: Option<u64>,
    },
    /// Elected after a wait, but the candidate had hung up by then: the grant was undone.
    /// Nobody hears this answer.
    HungUp,
}

/// The answer to an operation only the leader may make (proclaim, renew).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leading {
    /// The caller leads: the leader as it is now.
    Leader(Leader),
    /// Another candidate leads; nothing changed.
    NotLeader,
    /// No one leads; nothing changed.
    Vacant,
}

impl From<RenewResult> for Leading {
    fn from(result: RenewResult) -> Self {
        match result {
            RenewResult::Renewed(lock) => Leading::Leader(Leader::of(lock)),
            RenewResult::Forbidden => Leading::NotLeader,
            RenewResult::NotFound => Leading::Vacant,
        }
    }
}

/// How a multi-lock acquire ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiAcquired {
    /// Every lock, in request order; `waited` when the request asked to wait.
    Granted { locks: Vec<Lock>, waited: bool },
    /// These locks could not be granted now, and the request did not wait; nothing changed.
    Unavailable { resources: Vec<ResourceName> },
    /// The wait ended with these locks still unavailable; the last of their leases, as last
    /// seen, ends in about `retry_after_seconds` (at least 1).
    TimedOut {
        resources: Vec<ResourceName>,
        retry_after_seconds: u64,
    },
    /// Granted after a wait, but the client had gone: every grant was undone.
    HungUp,
}

/// Why an acquire was not answered.
#[derive(Debug)]
pub enum AcquireError {
    /// The store failed: nothing was granted.
    Store(RepositoryError),
    /// The acquire would wait, but too many already do: nothing was attempted.
    WaitersFull(WaitersFull),
    /// The acquire would go over a limit of its tenant (`max_live_leases`, `max_waiters`):
    /// nothing was granted. A waiting acquire whose grant the tenant's `max_live_leases` held
    /// back until its wait ended is answered this too.
    QuotaExceeded(QuotaExceeded),
    /// The acquire was made under a session that is not live (never the tenant's, closed,
    /// forced or run out; for a waiting acquire, also one that ended during the wait): nothing
    /// was granted.
    SessionNotFound,
}

/// An acquire's outcome from the store: the grant or the refusal, and a refusal for want of a
/// live session as the error it is to the caller.
pub(crate) fn acquired(
    outcome: lock_domain::LeaseOutcome,
) -> Result<Result<lock_domain::Grant, lock_domain::Refusal>, AcquireError> {
    match outcome.acquired()? {
        Err(lock_domain::Refusal::SessionNotFound) => Err(AcquireError::SessionNotFound),
        answer => Ok(answer),
    }
}

/// A set's acquire outcome from the store, as [`acquired`].
pub(crate) fn acquired_all(
    outcome: lock_domain::LeaseOutcome,
) -> Result<Result<Vec<lock_domain::Grant>, lock_domain::Refusal>, AcquireError> {
    match outcome.acquired_all()? {
        Err(lock_domain::Refusal::SessionNotFound) => Err(AcquireError::SessionNotFound),
        answer => Ok(answer),
    }
}

impl AcquireError {
    /// How an acquire that asked to wait was answered, when it was refused with this error;
    /// `None` for a store failure (not an answer about the place).
    pub(crate) fn waited(&self) -> Option<Waited> {
        match self {
            AcquireError::Store(_) => None,
            AcquireError::WaitersFull(_)
            | AcquireError::QuotaExceeded(_)
            | AcquireError::SessionNotFound => Some(Waited::Refused),
        }
    }
}

impl From<RepositoryError> for AcquireError {
    fn from(error: RepositoryError) -> Self {
        Self::Store(error)
    }
}
