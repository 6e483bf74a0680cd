//! The acquire, release and renew decisions of a resource and its holders, as pure functions of
//! its leases and `now`: the only Rust copy of the rule "the weights of the live holders never add
//! up to more than the capacity", for every kind (an exclusive lock is one holder of weight 1 out
//! of 1, a [`Holder`]; semaphores and shared locks are many). Expired leases count for
//! nothing; adapters pass every lease they have and the decision ignores the ended ones.

use chrono::{DateTime, Utc};

use crate::{Capacity, FencingToken, Lease, Lock, Owner, ReleaseResult, RenewDecision, Weight};

/// What an acquire does among the resource's holders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HolderDecision {
    /// There is room: grant a new lease with a new, larger fencing token.
    GrantNew,
    /// The caller holds a live lease of the same weight: re-grant it from `now`, keeping its
    /// token (as a v1 same-owner acquire does).
    Extend(FencingToken),
    /// Too little room: only `available` of the capacity is free. Nothing changes.
    Unavailable { available: u64 },
    /// The holders acquired against another capacity (a semaphore's limit): nothing changes.
    /// The capacity is free to change once no holder is left: the holders passed in include
    /// the places a lock-delay keeps ([`crate::holding_places`]).
    CapacityMismatch(Capacity),
    /// The caller holds a live lease of another weight (other permits, the other lock mode):
    /// nothing changes; there is no upgrade or downgrade in place.
    WeightMismatch(Weight),
}

/// A lease as the holders' decisions see it: a [`Lease`] (a reader, a semaphore's grant), or a
/// [`Lock`], one holder that takes the whole capacity of an exclusive lock. So the rules of a
/// single lock (`rules.rs`) are these decisions over at most one holder.
pub trait Holder {
    fn owner(&self) -> &Owner;
    fn weight(&self) -> Weight;
    fn capacity(&self) -> Capacity;
    fn fencing_token(&self) -> FencingToken;
    /// Whether the lease still runs at `now` (it ends exactly at `expires_at`).
    fn is_live_at(&self, now: DateTime<Utc>) -> bool;
}

impl Holder for Lease {
    fn owner(&self) -> &Owner {
        &self.owner
    }

    fn weight(&self) -> Weight {
        self.weight
    }

    fn capacity(&self) -> Capacity {
        self.capacity
    }

    fn fencing_token(&self) -> FencingToken {
        self.fencing_token
    }

    fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        Lease::is_live_at(self, now)
    }
}

/// A lock's row as one holder of weight 1 out of capacity 1, whatever its mode: a row that
/// stands for readers holds the whole lock against an exclusive acquire.
impl Holder for Lock {
    fn owner(&self) -> &Owner {
        &self.owner
    }

    fn weight(&self) -> Weight {
        Weight::EXCLUSIVE
    }

    fn capacity(&self) -> Capacity {
        Capacity::LOCK
    }

    fn fencing_token(&self) -> FencingToken {
        self.fencing_token
    }

    fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        Lock::is_live_at(self, now)
    }
}

/// The live leases of `holders` at `now`.
pub fn live_holders<H: Holder>(holders: &[H], now: DateTime<Utc>) -> impl Iterator<Item = &H> {
    holders.iter().filter(move |lease| lease.is_live_at(now))
}

/// How much of `capacity` the live holders leave free at `now`.
pub fn available<H: Holder>(holders: &[H], capacity: Capacity, now: DateTime<Utc>) -> u64 {
    let in_use: u64 = live_holders(holders, now)
        .map(|lease| u64::from(lease.weight().get()))
        .sum();
    u64::from(capacity.get()).saturating_sub(in_use)
}

/// Decides an acquire of `weight` out of `capacity` by `owner` on a resource held by `holders`.
/// A capacity mismatch is checked first, then the caller's own lease, then the room.
pub fn decide_acquire_among<H: Holder>(
    holders: &[H],
    owner: &Owner,
    weight: Weight,
    capacity: Capacity,
    now: DateTime<Utc>,
) -> HolderDecision {
    if let Some(other) = live_holders(holders, now).find(|lease| lease.capacity() != capacity) {
        return HolderDecision::CapacityMismatch(other.capacity());
    }
    if let Some(own) = live_holders(holders, now).find(|lease| lease.owner() == owner) {
        return if own.weight() == weight {
            HolderDecision::Extend(own.fencing_token())
        } else {
            HolderDecision::WeightMismatch(own.weight())
        };
    }
    let available = available(holders, capacity, now);
    if u64::from(weight.get()) <= available {
        HolderDecision::GrantNew
    } else {
        HolderDecision::Unavailable { available }
    }
}

