//! The `Retry-After` of a lock-delay: whole seconds until a place is available again.

use chrono::{DateTime, Utc};

/// Whole seconds from `now` until `until`, rounded up, at least 1: a `Retry-After`.
pub(crate) fn seconds_until(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let millis = (until - now).num_milliseconds().max(0);
    u64::try_from(millis).unwrap_or(0).div_ceil(1_000).max(1)
}
