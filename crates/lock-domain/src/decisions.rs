//! The decisions of every primitive, as pure functions of a place's leases and `now`: the only
//! Rust copy of the rule "the weights of the live holders never add up to more than the
//! capacity", for every kind. An exclusive lock is one holder that takes the whole capacity (a
//! [`Holder`]: a [`Lease`] or a [`Lock`]), readers weigh 1 each, a semaphore's holders their
//! permits out of its limit. Expired leases count for nothing; adapters pass every lease they
//! have and the decision ignores the ended ones, or keeps their places for their lock-delay.
//!
//! Adapters that can run the decisions inside one write transaction call them directly (the
//! reference store for every kind, the diesel store for readers and semaphores); the exclusive
//! lock's SQL statements decide exactly the same way, which the repository contract suite
//! checks. [`decide_claim`] is the acquire of any claim on any place, with its reason when it
//! refuses; the single lock's view of it ([`decide_acquire`] and its siblings) is the same
//! decision over at most one holder.

use chrono::{DateTime, Utc};

use crate::{
    Capacity, Claim, FencingToken, Grant, Lease, Lock, LockMode, Owner, Place, Refusal,
    ReleaseResult, Weight,
};

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
/// single lock ([`decide_acquire`] and its siblings) are these decisions over at most one holder.
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

/// What an acquire of a claim does, with the reason when it refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Grant a new lease with a new, larger fencing token.
    GrantNew,
    /// The caller holds a live lease of the same claim: re-grant it from `now`, keeping this
    /// token.
    Extend(FencingToken),
    /// Nothing changes, for this reason.
    Refused(Refusal),
}

/// Decides an acquire of `claim` on `place` by `owner` at `now`, among every lease the store has
/// there (live or not), each with its lock-delay in milliseconds: a lock's exclusive lease or
/// its readers, a semaphore's grants. The places that others' leases keep in their lock-delay
/// count as held ([`crate::holding_places`]); then [`decide_acquire_among`] decides, and a
/// refusal is told in the place's words:
/// - another limit: [`Refusal::LimitMismatch`];
/// - the caller's own live lease of another weight: [`Refusal::ModeMismatch`] (a lock, in the
///   mode it holds) or [`Refusal::PermitsMismatch`] (a semaphore);
/// - too little room: a lock that no live lease holds is [`Refusal::Delayed`] until the
///   lock-delay keeping it ends; otherwise [`Refusal::Held`] with the live holders (token
///   order), the room left, and when the first place kept by a lock-delay is free again.
pub fn decide_claim(
    place: &Place,
    leases: &[(Lease, i64)],
    owner: &Owner,
    claim: Claim,
    now: DateTime<Utc>,
) -> ClaimDecision {
    let (weight, capacity) = claim.weight_of();
    let held = crate::holding_places(leases.iter().cloned(), owner, now);
    match decide_acquire_among(&held, owner, weight, capacity, now) {
        HolderDecision::GrantNew => ClaimDecision::GrantNew,
        HolderDecision::Extend(token) => ClaimDecision::Extend(token),
        HolderDecision::CapacityMismatch(limit) => {
            ClaimDecision::Refused(Refusal::LimitMismatch(limit))
        }
        HolderDecision::WeightMismatch(held) => ClaimDecision::Refused(match place {
            Place::Lock(_) if held == Weight::SHARED => Refusal::ModeMismatch(LockMode::Shared),
            Place::Lock(_) => Refusal::ModeMismatch(LockMode::Exclusive),
            Place::Semaphore(_) => Refusal::PermitsMismatch(held),
        }),
        HolderDecision::Unavailable { available } => {
            let holders = live_grants(place, leases, now);
            // The places kept by lock-delays: others' leases that ran out, their delay running.
            let delayed = leases
                .iter()
                .filter(|(lease, delay_ms)| {
                    !lease.is_live_at(now)
                        && &lease.owner != owner
                        && !crate::place_is_free(lease, *delay_ms, now)
                })
                .map(|(lease, delay_ms)| {
                    lease.expires_at + chrono::TimeDelta::milliseconds(*delay_ms)
                });
            ClaimDecision::Refused(match place {
                Place::Lock(_) if holders.is_empty() => Refusal::Delayed {
                    until: delayed.max().unwrap_or(now),
                },
                _ => Refusal::Held {
                    holders,
                    available,
                    delayed_until: delayed.min(),
                },
            })
        }
    }
}

