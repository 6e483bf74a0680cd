//! The clock port: where "now" comes from.

use std::fmt::Debug;

use chrono::{DateTime, SubsecRound, Utc};

/// A source of the current time, at millisecond precision (the precision of every stored and
/// served timestamp).
pub trait Clock: Send + Sync + Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The process's wall clock, truncated to milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(3)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Timelike;

    use super::*;

    #[test]
    fn system_clock_has_millisecond_precision() {
        let now = SystemClock.now();
        assert_eq!(now.nanosecond() % 1_000_000, 0);
    }
}
