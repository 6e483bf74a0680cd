//! Summaries of runs: throughput, latency percentiles, medians and spreads.

use std::time::Duration;

/// What one timed run of a workload measured.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Completed cycles (or grants, or reads), without errors.
    pub operations: u64,
    pub errors: u64,
    pub elapsed: Duration,
    /// Latencies of the measured request, in microseconds.
    pub latencies_us: Vec<u32>,
    /// Grants per client (contended workload), for fairness.
    pub per_client: Vec<u64>,
    /// W7: exclusive acquires asked for, and granted (the rest timed out or were refused).
    pub exclusive_attempts: u64,
    pub exclusive_grants: u64,
    /// W7: latencies of the exclusive acquires alone, in microseconds.
    pub exclusive_latencies_us: Vec<u32>,
}

impl RunStats {
    pub fn per_second(&self) -> f64 {
        self.operations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn percentile_ms(&self, p: f64) -> f64 {
        percentile(&self.latencies_us, p) as f64 / 1000.0
    }

    /// Jain's fairness index of the grants per client: 1.0 is perfectly even.
    pub fn fairness(&self) -> f64 {
        let n = self.per_client.len() as f64;
        let sum: f64 = self.per_client.iter().map(|&g| g as f64).sum();
        let squares: f64 = self.per_client.iter().map(|&g| (g as f64).powi(2)).sum();
        if squares == 0.0 {
            0.0
        } else {
            sum * sum / (n * squares)
        }
    }

    pub fn merge(runs: impl IntoIterator<Item = RunStats>) -> RunStats {
        let mut total = RunStats::default();
        for run in runs {
            total.operations += run.operations;
            total.errors += run.errors;
            total.elapsed = total.elapsed.max(run.elapsed);
            total.latencies_us.extend(run.latencies_us);
            total.per_client.extend(run.per_client);
            total.exclusive_attempts += run.exclusive_attempts;
            total.exclusive_grants += run.exclusive_grants;
            total
                .exclusive_latencies_us
                .extend(run.exclusive_latencies_us);
        }
        total
    }
}

pub fn percentile(values: &[u32], p: f64) -> u32 {
    if values.is_empty() {
        return 0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The median of `values` (the mean of the middle two of an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The median of `after[i] / before[i]` over the runs measured one after the other: a slow
/// drift of the machine during the run moves each pair's ratio little, and their median less.
pub fn median_of_paired_ratios(before: &[f64], after: &[f64]) -> f64 {
    let ratios: Vec<f64> = before.iter().zip(after).map(|(b, a)| a / b).collect();
    median(&ratios)
}

/// Median and (max - min) of a few repeated measurements.
pub fn median_and_spread(values: &[f64]) -> (f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = if sorted.is_empty() {
        0.0
    } else {
        sorted[sorted.len() / 2]
    };
    let spread = match (sorted.first(), sorted.last()) {
        (Some(min), Some(max)) => max - min,
        _ => 0.0,
    };
    (median, spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_fairness() {
        let values: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), 51);
        assert_eq!(percentile(&values, 99.0), 99);
        assert_eq!(percentile(&[], 99.0), 0);
        let even = RunStats {
            per_client: vec![5, 5, 5, 5],
            ..Default::default()
        };
        assert!((even.fairness() - 1.0).abs() < 1e-9);
        let one = RunStats {
            per_client: vec![20, 0, 0, 0],
            ..Default::default()
        };
        assert!((one.fairness() - 0.25).abs() < 1e-9);
        assert_eq!(median_and_spread(&[3.0, 1.0, 2.0]), (2.0, 2.0));
    }

    /// An even count's median is the mean of its middle two; paired ratios are after / before,
    /// run by run, and their median is not moved by one slow pair.
    #[test]
    fn medians_and_paired_ratios() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        let before = [100.0, 200.0, 50.0];
        let after = [90.0, 190.0, 10.0];
        assert_eq!(median_of_paired_ratios(&before, &after), 0.9);
    }
}