/// The live leases of `leases` at `now` as grants on `place`, in token order.
pub fn live_grants(place: &Place, leases: &[(Lease, i64)], now: DateTime<Utc>) -> Vec<Grant> {
    let mut live: Vec<Grant> = leases
        .iter()
        .filter(|(lease, _)| lease.is_live_at(now))
        .map(|(lease, _)| Grant {
            place: place.clone(),
            lease: lease.clone(),
        })
        .collect();
    live.sort_by_key(|grant| grant.lease.fencing_token);
    live
}

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

/// Whether a lease of `owner` that ends at `current_end` still ends as the grant that ended at
/// `granted_end` did: the same end, or, for a hold under a session, any end (a keepalive moves
/// the session's end, and with it every hold's, without changing any hold).
pub fn same_end(owner: &Owner, current_end: DateTime<Utc>, granted_end: DateTime<Utc>) -> bool {
    current_end == granted_end || owner.session().is_some()
}

/// Whether undoing `grant` ends the resource's current lock: only when that lock is live, is
/// still exactly the grant (same owner, token, start and end ([`same_end`]): never a later
/// re-grant or renewal) and was granted anew (`current_regranted` is false): a re-grant continues
/// a lease its owner was already told it holds, so it is never undone.
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
                && same_end(&lock.owner, lock.expires_at, grant.expires_at)
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

#[cfg(test)]
mod claim_tests {
    use super::*;
    use crate::{Capacity, Holding, ResourceName};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    /// A lease of `who`, `weight` out of `capacity`, from 0 to `expires_ms`, with `token` and a
    /// lock-delay of `delay_ms`.
    fn kept(
        who: &str,
        weight: Weight,
        capacity: Capacity,
        expires_ms: i64,
        token: i64,
        delay_ms: i64,
    ) -> (Lease, i64) {
        (
            Lease {
                owner: Owner::parse(who).unwrap(),
                weight,
                capacity,
                acquired_at: at(0),
                expires_at: at(expires_ms),
                fencing_token: FencingToken::new(token).unwrap(),
                value: None,
            },
            delay_ms,
        )
    }

    /// One case: every lease of the place with its lock-delay, the claim, when, and the decision.
    type ClaimCase = (Vec<(Lease, i64)>, Claim, i64, ClaimDecision);

    fn lock() -> Place {
        Place::Lock(ResourceName::parse("r").unwrap())
    }

    fn semaphore() -> Place {
        Place::Semaphore(ResourceName::parse("s").unwrap())
    }

    fn grant(place: &Place, lease: &(Lease, i64)) -> Grant {
        Grant {
            place: place.clone(),
            lease: lease.0.clone(),
        }
    }

    fn permits(permits: u32, limit: u32) -> Claim {
        Claim::Permits {
            permits: Weight(permits),
            limit: Capacity(limit),
        }
    }

