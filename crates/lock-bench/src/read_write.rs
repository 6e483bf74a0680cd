//! W7: a read/write lock, 90 % reads. Every client works on one resource; each cycle it draws
//! the mode from its own seeded generator (shared with probability 0.9, else exclusive), asks
//! for the lock in that mode, waiting up to [`W7_WAIT`], and releases it at once when granted.
//!
//! Both modes wait, because the other choices measure the harness rather than the lock:
//! - Nobody waits: a writer gets in only at an instant when no reader holds the lock, which the
//!   readers (some 58 of 64 clients), whose leases overlap all the time, practically never
//!   leave. Writers starve on every system alike (lockd on SQLite: 0 of 3,476 in a 5 s trial),
//!   and the number is the readers' alone.
//! - Only writers wait: a reader refused while a writer waits tries again at once, and one draw
//!   in ten makes it a writer, so within milliseconds every client stands in line as a writer
//!   and the mix is no longer 90 % shared (lockd on SQLite in a 5 s trial: every grant was
//!   exclusive).
//!
//! With a wait on both, nearly every cycle ends in a grant, the grants keep the 90/10 mix, and
//! the latency includes the time spent behind writers (or readers), as an application using a
//! read/write lock sees it. One second is lockd's shortest `wait_seconds`; an acquire still
//! refused after it counts, without a grant.

use std::time::{Duration, Instant};

use crate::stats::RunStats;
use crate::workload::{micros, run_clients, LockClient, LockMode, LockSystem};

/// The share of W7's acquires that ask for a shared lease, in percent.
pub const W7_SHARED_PERCENT: u64 = 90;

/// How long a W7 acquire waits for the lock, in either mode.
pub const W7_WAIT: Duration = Duration::from_secs(1);

/// The seed of the clients' choices of mode; client `c` draws from its own stream of it.
pub const W7_SEED: u64 = 0x5eed_0007;

/// W7 on `system`: one operation is one grant (and its release) in either mode; the latency
/// recorded is every acquire's, granted or not (the exclusive ones also apart); grants per
/// client measure fairness.
pub async fn read_write<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
) -> RunStats {
    let resource = format!("{tag}-rw");
    run_clients(
        system,
        clients,
        duration,
        move |client, mut connection, deadline| {
            let resource = resource.clone();
            async move {
                let mut modes = Modes::seeded(W7_SEED, client as u64);
                let mut stats = RunStats::default();
                let mut grants = 0;
                while Instant::now() < deadline {
                    let mode = modes.draw();
                    let sent = Instant::now();
                    let granted = connection.acquire_in(&resource, mode, W7_WAIT).await;
                    let latency = micros(sent);
                    stats.latencies_us.push(latency);
                    let exclusive = mode == LockMode::Exclusive;
                    if exclusive {
                        stats.exclusive_attempts += 1;
                        stats.exclusive_latencies_us.push(latency);
                    }
                    match granted {
                        Ok(true) => match connection.release_in(&resource, mode).await {
                            Ok(true) => {
                                grants += 1;
                                stats.operations += 1;
                                stats.exclusive_grants += u64::from(exclusive);
                            }
                            _ => stats.errors += 1,
                        },
                        Ok(false) => {}
                        Err(_) => stats.errors += 1,
                    }
                }
                stats.per_client.push(grants);
                stats
            }
        },
    )
    .await
}

/// A client's stream of modes: SplitMix64 over the seed and the client's number, so that every
/// system sees the same sequence of modes from the same client.
struct Modes(u64);

impl Modes {
    fn seeded(seed: u64, client: u64) -> Self {
        Self(seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn draw(&mut self) -> LockMode {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if z % 100 < W7_SHARED_PERCENT {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// About 90 % shared, the same sequence for the same client, another for another client.
    #[test]
    fn modes_are_seeded_and_mostly_shared() {
        let draws = |client| {
            let mut modes = Modes::seeded(W7_SEED, client);
            (0..10_000).map(|_| modes.draw()).collect::<Vec<_>>()
        };
        let first = draws(0);
        let shared = first.iter().filter(|m| **m == LockMode::Shared).count();
        assert!(
            (8_800..=9_200).contains(&shared),
            "{shared} of 10000 shared"
        );
        assert_eq!(first, draws(0));
        assert_ne!(first, draws(1));
    }
}