/// Decides a release by `owner`: its live lease ends (`Released` with its token); `Forbidden`
/// when others hold live leases but the caller does not, `NotFound` when no lease is live. A
/// semaphore answers both of the latter as "not found": other holders are no conflict there.
pub fn decide_release_among<H: Holder>(
    holders: &[H],
    owner: &Owner,
    now: DateTime<Utc>,
) -> ReleaseResult {
    let mut others = false;
    for lease in live_holders(holders, now) {
        if lease.owner() == owner {
            return ReleaseResult::Released(lease.fencing_token());
        }
        others = true;
    }
    if others {
        ReleaseResult::Forbidden
    } else {
        ReleaseResult::NotFound
    }
}

/// Decides a renew by `owner`: only the holder of a live lease may extend it (the same answers
/// as [`decide_release_among`]).
pub fn decide_renew_among<H: Holder>(
    holders: &[H],
    owner: &Owner,
    now: DateTime<Utc>,
) -> RenewDecision {
    RenewDecision::from(decide_release_among(holders, owner, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decide_acquire, decide_release, decide_renew, AcquireDecision, Lock};
    use crate::{LeaseValue, ResourceName};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn owner(raw: &str) -> Owner {
        Owner::parse(raw).unwrap()
    }

    fn lease(who: &str, weight: u32, capacity: u32, expires_ms: i64, token: i64) -> Lease {
        Lease {
            owner: owner(who),
            weight: Weight(weight),
            capacity: Capacity(capacity),
            acquired_at: at(0),
            expires_at: at(expires_ms),
            fencing_token: FencingToken::new(token).unwrap(),
            value: None,
        }
    }

    fn token(value: i64) -> FencingToken {
        FencingToken::new(value).unwrap()
    }

    /// One case of an acquire: the holders, then who asks for how many permits of which limit
    /// when, and the decision expected.
    type AcquireCase = (Vec<Lease>, &'static str, u32, u32, i64, HolderDecision);

    #[test]
    fn semaphore_acquire_table() {
        use HolderDecision::*;
        let cases: Vec<AcquireCase> = vec![
            (vec![], "me", 1, 5, 0, GrantNew),
            (vec![], "me", 5, 5, 0, GrantNew),
            (vec![lease("a", 3, 5, 1_000, 1)], "me", 2, 5, 0, GrantNew),
            (
                vec![lease("a", 3, 5, 1_000, 1)],
                "me",
                3,
                5,
                0,
                Unavailable { available: 2 },
            ),
            // An expired holder frees its permits, at exactly its end.
            (
                vec![lease("a", 3, 5, 1_000, 1)],
                "me",
                3,
                5,
                1_000,
                GrantNew,
            ),
            (
                vec![lease("a", 3, 5, 1_000, 1), lease("b", 2, 5, 2_000, 2)],
                "me",
                1,
                5,
                999,
                Unavailable { available: 0 },
            ),
            (
                vec![lease("a", 3, 5, 1_000, 1), lease("b", 2, 5, 2_000, 2)],
                "me",
                3,
                5,
                1_000,
                GrantNew,
            ),
            // The same owner: same permits re-grant with the token kept, others are refused.
            (
                vec![lease("me", 2, 5, 1_000, 7)],
                "me",
                2,
                5,
                0,
                Extend(token(7)),
            ),
            (
                vec![lease("me", 2, 5, 1_000, 7)],
                "me",
                3,
                5,
                0,
                WeightMismatch(Weight(2)),
            ),
            (
                vec![lease("me", 2, 5, 1_000, 7)],
                "me",
                3,
                5,
                1_000,
                GrantNew,
            ),
            // Another limit while a holder is live; free to change once none is.
            (
                vec![lease("a", 1, 5, 1_000, 1)],
                "me",
                1,
                6,
                0,
                CapacityMismatch(Capacity(5)),
            ),
            (
                vec![lease("me", 1, 5, 1_000, 1)],
                "me",
                1,
                6,
                0,
                CapacityMismatch(Capacity(5)),
            ),
            (
                vec![lease("a", 1, 5, 1_000, 1)],
                "me",
                1,
                6,
                1_000,
                GrantNew,
            ),
            // Owners compare exactly.
            (
                vec![lease("Me", 5, 5, 1_000, 1)],
                "me",
                5,
                5,
                0,
                Unavailable { available: 0 },
            ),
        ];
        for (holders, who, permits, limit, now, expected) in cases {
            assert_eq!(
                decide_acquire_among(
                    &holders,
                    &owner(who),
                    Weight(permits),
                    Capacity(limit),
                    at(now)
                ),
                expected,
                "{who} wants {permits} of {limit} at {now} among {holders:?}"
            );
        }
    }

    #[test]
    fn shared_and_exclusive_exclude_each_other() {
        use HolderDecision::*;
        let (shared, exclusive, lock) = (Weight::SHARED.get(), Weight::EXCLUSIVE.get(), u32::MAX);
        let readers = vec![
            lease("r1", shared, lock, 1_000, 1),
            lease("r2", shared, lock, 1_000, 2),
        ];
        let writer = vec![lease("w", exclusive, lock, 1_000, 3)];
        let decide = |holders: &[Lease], who: &str, weight: Weight, now: i64| {
            decide_acquire_among(holders, &owner(who), weight, Capacity::LOCK, at(now))
        };
        assert_eq!(decide(&readers, "r3", Weight::SHARED, 0), GrantNew);
        assert!(matches!(
            decide(&readers, "w", Weight::EXCLUSIVE, 0),
            Unavailable { .. }
        ));
        assert!(matches!(
            decide(&writer, "r", Weight::SHARED, 0),
            Unavailable { available: 0 }
        ));
        assert!(matches!(
            decide(&writer, "w2", Weight::EXCLUSIVE, 0),
            Unavailable { available: 0 }
        ));
        assert_eq!(decide(&writer, "r", Weight::SHARED, 1_000), GrantNew);
        assert_eq!(
            decide(&readers, "r1", Weight::EXCLUSIVE, 0),
            WeightMismatch(Weight::SHARED)
        );
        assert_eq!(decide(&readers, "r1", Weight::SHARED, 0), Extend(token(1)));
    }

    fn v1_lock(who: &str, expires_ms: i64) -> Lock {
        Lock {
            resource: ResourceName::parse("r").unwrap(),
            owner: owner(who),
            acquired_at: at(0),
            expires_at: at(expires_ms),
            fencing_token: token(7),
            mode: crate::LockMode::Exclusive,
            value: None,
        }
    }

    /// The exclusive lock of v1 is the case "one holder, weight = capacity": for every current
    /// lock, owner and instant, the holders' decisions say what v1's do.
    #[test]
    fn exclusive_is_v1() {
        let currents = [
            None,
            Some(v1_lock("me", 1_000)),
            Some(v1_lock("other", 1_000)),
        ];
        for current in &currents {
            let holders: Vec<Lease> = current
                .iter()
                .map(|lock| Lease {
                    owner: lock.owner.clone(),
                    weight: Weight::EXCLUSIVE,
                    capacity: Capacity::LOCK,
                    acquired_at: lock.acquired_at,
                    expires_at: lock.expires_at,
                    fencing_token: lock.fencing_token,
                    value: Some(LeaseValue::parse("1".into()).unwrap()),
                })
                .collect();
            for who in ["me", "other", "third"] {
                for now in [0, 999, 1_000, 5_000] {
                    let me = owner(who);
                    let among = decide_acquire_among(
                        &holders,
                        &me,
                        Weight::EXCLUSIVE,
                        Capacity::LOCK,
                        at(now),
                    );
                    let v1 = match among {
                        HolderDecision::GrantNew => AcquireDecision::GrantNew,
                        HolderDecision::Extend(kept) => {
                            assert_eq!(kept, token(7));
                            AcquireDecision::Extend
                        }
                        HolderDecision::Unavailable { .. } => AcquireDecision::Deny,
                        other => panic!("{other:?} has no v1 counterpart"),
                    };
                    let case = format!("{who} at {now} on {current:?}");
                    assert_eq!(v1, decide_acquire(current.as_ref(), &me, at(now)), "{case}");
                    assert_eq!(
                        decide_release_among(&holders, &me, at(now)),
                        decide_release(current.as_ref(), &me, at(now)),
                        "{case}"
                    );
                    assert_eq!(
                        decide_renew_among(&holders, &me, at(now)),
                        decide_renew(current.as_ref(), &me, at(now)),
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    fn release_and_renew_among_holders() {
        let holders = vec![lease("a", 1, 5, 1_000, 1), lease("b", 2, 5, 2_000, 2)];
        let release = |who: &str, now: i64| decide_release_among(&holders, &owner(who), at(now));
        assert_eq!(release("a", 0), ReleaseResult::Released(token(1)));
        assert_eq!(release("b", 1_500), ReleaseResult::Released(token(2)));
        assert_eq!(release("a", 1_500), ReleaseResult::Forbidden);
        assert_eq!(release("c", 0), ReleaseResult::Forbidden);
        assert_eq!(release("c", 2_000), ReleaseResult::NotFound);
        assert_eq!(
            decide_renew_among(&holders, &owner("b"), at(1_999)),
            RenewDecision::Renew
        );
        assert_eq!(
            decide_renew_among(&holders, &owner("b"), at(2_000)),
            RenewDecision::NotFound
        );
        assert_eq!(available(&holders, Capacity(5), at(0)), 2);
        assert_eq!(available(&holders, Capacity(5), at(1_000)), 3);
        assert_eq!(available(&holders, Capacity(5), at(2_000)), 5);
    }
}
