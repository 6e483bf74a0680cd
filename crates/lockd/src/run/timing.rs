//! When `lockd run` renews, and when it must stop the command so that it is dead before the
//! lease can have run out.
//!
//! Every instant is on this process's monotonic clock and counts from the moment the last
//! successful renewal (or the acquire) was SENT: the server set the expiry to its "now + ttl" at
//! some point after that, so the lease runs at least until `renewed_at + ttl`, however slow the
//! answer was.

use std::time::{Duration, Instant};

/// The schedule of one lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    pub ttl: Duration,
    /// Between renewals while they succeed: ttl/3.
    pub renew_every: Duration,
    /// Before another attempt after a failed renewal: ttl/10, at least 100 ms.
    pub retry_every: Duration,
    /// Longest wait for one renewal answer: ttl/6, at least 200 ms.
    pub renew_timeout: Duration,
    /// The part of the lease not counted on: ttl/10, at least 200 ms (at most ttl/4). It
    /// covers clock-rate differences with the server and the time the kernel takes to reap the
    /// killed process.
    pub safety_margin: Duration,
    /// Between SIGTERM and SIGKILL: the asked grace, at most ttl/4.
    pub kill_grace: Duration,
}

impl LeaseTiming {
    pub fn new(ttl_seconds: u32, kill_grace: Duration) -> Self {
        let ttl = Duration::from_secs(u64::from(ttl_seconds.max(1)));
        Self {
            ttl,
            renew_every: ttl / 3,
            retry_every: (ttl / 10).max(Duration::from_millis(100)),
            renew_timeout: (ttl / 6).max(Duration::from_millis(200)),
            safety_margin: (ttl / 10).max(Duration::from_millis(200)).min(ttl / 4),
            kill_grace: kill_grace.min(ttl / 4),
        }
    }

    /// When the command is sent SIGKILL unless a renewal succeeded since `renewed_at`.
    pub fn kill_at(&self, renewed_at: Instant) -> Instant {
        renewed_at + self.ttl - self.safety_margin
    }

    /// When the command is sent SIGTERM unless a renewal succeeded since `renewed_at`: early
    /// enough that the grace period and SIGKILL fit before [`LeaseTiming::kill_at`].
    pub fn term_at(&self, renewed_at: Instant) -> Instant {
        self.kill_at(renewed_at) - self.kill_grace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kill_fits_inside_the_lease_and_leaves_time_for_retries() {
        let ms = |n| Duration::from_millis(n);
        // (ttl s, grace s) -> (renew_every, margin, grace) in ms
        let cases = [
            (30, 5, (10_000, 3_000, 5_000)),
            (30, 60, (10_000, 3_000, 7_500)),
            (3, 5, (1_000, 300, 750)),
            (1, 5, (333, 200, 250)),
            (10, 0, (3_333, 1_000, 0)),
        ];
        let start = Instant::now();
        for (ttl, grace, (renew, margin, kill_grace)) in cases {
            let timing = LeaseTiming::new(ttl, Duration::from_secs(grace));
            assert_eq!(timing.renew_every.as_millis(), renew, "ttl {ttl}");
            assert_eq!(timing.safety_margin, ms(margin), "ttl {ttl}");
            assert_eq!(timing.kill_grace, ms(kill_grace), "ttl {ttl}");
            let expiry = start + timing.ttl;
            assert!(timing.kill_at(start) < expiry, "ttl {ttl}");
            assert!(timing.term_at(start) <= timing.kill_at(start));
            // At least one renewal and one retry happen before the command is stopped.
            assert!(
                start + timing.renew_every + timing.retry_every < timing.term_at(start),
                "ttl {ttl}"
            );
        }
    }
}
