//! Durable history: what happened to every lease, recorded by the store in the same transaction as
//! the change itself, and the one rule that names a change ([`name_change`]).
//!
//! A store compares a lease's row before and after a write. The SQL triggers of each backend
//! (migrations `lease_history`) are the only other copy of [`name_change`]; docs/architecture.md
//! puts them side by side.

use chrono::{DateTime, Utc};

use crate::validation::ValidationError;
use crate::{FencingToken, ListLimit, Owner, ResourceName, ResourcePrefix, Tenant};

/// What kind of primitive a record is about. Names of different kinds are unrelated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LeaseKind {
    /// An exclusive or shared lock.
    Lock,
    Semaphore,
    Election,
}

impl LeaseKind {
    pub const ALL: [LeaseKind; 3] = [LeaseKind::Lock, LeaseKind::Semaphore, LeaseKind::Election];

    pub fn as_str(self) -> &'static str {
        match self {
            LeaseKind::Lock => "lock",
            LeaseKind::Semaphore => "semaphore",
            LeaseKind::Election => "election",
        }
    }

    /// Parses [`Self::as_str`]; `None` for any other text.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == raw)
    }
}

/// What happened to a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HistoryEvent {
    /// A new lease, with a new fencing token.
    Granted,
    /// An acquire by the owner already holding the live lease: same token, a new term.
    Regranted,
    /// The lease's end moved (its owner renewed it).
    Renewed,
    /// Its owner ended the lease.
    Released,
    /// The lease ran out. Recorded when that is observed: a takeover, a sweep, the next write.
    Expired,
    /// An admin ended the lease, with a reason.
    ForceReleased,
    /// A grant nobody heard of (its requester hung up, or was told 503) was ended.
    Undone,
}

impl HistoryEvent {
    pub const ALL: [HistoryEvent; 7] = [
        HistoryEvent::Granted,
        HistoryEvent::Regranted,
        HistoryEvent::Renewed,
        HistoryEvent::Released,
        HistoryEvent::Expired,
        HistoryEvent::ForceReleased,
        HistoryEvent::Undone,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HistoryEvent::Granted => "granted",
            HistoryEvent::Regranted => "re-granted",
            HistoryEvent::Renewed => "renewed",
            HistoryEvent::Released => "released",
            HistoryEvent::Expired => "expired",
            HistoryEvent::ForceReleased => "force-released",
            HistoryEvent::Undone => "undone",
        }
    }

    /// Parses [`Self::as_str`]; `None` for any other text.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.as_str() == raw)
    }
}

/// The position of a record in its store's history: larger is later. Within one tenant (and
/// across tenants) ids only grow in the order the changes were committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HistoryId(i64);

impl HistoryId {
    /// # Errors
    /// [`ValidationError::OutOfRange`] below 1.
    pub fn new(value: i64) -> Result<Self, ValidationError> {
        if value >= 1 {
            Ok(Self(value))
        } else {
            Err(ValidationError::OutOfRange {
                min: 1,
                max: i64::MAX,
                actual: value,
            })
        }
    }

    pub fn value(self) -> i64 {
        self.0
    }
}

/// One change to one lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRecord {
    pub id: HistoryId,
    pub tenant: Tenant,
    pub kind: LeaseKind,
    pub name: ResourceName,
    pub owner: Owner,
    pub fencing_token: FencingToken,
    pub event: HistoryEvent,
    /// When the store committed it, by the store's clock (PostgreSQL's on PostgreSQL).
    pub at: DateTime<Utc>,
    /// Why, when someone said: the reason of a force-release.
    pub reason: Option<String>,
    /// Whether the lease was a shared (read) lease of a lock.
    pub shared: bool,
}

/// Which records a history page is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistorySubject {
    /// One lock, semaphore or election.
    One { kind: LeaseKind, name: ResourceName },
    /// Every record of the tenant whose name starts with the prefix (the empty prefix: all).
    Prefix(ResourcePrefix),
}

/// A page of a tenant's history, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryQuery {
    pub subject: HistorySubject,
    /// Only records at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only records older than this one: the cursor of the previous page.
    pub before: Option<HistoryId>,
    pub limit: ListLimit,
}

/// Records, newest first, and the cursor of the next (older) page when there may be one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistoryPage {
    pub records: Vec<HistoryRecord>,
    pub next: Option<HistoryId>,
}

impl HistoryPage {
    /// The page of `records` read with one more than `limit` asked for: the extra one only says
    /// that there is a next page.
    pub fn from_overfetch(mut records: Vec<HistoryRecord>, limit: ListLimit) -> Self {
        let more = records.len() > limit.get();
        records.truncate(limit.get());
        let next = if more {
            records.last().map(|record| record.id)
        } else {
            None
        };
        Self { records, next }
    }
}

/// A lease as a store's row holds it, for [`name_change`]. `acquired_ms == expires_ms` marks a
/// lease ended by its owner whose row stays (PostgreSQL's release); a lease that runs out lasts
/// at least a second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLease {
    pub owner: Owner,
    pub fencing_token: i64,
    pub acquired_ms: i64,
    pub expires_ms: i64,
}

impl RowLease {
    fn ended_by_release(&self) -> bool {
        self.acquired_ms == self.expires_ms
    }

    fn is_new_lease_after(&self, before: &RowLease) -> bool {
        self.owner != before.owner || self.fencing_token != before.fencing_token
    }
}

/// Which side of a change a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// What a change of one row of leases means, in the order to record it: the rule every store
/// applies (the SQL triggers are its other copy). `now_ms` is the write's clock; `ending` is what
/// the write said the ending of a live lease is (force-release, undo), if anything. The row of a lock's shared
/// holders (an owner that is the shared holders' marker) records nothing: each reader's lease
/// does.
pub fn name_change(
    before: Option<&RowLease>,
    after: Option<&RowLease>,
    now_ms: i64,
    ending: Option<HistoryEvent>,
) -> Vec<(HistoryEvent, Side)> {
    let before = before.filter(|lease| !lease.owner.is_shared_holders());
    let after = after.filter(|lease| !lease.owner.is_shared_holders());
    // What a write says an ending is applies to a live lease: one that ran out expired.
    let ended = |lease: &RowLease| {
        if lease.expires_ms <= now_ms {
            HistoryEvent::Expired
        } else {
            ending.unwrap_or(HistoryEvent::Released)
        }
    };
    match (before, after) {
        (None, None) => vec![],
        (Some(before), None) if before.ended_by_release() => vec![],
        (Some(before), None) => vec![(ended(before), Side::Before)],
        (None, Some(after)) if after.ended_by_release() => vec![],
        (None, Some(_)) => vec![(HistoryEvent::Granted, Side::After)],
        (Some(before), Some(after)) if after.is_new_lease_after(before) => {
            let mut changes = Vec::with_capacity(2);
            if !before.ended_by_release() {
                changes.push((HistoryEvent::Expired, Side::Before));
            }
            if !after.ended_by_release() {
                changes.push((HistoryEvent::Granted, Side::After));
            }
            changes
        }
        (Some(before), Some(after)) => {
            if before.ended_by_release() {
                vec![]
            } else if after.ended_by_release() {
                // Ended in place: by its owner or an admin when live, else it had run out.
                vec![(ended(before), Side::After)]
            } else if after.acquired_ms != before.acquired_ms {
                vec![(HistoryEvent::Regranted, Side::After)]
            } else if after.expires_ms != before.expires_ms {
                vec![(HistoryEvent::Renewed, Side::After)]
            } else {
                vec![]
            }
        }
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
