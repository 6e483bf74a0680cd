//! Counting semaphores on the lease model: a semaphore of limit N lets its live holders take at
//! most N permits between them. Each holder's lease ([`Lease`]) has its own fencing token, and an
//! owner holds at most one grant per semaphore. Semaphores have their own namespace: semaphore
//! `x` and lock `x` are unrelated.
//!
//! The decisions are [`crate::decide_acquire_among`] and its siblings; this module holds the
//! values and outcomes a semaphore's use cases speak in (the lease port, [`crate::LeaseStore`], takes and answers them as leases).

use chrono::{DateTime, Utc};

use crate::decisions::live_holders;
use crate::{available, Capacity, FencingToken, Lease, ResourceName, Weight};

/// One holder's grant on a semaphore: its lease out of the semaphore's limit
/// (`lease.capacity`), with `lease.weight` permits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    pub name: ResourceName,
    pub lease: Lease,
}

/// An acquire of permits, parsed: how many of which limit, on the terms of the lease (a
/// re-grant keeps its value when `terms.value` is `None`; the lock-delay keeps the grant's
/// permits taken for other owners after it ends by expiry, a release frees them at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermitRequest {
    pub permits: Weight,
    pub limit: Capacity,
    pub terms: crate::LeaseTerms,
}

impl PermitRequest {
    /// The claim the request makes.
    pub fn claim(&self) -> crate::Claim {
        crate::Claim::Permits {
            permits: self.permits,
            limit: self.limit,
        }
    }
}

/// The answer to an acquire of permits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SemaphoreAcquireOutcome {
    /// The caller holds these permits now: a new grant with a new token, or a re-grant of its
    /// live grant of the same permits from now, with the token kept.
    Granted(Permit),
    /// Too few permits are free: `available` of `limit`. Nothing changed.
    Unavailable { limit: Capacity, available: u64 },
    /// The holders use another limit (this one): the live ones, and grants of other owners that
    /// ran out whose lock-delay still keeps their places. Nothing changed.
    LimitMismatch(Capacity),
    /// The caller holds a live grant of other permits (these). Nothing changed.
    PermitsMismatch(Weight),
}

/// The answer to a release of permits. Other holders are no conflict, so there is no
/// "forbidden".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermitReleaseResult {
    /// The caller's live grant ended; it had this token.
    Released(FencingToken),
    /// The caller holds no live grant on the semaphore.
    NotFound,
}

/// The answer to a renew of permits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermitRenewResult {
    /// The caller's live grant now ends at `now + ttl`; its token, permits and `acquired_at`
    /// are kept, and its value replaced when the renew carried one.
    Renewed(Permit),
    /// The caller holds no live grant on the semaphore.
    NotFound,
}

/// A semaphore as it is held: its limit and its live holders, in token order. A semaphore with
/// no live holder is not shown (it has no limit then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemaphoreState {
    pub name: ResourceName,
    pub limit: Capacity,
    /// Never empty; sorted by fencing token.
    pub holders: Vec<Lease>,
}

impl SemaphoreState {
    /// The state of `name` at `now` from every lease a store has for it (live or not): `None`
    /// when no lease is live.
    pub fn of_leases(name: ResourceName, leases: &[Lease], now: DateTime<Utc>) -> Option<Self> {
        let mut holders: Vec<Lease> = live_holders(leases, now).cloned().collect();
        holders.sort_by_key(|lease| lease.fencing_token);
        let limit = holders.first()?.capacity;
        Some(Self {
            name,
            limit,
            holders,
        })
    }

    /// The permits the live holders take.
    pub fn in_use(&self) -> u64 {
        self.holders
            .iter()
            .map(|lease| u64::from(lease.weight.get()))
            .sum()
    }

    /// The permits still free.
    pub fn available(&self, now: DateTime<Utc>) -> u64 {
        available(&self.holders, self.limit, now)
    }

    /// The earliest end of a live holder's lease: when permits free up at the latest, if nobody
    /// releases or renews first.
    pub fn next_expiry(&self) -> Option<DateTime<Utc>> {
        self.holders.iter().map(|lease| lease.expires_at).min()
    }
}

/// A page of a tenant's semaphores that have a live holder, in bytewise name order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemaphorePage {
    pub semaphores: Vec<SemaphoreState>,
    /// Whether more semaphores matched after this page.
    pub has_more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Owner;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn lease(who: &str, permits: u32, expires_ms: i64, token: i64) -> Lease {
        Lease {
            owner: Owner::parse(who).unwrap(),
            weight: Weight(permits),
            capacity: Capacity(5),
            acquired_at: at(0),
            expires_at: at(expires_ms),
            fencing_token: FencingToken::new(token).unwrap(),
            value: None,
        }
    }

    #[test]
    fn state_shows_live_holders_in_token_order() {
        let name = ResourceName::parse("s").unwrap();
        let leases = [
            lease("b", 2, 2_000, 9),
            lease("a", 1, 500, 3),
            lease("c", 1, 3_000, 4),
        ];
        let state = SemaphoreState::of_leases(name.clone(), &leases, at(0)).unwrap();
        let tokens: Vec<i64> = state
            .holders
            .iter()
            .map(|l| l.fencing_token.value())
            .collect();
        assert_eq!(tokens, [3, 4, 9]);
        assert_eq!((state.in_use(), state.available(at(0))), (4, 1));
        assert_eq!(state.next_expiry(), Some(at(500)));
        let later = SemaphoreState::of_leases(name.clone(), &leases, at(500)).unwrap();
        assert_eq!(later.in_use(), 3);
        assert_eq!(SemaphoreState::of_leases(name, &leases, at(3_000)), None);
    }
}
