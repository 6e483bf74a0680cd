//! Checking a fencing token on the lock server (Chubby's `CheckSequencer`): is `N` the token of
//! a lease that is live right now? A resource that cannot store tokens asks this before a write
//! it protects. The answer is only as fresh as the read it came from: docs/fencing.md says what a
//! check followed by a write can and cannot promise.

use crate::{FencingToken, Hold, Lease, Lock};

/// The verdict on a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceVerdict<H> {
    /// The token is a live holder's: here is that holder's lease.
    Valid(H),
    /// No live lease has the token: it belongs to a holder whose lease ended (or to none).
    /// `current` is the newest live holder's token (the largest), or `None` when no lease is live.
    Stale { current: Option<FencingToken> },
}

impl<H> FenceVerdict<H> {
    /// Whether the token was a live holder's.
    pub fn is_valid(&self) -> bool {
        matches!(self, FenceVerdict::Valid(_))
    }
}

/// The verdict on `token` among `live`, the leases that are live right now (whatever their
/// order), each with its token from `token_of`.
pub fn check_fence<H>(
    live: impl IntoIterator<Item = H>,
    token: FencingToken,
    token_of: impl Fn(&H) -> FencingToken,
) -> FenceVerdict<H> {
    let mut current = None;
    for holder in live {
        let held = token_of(&holder);
        if held == token {
            return FenceVerdict::Valid(holder);
        }
        current = current.max(Some(held));
    }
    FenceVerdict::Stale { current }
}

/// The verdict on `token` for a lock held as `hold` now (`None`: no live lease): for a shared
/// lock, any live holder's token is valid.
pub fn check_lock_fence(hold: Option<Hold>, token: FencingToken) -> FenceVerdict<Lock> {
    let live = match hold {
        None => Vec::new(),
        Some(Hold::Exclusive(lock)) => vec![lock],
        Some(Hold::Shared(holders)) => holders,
    };
    check_fence(live, token, |lock| lock.fencing_token)
}

/// The verdict on `token` among a semaphore's live leases (any holder's token is valid).
pub fn check_permit_fence(live: Vec<Lease>, token: FencingToken) -> FenceVerdict<Lease> {
    check_fence(live, token, |lease| lease.fencing_token)
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::{LockMode, Owner, ResourceName};

    fn lock(owner: &str, token: i64, mode: LockMode) -> Lock {
        let at = Utc.timestamp_millis_opt(1_000).unwrap();
        Lock {
            resource: ResourceName::parse("r").unwrap(),
            owner: Owner::parse(owner).unwrap(),
            acquired_at: at,
            expires_at: at + chrono::TimeDelta::seconds(10),
            fencing_token: FencingToken::new(token).unwrap(),
            mode,
            value: None,
        }
    }

    fn token(n: i64) -> FencingToken {
        FencingToken::new(n).unwrap()
    }

    #[test]
    fn a_lock_fence_table() {
        let exclusive = || Some(Hold::Exclusive(lock("a", 7, LockMode::Exclusive)));
        let shared = || {
            Some(Hold::Shared(vec![
                lock("a", 4, LockMode::Shared),
                lock("b", 9, LockMode::Shared),
                lock("c", 6, LockMode::Shared),
            ]))
        };
        // (why, the hold, the token checked, the valid holder's owner or the stale `current`)
        type Case = (
            &'static str,
            Option<Hold>,
            i64,
            Result<&'static str, Option<i64>>,
        );
        let cases: Vec<Case> = vec![
            ("the holder's token", exclusive(), 7, Ok("a")),
            ("an older token", exclusive(), 6, Err(Some(7))),
            ("a newer token than any grant", exclusive(), 8, Err(Some(7))),
            ("no live lease", None, 7, Err(None)),
            ("any shared holder's token", shared(), 4, Ok("a")),
            ("the middle shared holder's", shared(), 6, Ok("c")),
            ("the newest shared holder's", shared(), 9, Ok("b")),
            (
                "no shared holder's: current is the newest",
                shared(),
                5,
                Err(Some(9)),
            ),
        ];
        for (why, hold, n, expected) in cases {
            let verdict = check_lock_fence(hold, token(n));
            match (verdict, expected) {
                (FenceVerdict::Valid(lock), Ok(owner)) => {
                    assert_eq!(lock.owner.as_str(), owner, "{why}");
                    assert_eq!(lock.fencing_token, token(n), "{why}");
                }
                (FenceVerdict::Stale { current }, Err(newest)) => {
                    assert_eq!(current, newest.map(token), "{why}");
                }
                (verdict, expected) => panic!("{why}: {verdict:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn validity_is_reported() {
        assert!(check_fence([token(3)], token(3), |t| *t).is_valid());
        assert!(!check_fence([token(3)], token(2), |t| *t).is_valid());
        assert!(!check_fence(Vec::<FencingToken>::new(), token(1), |t| *t).is_valid());
    }
}
