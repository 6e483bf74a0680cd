//! One system on one workload, summarised over all its runs: the row of a report table.

use crate::stats::{median_and_spread, percentile, RunStats};

/// One system on one workload, over all its runs.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub system: String,
    pub workload: String,
    pub per_second: f64,
    pub spread: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
    /// Operations completed over all runs (W5: handoffs measured).
    pub operations: u64,
    pub fairness: Option<f64>,
    pub rss_kib: Option<u64>,
    /// CPU microseconds per operation: server, database, benchmark client.
    pub cpu_us: Option<(f64, f64, f64)>,
    /// W7: the acquires of each mode, over all runs.
    pub read_write: Option<ReadWrite>,
}

/// W7's acquires by mode over all runs: how many were asked for and granted (a writer that never
/// gets in is a result to show), and the writers' p99.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadWrite {
    pub shared_asked: u64,
    pub shared_granted: u64,
    pub exclusive_asked: u64,
    pub exclusive_granted: u64,
    pub exclusive_p99_ms: f64,
}

impl ReadWrite {
    /// The counts of W7's `runs` (whose operations are grants, released without error).
    pub fn from_runs(runs: &[RunStats]) -> Self {
        let all = RunStats::merge(runs.iter().cloned());
        let asked = all.latencies_us.len() as u64;
        Self {
            shared_asked: asked.saturating_sub(all.exclusive_attempts),
            shared_granted: all.operations.saturating_sub(all.exclusive_grants),
            exclusive_asked: all.exclusive_attempts,
            exclusive_granted: all.exclusive_grants,
            exclusive_p99_ms: f64::from(percentile(&all.exclusive_latencies_us, 99.0)) / 1000.0,
        }
    }
}

impl Measurement {
    pub fn from_runs(
        system: &str,
        workload: &str,
        runs: &[RunStats],
        rss_kib: Option<u64>,
    ) -> Self {
        let rates: Vec<f64> = runs.iter().map(RunStats::per_second).collect();
        let (per_second, spread) = median_and_spread(&rates);
        let all = RunStats::merge(runs.iter().cloned());
        Self {
            system: system.to_owned(),
            workload: workload.to_owned(),
            per_second,
            spread,
            p50_ms: all.percentile_ms(50.0),
            p99_ms: all.percentile_ms(99.0),
            errors: all.errors,
            operations: all.operations,
            fairness: (!all.per_client.is_empty()).then(|| all.fairness()),
            rss_kib,
            cpu_us: None,
            read_write: None,
        }
    }
}
