//! Lock-delay (Chubby's, Consul's): after a lease ends by expiry (its holder crashed or paused,
//! and did not release), its place stays unavailable to other owners for a short delay, so that
//! a paused holder that wakes up does less damage to a resource that cannot check fencing tokens.
//! A release ends the lease with no delay.

use chrono::{DateTime, TimeDelta, Utc};

use crate::validation::ValidationError;
use crate::{Lease, Lock, Owner};

/// A validated lock-delay: a whole number of seconds in `0..=MAX_SECONDS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LockDelay(u32);

impl LockDelay {
    /// The longest lock-delay, in seconds.
    pub const MAX_SECONDS: u32 = 60;
    /// No delay: the place of a lease that ran out is free at once (lockd v1).
    pub const NONE: Self = Self(0);

    /// # Errors
    /// [`ValidationError::OutOfRange`] when `seconds` is not in `0..=60`.
    pub fn parse(seconds: i64) -> Result<Self, ValidationError> {
        match u32::try_from(seconds) {
            Ok(seconds) if seconds <= Self::MAX_SECONDS => Ok(Self(seconds)),
            _ => Err(ValidationError::OutOfRange {
                min: 0,
                max: i64::from(Self::MAX_SECONDS),
                actual: seconds,
            }),
        }
    }

    pub fn seconds(self) -> u32 {
        self.0
    }

    pub fn millis(self) -> i64 {
        i64::from(self.0) * 1_000
    }

    pub fn as_time_delta(self) -> TimeDelta {
        TimeDelta::seconds(i64::from(self.0))
    }
}

/// Until when `lease`, which ended by expiry (not by release) with lock-delay `delay`, keeps its
/// place from `owner` at `now`: `Some(expires_at + delay)` while that is later than `now` and
/// `owner` is another owner than the lease's, else `None` (the place is free for `owner`, as far
/// as this lease goes). A live lease is not this rule's business (`decide_acquire` decides).
pub fn delayed_until(
    lease: &Lock,
    delay_ms: i64,
    owner: &Owner,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let available_at = lease.expires_at + TimeDelta::milliseconds(delay_ms.max(0));
    (!lease.is_live_at(now) && &lease.owner != owner && now < available_at).then_some(available_at)
}

/// Whether `lease`, with lock-delay `delay_ms`, holds no place for anyone at `now`: it ran out,
/// and its delay is over (`now >= expires_at + delay`). Such a lease may be ended (its row
/// deleted) without changing any decision.
pub fn place_is_free(lease: &Lease, delay_ms: i64, now: DateTime<Utc>) -> bool {
    !lease.is_live_at(now) && now >= lease.expires_at + TimeDelta::milliseconds(delay_ms.max(0))
}

/// The leases that hold places at `now` as `owner` must count them, from every lease of a
/// resource with its lock-delay (ms): the live ones as they are, and each of another owner's that
/// ran out less than its delay ago as if it ran until `expires_at + delay` (its place is kept;
/// the one decision, `decide_claim`, then counts it). Leases whose place is free are left
/// out.
pub fn holding_places(
    leases: impl IntoIterator<Item = (Lease, i64)>,
    owner: &Owner,
    now: DateTime<Utc>,
) -> Vec<Lease> {
    leases
        .into_iter()
        .filter_map(|(lease, delay_ms)| {
            if lease.is_live_at(now) {
                return Some(lease);
            }
            if &lease.owner == owner || place_is_free(&lease, delay_ms, now) {
                return None;
            }
            let available_at = lease.expires_at + TimeDelta::milliseconds(delay_ms.max(0));
            Some(Lease {
                expires_at: available_at,
                ..lease
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FencingToken, LockMode, ResourceName};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    #[test]
    fn parse_table() {
        let cases: &[(i64, Option<u32>)] = &[
            (0, Some(0)),
            (1, Some(1)),
            (60, Some(60)),
            (61, None),
            (-1, None),
            (i64::MAX, None),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                LockDelay::parse(*raw).ok().map(LockDelay::seconds),
                *expected,
                "{raw}"
            );
        }
        assert_eq!(LockDelay::parse(61).unwrap_err().code(), "out_of_range");
        assert_eq!(LockDelay::parse(15).unwrap().millis(), 15_000);
    }

    #[test]
    fn permits_of_a_grant_that_ran_out_stay_counted_for_others_during_its_delay() {
        let limit = crate::Capacity::semaphore_limit(3).unwrap();
        let lease = |owner: &str, token: i64, expires: i64| Lease {
            owner: Owner::parse(owner).unwrap(),
            weight: crate::Weight::permits(1, limit).unwrap(),
            capacity: limit,
            acquired_at: at(0),
            expires_at: at(expires),
            fencing_token: FencingToken::new(token).unwrap(),
            value: None,
        };
        let me = Owner::parse("me").unwrap();
        let leases = vec![
            (lease("live", 1, 5_000), 0),
            (lease("paused", 2, 1_000), 2_000),
            (lease("me", 3, 1_000), 2_000),
            (lease("done", 4, 500), 0),
        ];
        let places = holding_places(leases, &me, at(2_000));
        let owners: Vec<(&str, DateTime<Utc>)> = places
            .iter()
            .map(|l| (l.owner.as_str(), l.expires_at))
            .collect();
        assert_eq!(owners, [("live", at(5_000)), ("paused", at(3_000))]);
        // A place is free only once the lease ran out and its delay is over, to the millisecond.
        let paused = lease("paused", 2, 1_000);
        let cases: &[(i64, i64, bool)] = &[
            // (delay, now) -> free
            (2_000, 999, false),
            (2_000, 1_000, false),
            (2_000, 2_999, false),
            (2_000, 3_000, true),
            (0, 999, false),
            (0, 1_000, true),
        ];
        for &(delay, now, free) in cases {
            assert_eq!(
                place_is_free(&paused, delay, at(now)),
                free,
                "{delay} {now}"
            );
        }
    }

    #[test]
    fn an_expired_lease_keeps_its_place_from_others_for_its_delay() {
        let lease = Lock {
            resource: ResourceName::parse("r").unwrap(),
            owner: Owner::parse("paused").unwrap(),
            acquired_at: at(0),
            expires_at: at(1_000),
            fencing_token: FencingToken::new(3).unwrap(),
            mode: LockMode::Exclusive,
            value: None,
        };
        let other = Owner::parse("other").unwrap();
        let cases: &[(i64, i64, Option<i64>)] = &[
            // (delay, now) -> available_at
            (5_000, 999, None), // live: not this rule's
            (5_000, 1_000, Some(6_000)),
            (5_000, 5_999, Some(6_000)),
            (5_000, 6_000, None), // the delay is over, to the millisecond
            (0, 1_000, None),     // no delay
        ];
        for (delay, now, expected) in cases {
            assert_eq!(
                delayed_until(&lease, *delay, &other, at(*now)),
                expected.map(at),
                "delay {delay} at {now}"
            );
        }
        assert_eq!(
            delayed_until(&lease, 5_000, &lease.owner, at(2_000)),
            None,
            "the lease's own owner may come back"
        );
    }
}
