//! A granted lock and the outcomes of the operations on it.

use chrono::{DateTime, Utc};

use crate::{decisions::is_expired, FencingToken, LeaseValue, Owner, ResourceName};

/// How a lock is held: alone (exclusive, the v1 lock), or beside other shared holders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LockMode {
    /// One holder excludes every other (the default).
    #[default]
    Exclusive,
    /// Shared holders coexist, each with its own lease and token; an exclusive holder excludes
    /// them all.
    Shared,
}

impl LockMode {
    /// The name of the mode on the wire and in logs: `exclusive` or `shared`.
    pub fn as_str(self) -> &'static str {
        match self {
            LockMode::Exclusive => "exclusive",
            LockMode::Shared => "shared",
        }
    }
}

/// A lock as it is held: who holds which resource in which mode, since when, until when, and
/// with which token. Timestamps have millisecond precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub resource: ResourceName,
    pub owner: Owner,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub fencing_token: FencingToken,
    pub mode: LockMode,
    /// The value stored with this holder's lease (a leader's address, a job's progress), or
    /// `None` when never set.
    pub value: Option<LeaseValue>,
}

impl Lock {
    /// Whether the lease still runs at `now` (it ends exactly at `expires_at`).
    pub fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        !is_expired(self.expires_at, now)
    }
}

/// The answer to an acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcquireOutcome {
    /// The caller holds the lock now (a new grant, or a same-owner re-acquire of its live lock).
    Granted(Lock),
    /// Another owner holds a live lock on the resource; nothing changed.
    Held,
}

/// The answer to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseResult {
    /// The caller's live lock was ended; it had this fencing token.
    Released(FencingToken),
    /// There is no live lock on the resource (never acquired, released, or expired).
    NotFound,
    /// A live lock exists but another owner holds it; nothing changed.
    Forbidden,
}

/// The answer to a renew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewResult {
    /// The caller's live lock now expires at `now + ttl`; `acquired_at` and the token are kept.
    Renewed(Lock),
    /// There is no live lock on the resource: an expired lock belongs to nobody.
    NotFound,
    /// A live lock exists but another owner holds it; nothing changed.
    Forbidden,
}
