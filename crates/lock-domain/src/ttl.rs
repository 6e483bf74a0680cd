//! How long a grant or renewal lasts.

use std::time::Duration;

use chrono::TimeDelta;

use crate::validation::{count_up_to, ValidationError};

/// The default upper bound of a TTL: one day.
pub const DEFAULT_MAX_TTL_SECONDS: u32 = 86_400;

/// A validated lease length: a whole number of seconds in `1..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ttl(u32);

impl Ttl {
    /// The TTL an acquire under a session carries: none of its own (the hold ends with the
    /// session, whose TTL the store applies). One second, within every configured maximum.
    pub const SESSION_HELD: Self = Self(1);

    /// Validates `seconds` against the configured maximum (`max_seconds` is at least 1).
    ///
    /// # Errors
    /// [`ValidationError::OutOfRange`] when `seconds` is below 1 or above `max_seconds`.
    pub fn parse(seconds: i64, max_seconds: u32) -> Result<Self, ValidationError> {
        count_up_to(seconds, max_seconds.max(1)).map(Self)
    }

    pub fn seconds(self) -> u32 {
        self.0
    }

    pub fn as_duration(self) -> Duration {
        Duration::from_secs(u64::from(self.0))
    }

    pub fn as_time_delta(self) -> TimeDelta {
        TimeDelta::seconds(i64::from(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let cases: &[(i64, u32, Result<u32, &str>)] = &[
            (1, 86_400, Ok(1)),
            (30, 86_400, Ok(30)),
            (86_400, 86_400, Ok(86_400)),
            (86_401, 86_400, Err("out_of_range")),
            (0, 86_400, Err("out_of_range")),
            (-1, 86_400, Err("out_of_range")),
            (i64::MAX, 86_400, Err("out_of_range")),
            (i64::MIN, 86_400, Err("out_of_range")),
            (60, 60, Ok(60)),
            (61, 60, Err("out_of_range")),
            (u32::MAX as i64 + 1, u32::MAX, Err("out_of_range")),
        ];
        for &(seconds, max, expected) in cases {
            let got = Ttl::parse(seconds, max)
                .map(Ttl::seconds)
                .map_err(|e| e.code());
            assert_eq!(got, expected, "ttl {seconds} with max {max}");
        }
    }

    #[test]
    fn out_of_range_reports_bounds() {
        assert_eq!(
            Ttl::parse(0, 100),
            Err(ValidationError::OutOfRange {
                min: 1,
                max: 100,
                actual: 0
            })
        );
    }
}
