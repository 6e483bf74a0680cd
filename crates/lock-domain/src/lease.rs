//! The one lease model of every primitive: a resource has holders, and each holder has a lease
//! (owner, weight, expiry, fencing token, value) out of the resource's capacity.
//!
//! - A semaphore of limit N has capacity N; a holder's weight is its permits.
//! - A lock has capacity [`Capacity::LOCK`]: an exclusive holder weighs the whole capacity, a
//!   shared holder weighs 1, so shared holders coexist and an exclusive one excludes everyone.
//!   The exclusive lock of v1 is the case "one holder, weight = capacity"
//!   (`decisions::tests::exclusive_is_v1`).
//!
//! The decisions over a resource's holders are in `decisions.rs`.

use chrono::{DateTime, Utc};

use crate::decisions::is_expired;
use crate::validation::{count_up_to, ValidationError};
use crate::{FencingToken, Owner};

/// The largest limit of a semaphore.
pub const MAX_SEMAPHORE_LIMIT: u32 = 10_000;

/// The largest value stored with a lease: its compact JSON text, in bytes (4 KiB).
pub const MAX_LEASE_VALUE_BYTES: usize = 4_096;

/// How much a resource holds at once: the sum of the weights of its live holders never exceeds
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Capacity(pub(crate) u32);

impl Capacity {
    /// The capacity of every lock: an exclusive holder weighs all of it, a shared holder 1.
    pub const LOCK: Self = Self(u32::MAX);

    /// A semaphore's limit.
    ///
    /// # Errors
    /// [`ValidationError::OutOfRange`] when `limit` is not in `1..=MAX_SEMAPHORE_LIMIT`.
    pub fn semaphore_limit(limit: i64) -> Result<Self, ValidationError> {
        count_up_to(limit, MAX_SEMAPHORE_LIMIT).map(Self)
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

/// How much of its resource's capacity one holder takes: a semaphore's permits, or a lock's
/// mode. At least 1, at most the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Weight(pub(crate) u32);

impl Weight {
    /// A shared holder of a lock.
    pub const SHARED: Self = Self(1);
    /// An exclusive holder of a lock: the whole of [`Capacity::LOCK`].
    pub const EXCLUSIVE: Self = Self(u32::MAX);

    /// `permits` of a semaphore of `limit`.
    ///
    /// # Errors
    /// [`ValidationError::OutOfRange`] when `permits` is not in `1..=limit`.
    pub fn permits(permits: i64, limit: Capacity) -> Result<Self, ValidationError> {
        count_up_to(permits, limit.get()).map(Self)
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

/// A value stored with a lease (a leader's address, a job's progress): the compact JSON text of
/// any JSON value, at most [`MAX_LEASE_VALUE_BYTES`]. That the text is JSON is the HTTP layer's
/// to check (the domain has no JSON parser); the store keeps and returns it as it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeaseValue(String);

impl LeaseValue {
    /// # Errors
    /// [`ValidationError::TooLarge`] when `compact_json` is longer than
    /// [`MAX_LEASE_VALUE_BYTES`]; [`ValidationError::Empty`] when it is empty (no JSON value is).
    pub fn parse(compact_json: String) -> Result<Self, ValidationError> {
        if compact_json.is_empty() {
            return Err(ValidationError::Empty);
        }
        if compact_json.len() > MAX_LEASE_VALUE_BYTES {
            return Err(ValidationError::TooLarge {
                max_bytes: MAX_LEASE_VALUE_BYTES,
                actual_bytes: compact_json.len(),
            });
        }
        Ok(Self(compact_json))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One holder's lease on a resource. Timestamps have millisecond precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub owner: Owner,
    pub weight: Weight,
    /// The capacity the holder acquired against: every live holder of a resource has the same.
    pub capacity: Capacity,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub fencing_token: FencingToken,
    pub value: Option<LeaseValue>,
}

impl Lease {
    /// Whether the lease still runs at `now` (it ends exactly at `expires_at`).
    pub fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        !is_expired(self.expires_at, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semaphore_limit_and_permits_table() {
        let cases: &[(i64, Option<u32>)] = &[
            (0, None),
            (-1, None),
            (1, Some(1)),
            (8, Some(8)),
            (10_000, Some(10_000)),
            (10_001, None),
            (i64::MAX, None),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                Capacity::semaphore_limit(*raw).ok().map(Capacity::get),
                *expected,
                "limit {raw}"
            );
        }
        let limit = Capacity::semaphore_limit(5).unwrap();
        let cases: &[(i64, Option<u32>)] = &[(0, None), (1, Some(1)), (5, Some(5)), (6, None)];
        for (raw, expected) in cases {
            assert_eq!(
                Weight::permits(*raw, limit).ok().map(Weight::get),
                *expected,
                "permits {raw} of 5"
            );
        }
        assert_eq!(Weight::EXCLUSIVE.get(), Capacity::LOCK.get());
    }

    #[test]
    fn lease_value_is_bounded_in_bytes() {
        assert_eq!(
            LeaseValue::parse(String::new()),
            Err(ValidationError::Empty)
        );
        assert!(LeaseValue::parse("\"x\"".into()).is_ok());
        let at_limit = format!("\"{}\"", "a".repeat(MAX_LEASE_VALUE_BYTES - 2));
        assert!(LeaseValue::parse(at_limit).is_ok());
        // 2,047 two-byte characters and the quotes: 4,096 bytes, fine; one more is 4,098.
        let multibyte = format!("\"{}\"", "é".repeat(2_047));
        assert_eq!(multibyte.len(), 4_096);
        assert!(LeaseValue::parse(multibyte).is_ok());
        let over = format!("\"{}\"", "é".repeat(2_048));
        assert_eq!(
            LeaseValue::parse(over).unwrap_err(),
            ValidationError::TooLarge {
                max_bytes: 4_096,
                actual_bytes: 4_098
            }
        );
        assert_eq!(
            ValidationError::TooLarge {
                max_bytes: 1,
                actual_bytes: 2
            }
            .code(),
            "too_long"
        );
    }
}
