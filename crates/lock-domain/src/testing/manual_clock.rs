//! A clock that only moves when a test moves it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::Clock;

/// A [`Clock`] pinned to an instant until [`ManualClock::advance`] or [`ManualClock::set`] moves
/// it. Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock at `2026-01-01T00:00:00.000Z`.
    pub fn new() -> Self {
        Self::at(DateTime::from_timestamp_millis(1_767_225_600_000).expect("valid instant"))
    }

    pub fn at(now: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(now)))
    }

    /// Sets the time, earlier or later: a clock that steps.
    pub fn set(&self, now: DateTime<Utc>) {
        *self.0.lock().expect("clock mutex") = now;
    }

    pub fn advance(&self, by: Duration) {
        let delta = TimeDelta::from_std(by).expect("test durations fit a TimeDelta");
        *self.0.lock().expect("clock mutex") += delta;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().expect("clock mutex")
    }
}