    #[test]
    fn a_lock_refused_says_by_whom_until_when_or_which_mode() {
        let (x, s, cap) = (Weight::EXCLUSIVE, Weight::SHARED, Capacity::LOCK);
        let me = Owner::parse("me").unwrap();
        let other = kept("other", x, cap, 1_000, 7, 0);
        let other_delayed = kept("other", x, cap, 1_000, 7, 2_000);
        let mine = kept("me", x, cap, 1_000, 9, 2_000);
        let reader_a = kept("a", s, cap, 1_000, 3, 0);
        let reader_me = kept("me", s, cap, 1_500, 4, 0);
        let cases: Vec<ClaimCase> = vec![
            (vec![], Claim::Exclusive, 0, ClaimDecision::GrantNew),
            (
                vec![other.clone()],
                Claim::Exclusive,
                999,
                ClaimDecision::Refused(Refusal::Held {
                    holders: vec![grant(&lock(), &other)],
                    available: 0,
                    delayed_until: None,
                }),
            ),
            (
                vec![other.clone()],
                Claim::Exclusive,
                1_000,
                ClaimDecision::GrantNew,
            ),
            // A lease that ran out keeps its place for its lock-delay, from others only.
            (
                vec![other_delayed.clone()],
                Claim::Exclusive,
                1_000,
                ClaimDecision::Refused(Refusal::Delayed { until: at(3_000) }),
            ),
            (
                vec![other_delayed.clone()],
                Claim::Shared,
                2_999,
                ClaimDecision::Refused(Refusal::Delayed { until: at(3_000) }),
            ),
            (
                vec![other_delayed],
                Claim::Exclusive,
                3_000,
                ClaimDecision::GrantNew,
            ),
            (
                vec![mine.clone()],
                Claim::Exclusive,
                1_000,
                ClaimDecision::GrantNew,
            ),
            (
                vec![mine.clone()],
                Claim::Exclusive,
                999,
                ClaimDecision::Extend(FencingToken::new(9).unwrap()),
            ),
            (
                vec![mine],
                Claim::Shared,
                999,
                ClaimDecision::Refused(Refusal::ModeMismatch(LockMode::Exclusive)),
            ),
            // Readers share; a writer is kept out by them, and a reader asking to write is told
            // it reads.
            (
                vec![reader_a.clone()],
                Claim::Shared,
                999,
                ClaimDecision::GrantNew,
            ),
            (
                vec![reader_a.clone(), reader_me.clone()],
                Claim::Exclusive,
                999,
                ClaimDecision::Refused(Refusal::ModeMismatch(LockMode::Shared)),
            ),
            (
                vec![reader_me.clone(), reader_a.clone()],
                Claim::Exclusive,
                1_000,
                ClaimDecision::Refused(Refusal::ModeMismatch(LockMode::Shared)),
            ),
            (
                vec![reader_me.clone(), reader_a.clone()],
                Claim::Shared,
                1_000,
                ClaimDecision::Extend(FencingToken::new(4).unwrap()),
            ),
            (
                vec![reader_me.clone(), reader_a.clone()],
                Claim::Exclusive,
                1_500,
                ClaimDecision::GrantNew,
            ),
        ];
        for (leases, claim, now, expected) in cases {
            assert_eq!(
                decide_claim(&lock(), &leases, &me, claim, at(now)),
                expected,
                "{claim:?} at {now} among {leases:?}"
            );
        }
        // The holders of a refusal come in token order.
        let refused = decide_claim(
            &lock(),
            &[reader_me.clone(), reader_a.clone()],
            &Owner::parse("w").unwrap(),
            Claim::Exclusive,
            at(0),
        );
        assert_eq!(
            refused,
            ClaimDecision::Refused(Refusal::Held {
                holders: vec![grant(&lock(), &reader_a), grant(&lock(), &reader_me)],
                available: u64::from(u32::MAX) - 2,
                delayed_until: None,
            })
        );
    }

