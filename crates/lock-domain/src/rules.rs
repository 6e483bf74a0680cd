//! The acquire, renew and release decisions, as pure functions of the current lock and `now`.
//!
//! Adapters that can run them inside one write transaction call them directly; adapters that
//! compile them into a single conditional SQL statement must decide exactly the same way, which
//! the repository contract suite checks.

use chrono::{DateTime, Utc};

use crate::holders::{decide_acquire_among, decide_release_among, HolderDecision};
use crate::{Capacity, Lock, Owner, ReleaseResult, Weight};

/// A lease is over from `expires_at` on: at exactly `expires_at` the lock is expired.
pub fn is_expired(expires_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now >= expires_at
}

/// What an acquire does with the resource's current lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcquireDecision {
    /// No live lock: grant with a new, larger fencing token.
    GrantNew,
    /// The caller already holds the live lock: re-grant from `now`, keeping the token.
    Extend,
    /// Another owner holds the live lock: change nothing.
    Deny,
}

/// Decides an acquire of the resource whose current lock is `current`: the holders' decision
/// ([`decide_acquire_among`]) over at most one holder that takes the whole lock.
pub fn decide_acquire(
    current: Option<&Lock>,
    owner: &Owner,
    now: DateTime<Utc>,
) -> AcquireDecision {
    match decide_acquire_among(
        one_holder(current),
        owner,
        Weight::EXCLUSIVE,
        Capacity::LOCK,
        now,
    ) {
        HolderDecision::GrantNew => AcquireDecision::GrantNew,
        HolderDecision::Extend(_) => AcquireDecision::Extend,
        // Another owner's live lock. (One holder of the whole capacity, asked for the whole
        // capacity, has no other capacity nor weight: the mismatches cannot come.)
        HolderDecision::Unavailable { .. }
        | HolderDecision::CapacityMismatch(_)
        | HolderDecision::WeightMismatch(_) => AcquireDecision::Deny,
    }
}

/// Decides a release: only the owner of a live lock may delete it
/// ([`decide_release_among`] over at most one holder).
pub fn decide_release(current: Option<&Lock>, owner: &Owner, now: DateTime<Utc>) -> ReleaseResult {
    decide_release_among(one_holder(current), owner, now)
}

/// The lock, if there is one, as the holders of its resource.
fn one_holder(current: Option<&Lock>) -> &[Lock] {
    current.map_or(&[], std::slice::from_ref)
}

/// Whether undoing `grant` ends the resource's current lock: only when that lock is live, is
/// still exactly the grant (same owner, token, start and end: never a later re-grant or renewal)
/// and was granted anew (`current_regranted` is false): a re-grant continues a lease its owner
/// was already told it holds, so it is never undone.
pub fn decide_undo(
    current: Option<&Lock>,
    current_regranted: bool,
    grant: &Lock,
    now: DateTime<Utc>,
) -> bool {
    !current_regranted
        && current.is_some_and(|lock| {
            lock.is_live_at(now)
                && lock.owner == grant.owner
                && lock.fencing_token == grant.fencing_token
                && lock.acquired_at == grant.acquired_at
                && lock.expires_at == grant.expires_at
        })
}

/// What a renew does with the resource's current lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewDecision {
    /// The caller holds the live lock: move `expires_at` to `now + ttl`.
    Renew,
    /// No live lock: an expired lock belongs to nobody and must be re-acquired.
    NotFound,
    /// Another owner holds the live lock.
    Forbidden,
}

/// Decides a renew: only the owner of a live lock may extend it.
pub fn decide_renew(current: Option<&Lock>, owner: &Owner, now: DateTime<Utc>) -> RenewDecision {
    RenewDecision::from(decide_release(current, owner, now))
}

/// A renew is allowed exactly where a release would be: by the holder of a live lease.
impl From<ReleaseResult> for RenewDecision {
    fn from(release: ReleaseResult) -> Self {
        match release {
            ReleaseResult::Released(_) => RenewDecision::Renew,
            ReleaseResult::NotFound => RenewDecision::NotFound,
            ReleaseResult::Forbidden => RenewDecision::Forbidden,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;
    use crate::{FencingToken, ResourceName};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn lock(owner: &str, expires_ms: i64) -> Lock {
        Lock {
            resource: ResourceName::parse("r").unwrap(),
            owner: Owner::parse(owner).unwrap(),
            acquired_at: at(0),
            expires_at: at(expires_ms),
            fencing_token: FencingToken::new(7).unwrap(),
            mode: crate::LockMode::Exclusive,
            value: None,
        }
    }

    #[test]
    fn expiry_boundary_is_exact_to_the_millisecond() {
        assert!(!is_expired(at(1_000), at(999)));
        assert!(is_expired(at(1_000), at(1_000)));
        assert!(is_expired(at(1_000), at(1_001)));
        assert!(lock("a", 1_000).is_live_at(at(999)));
        assert!(!lock("a", 1_000).is_live_at(at(1_000)));
        assert!(lock("a", 1_000).is_live_at(at(1_000) - TimeDelta::milliseconds(1)));
    }

    #[test]
    fn acquire_table() {
        let me = Owner::parse("me").unwrap();
        let cases: &[(Option<Lock>, i64, AcquireDecision)] = &[
            (None, 0, AcquireDecision::GrantNew),
            (Some(lock("me", 1_000)), 999, AcquireDecision::Extend),
            (Some(lock("me", 1_000)), 1_000, AcquireDecision::GrantNew),
            (Some(lock("other", 1_000)), 999, AcquireDecision::Deny),
            (Some(lock("other", 1_000)), 1_000, AcquireDecision::GrantNew),
            (Some(lock("other", 1_000)), 5_000, AcquireDecision::GrantNew),
            (Some(lock("Me", 1_000)), 0, AcquireDecision::Deny),
        ];
        for (current, now, expected) in cases {
            assert_eq!(
                decide_acquire(current.as_ref(), &me, at(*now)),
                *expected,
                "current {current:?} at {now}"
            );
        }
    }

    #[test]
    fn release_and_renew_table() {
        let me = Owner::parse("me").unwrap();
        let cases: &[(Option<Lock>, i64, ReleaseResult, RenewDecision)] = &[
            (None, 0, ReleaseResult::NotFound, RenewDecision::NotFound),
            (
                Some(lock("me", 1_000)),
                999,
                ReleaseResult::Released(FencingToken::new(7).unwrap()),
                RenewDecision::Renew,
            ),
            (
                Some(lock("me", 1_000)),
                1_000,
                ReleaseResult::NotFound,
                RenewDecision::NotFound,
            ),
            (
                Some(lock("other", 1_000)),
                999,
                ReleaseResult::Forbidden,
                RenewDecision::Forbidden,
            ),
            (
                Some(lock("other", 1_000)),
                1_000,
                ReleaseResult::NotFound,
                RenewDecision::NotFound,
            ),
            (
                Some(lock("ME", 1_000)),
                0,
                ReleaseResult::Forbidden,
                RenewDecision::Forbidden,
            ),
        ];
        for (current, now, release, renew) in cases {
            assert_eq!(
                decide_release(current.as_ref(), &me, at(*now)),
                *release,
                "{current:?} at {now}"
            );
            assert_eq!(
                decide_renew(current.as_ref(), &me, at(*now)),
                *renew,
                "{current:?} at {now}"
            );
        }
    }
}
