//! Shared (read/write) locks, as pure decisions over what a store keeps for a resource: its lock
//! row (the v1 record: one owner, one expiry, one token) and the leases of its shared holders.
//!
//! While shared holders are live, the row stands for them all: its owner is
//! [`Owner::shared_holders`], its expiry the latest end among their leases, its token the largest
//! of theirs. The exclusive operations of v1 read and write only the row, so they need no change:
//! to them a shared hold is "another owner holds a live lock" until the last shared lease ends,
//! and the row's expiry is exactly when an exclusive acquire may take it over. Every shared
//! operation rewrites the row from the leases ([`shared_row`]) in the same transaction.

use chrono::{DateTime, Utc};

use crate::{
    decide_release_among, decide_undo, live_holders, Capacity, FencingToken, Lease, LeaseValue,
    Lock, LockMode, Owner, ReleaseResult, ResourceName, Weight,
};

/// How a resource is held right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// One exclusive holder.
    Exclusive(Lock),
    /// One or more shared holders, in fencing-token order.
    Shared(Vec<Lock>),
}

impl Hold {
    /// The mode in which `owner` holds the lock here, if it is one of the holders.
    pub fn mode_of(&self, owner: &Owner) -> Option<LockMode> {
        match self {
            Hold::Exclusive(lock) => (&lock.owner == owner).then_some(LockMode::Exclusive),
            Hold::Shared(holders) => holders
                .iter()
                .any(|lock| &lock.owner == owner)
                .then_some(LockMode::Shared),
        }
    }
}

/// The answer to a shared acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedAcquireOutcome {
    /// The caller holds a shared lease now (a new grant, or a re-grant of its live one).
    Granted(Lock),
    /// Another owner holds the resource exclusively; nothing changed.
    Held,
    /// The caller holds the resource exclusively; nothing changed (no downgrade in place).
    ModeMismatch,
}

/// The row that stands for the shared leases `shared` at `now`: owned by
/// [`Owner::shared_holders`], from the earliest start to the latest end of the live leases, with
/// the largest of their tokens. `None` when no lease is live: the row is to be ended, so that an
/// exclusive acquire may take the resource at once.
pub fn shared_row(resource: &ResourceName, shared: &[Lease], now: DateTime<Utc>) -> Option<Lock> {
    let live: Vec<&Lease> = live_holders(shared, now).collect();
    Some(Lock {
        resource: resource.clone(),
        owner: Owner::shared_holders(),
        acquired_at: live.iter().map(|lease| lease.acquired_at).min()?,
        expires_at: live.iter().map(|lease| lease.expires_at).max()?,
        fencing_token: live.iter().map(|lease| lease.fencing_token).max()?,
        mode: LockMode::Shared,
        value: None,
    })
}

/// A shared lease as the lock its holder sees.
pub fn shared_lock(resource: &ResourceName, lease: &Lease) -> Lock {
    Lock {
        resource: resource.clone(),
        owner: lease.owner.clone(),
        acquired_at: lease.acquired_at,
        expires_at: lease.expires_at,
        fencing_token: lease.fencing_token,
        mode: LockMode::Shared,
        value: lease.value.clone(),
    }
}

/// A shared lease of `owner` from `now` to `expires_at`, with `value`.
pub fn shared_lease(
    owner: Owner,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    fencing_token: FencingToken,
    value: Option<LeaseValue>,
) -> Lease {
    Lease {
        owner,
        weight: Weight::SHARED,
        capacity: Capacity::LOCK,
        acquired_at: now,
        expires_at,
        fencing_token,
        value,
    }
}

/// How a resource is held at `now`, given its row and its shared leases.
pub fn hold_of(
    resource: &ResourceName,
    row: Option<&Lock>,
    shared: &[Lease],
    now: DateTime<Utc>,
) -> Option<Hold> {
    let row = row.filter(|row| row.is_live_at(now))?;
    if !row.owner.is_shared_holders() {
        return Some(Hold::Exclusive(row.clone()));
    }
    let mut holders: Vec<Lock> = live_holders(shared, now)
        .map(|lease| shared_lock(resource, lease))
        .collect();
    holders.sort_by_key(|lock| lock.fencing_token);
    (!holders.is_empty()).then_some(Hold::Shared(holders))
}

/// Which of a resource's holders `owner` is, for a release or a renew in either mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HolderRole {
    /// The exclusive holder, with its token.
    Exclusive(FencingToken),
    /// One of the shared holders, with its token.
    Shared(FencingToken),
    /// Others hold the resource; the caller holds no live lease there.
    Forbidden,
    /// No one holds the resource.
    NotFound,
}

impl HolderRole {
    /// The answer of a release with this role, once the caller's lease (if any) is ended.
    pub fn release_result(self) -> ReleaseResult {
        match self {
            HolderRole::Exclusive(token) | HolderRole::Shared(token) => {
                ReleaseResult::Released(token)
            }
            HolderRole::Forbidden => ReleaseResult::Forbidden,
            HolderRole::NotFound => ReleaseResult::NotFound,
        }
    }
}

/// Decides which holder `owner` is: the rule of release and renew in both modes (only the
/// holder of a live lease may end or extend it).
pub fn holder_role(
    row: Option<&Lock>,
    shared: &[Lease],
    owner: &Owner,
    now: DateTime<Utc>,
) -> HolderRole {
    match row.filter(|row| row.is_live_at(now)) {
        None => HolderRole::NotFound,
        Some(row) if !row.owner.is_shared_holders() => {
            if &row.owner == owner {
                HolderRole::Exclusive(row.fencing_token)
            } else {
                HolderRole::Forbidden
            }
        }
        Some(_) => match decide_release_among(shared, owner, now) {
            ReleaseResult::Released(token) => HolderRole::Shared(token),
            ReleaseResult::Forbidden => HolderRole::Forbidden,
            ReleaseResult::NotFound => HolderRole::NotFound,
        },
    }
}

/// Whether undoing the shared grant `grant` ends `current`, its owner's shared lease: only when
/// that lease is live, still exactly the grant, and a new grant (not a re-grant), as
/// [`decide_undo`] decides for exclusive grants.
pub fn decide_shared_undo(
    resource: &ResourceName,
    current: Option<&Lease>,
    current_regranted: bool,
    grant: &Lock,
    now: DateTime<Utc>,
) -> bool {
    let current = current.map(|lease| shared_lock(resource, lease));
    decide_undo(current.as_ref(), current_regranted, grant, now)
}

#[cfg(test)]
mod tests;