    #[test]
    fn a_semaphore_refused_says_the_room_the_limit_or_the_permits() {
        let me = Owner::parse("me").unwrap();
        let limit = Capacity(5);
        let a = kept("a", Weight(3), limit, 1_000, 1, 0);
        let b_delayed = kept("b", Weight(1), limit, 500, 2, 2_000);
        let mine = kept("me", Weight(2), limit, 1_000, 3, 0);
        let cases: Vec<ClaimCase> = vec![
            (vec![a.clone()], permits(2, 5), 0, ClaimDecision::GrantNew),
            (
                vec![a.clone(), b_delayed.clone()],
                permits(2, 5),
                600,
                ClaimDecision::Refused(Refusal::Held {
                    holders: vec![grant(&semaphore(), &a)],
                    available: 1,
                    delayed_until: Some(at(2_500)),
                }),
            ),
            (
                vec![a.clone(), b_delayed.clone()],
                permits(2, 5),
                2_500,
                ClaimDecision::GrantNew,
            ),
            // Permits kept by a lock-delay alone: still `Held`, with nobody live.
            (
                vec![b_delayed.clone()],
                permits(5, 5),
                600,
                ClaimDecision::Refused(Refusal::Held {
                    holders: vec![],
                    available: 4,
                    delayed_until: Some(at(2_500)),
                }),
            ),
            // The limit of the holders, live or kept by a lock-delay, is the limit.
            (
                vec![b_delayed],
                permits(1, 6),
                600,
                ClaimDecision::Refused(Refusal::LimitMismatch(limit)),
            ),
            (
                vec![a.clone(), mine.clone()],
                permits(1, 5),
                0,
                ClaimDecision::Refused(Refusal::PermitsMismatch(Weight(2))),
            ),
            (
                vec![a, mine],
                permits(2, 5),
                0,
                ClaimDecision::Extend(FencingToken::new(3).unwrap()),
            ),
        ];
        for (leases, claim, now, expected) in cases {
            assert_eq!(
                decide_claim(&semaphore(), &leases, &me, claim, at(now)),
                expected,
                "{claim:?} at {now} among {leases:?}"
            );
        }
    }

    /// A look at a place says for sure that an acquire would be refused only when its live
    /// holders leave no room for the claim (or the caller holds another claim there); a place
    /// kept by a lock-delay alone, or by holders that ended, is not sure to refuse.
    #[test]
    fn a_holding_refuses_only_what_its_live_holders_leave_no_room_for() {
        let (x, s, cap) = (Weight::EXCLUSIVE, Weight::SHARED, Capacity::LOCK);
        let me = Owner::parse("me").unwrap();
        let held = |place: &Place, leases: Vec<(Lease, i64)>, delayed_ms: Option<i64>| Holding {
            holders: leases.iter().map(|lease| grant(place, lease)).collect(),
            delayed_until: delayed_ms.map(at),
        };
        let writer = kept("w", x, cap, 1_000, 7, 0);
        let reader = kept("a", s, cap, 1_000, 3, 0);
        let my_reader = kept("me", s, cap, 1_000, 4, 0);
        let cases: Vec<(Holding, Claim, i64, bool)> = vec![
            (Holding::default(), Claim::Exclusive, 0, false),
            (
                held(&lock(), vec![writer.clone()], None),
                Claim::Exclusive,
                999,
                true,
            ),
            (
                held(&lock(), vec![writer.clone()], None),
                Claim::Shared,
                999,
                true,
            ),
            // The holder's end has passed by the caller's clock.
            (
                held(&lock(), vec![writer], None),
                Claim::Exclusive,
                1_000,
                false,
            ),
            (
                held(&lock(), vec![reader.clone()], None),
                Claim::Exclusive,
                0,
                true,
            ),
            // A reader joins readers.
            (
                held(&lock(), vec![reader.clone()], None),
                Claim::Shared,
                0,
                false,
            ),
            (
                held(&lock(), vec![reader, my_reader.clone()], None),
                Claim::Exclusive,
                0,
                true,
            ),
            (
                held(&lock(), vec![my_reader], None),
                Claim::Shared,
                0,
                false,
            ),
            // Whose lock-delay keeps the place, a look does not say: perhaps the caller's own.
            (
                held(&lock(), vec![], Some(5_000)),
                Claim::Exclusive,
                0,
                false,
            ),
        ];
        for (holding, claim, now, refuses) in cases {
            assert_eq!(
                holding.refuses(&lock(), &me, claim, at(now)),
                refuses,
                "{claim:?} at {now} against {holding:?}"
            );
        }
        let full = held(
            &semaphore(),
            vec![kept("a", Weight(3), Capacity(5), 1_000, 1, 0)],
            None,
        );
        assert!(full.refuses(&semaphore(), &me, permits(3, 5), at(0)));
        assert!(!full.refuses(&semaphore(), &me, permits(2, 5), at(0)));
        assert!(full.refuses(&semaphore(), &me, permits(1, 6), at(0)));
    }
}

#[cfg(test)]
mod single_lock_tests {
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
