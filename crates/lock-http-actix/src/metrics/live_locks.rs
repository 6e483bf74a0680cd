//! The background job that counts the live locks (and reads the expired takeovers) for
//! `/metrics`, and the collector that reports its last reading with its age.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lock_domain::LockRepository;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use super::Metrics;

/// The live-lock count and when it was read.
#[derive(Debug, Clone, Copy)]
struct LiveLocks {
    count: u64,
    read_at: Instant,
}

/// The last values the job read. Nothing is reported before the first count.
#[derive(Debug, Default)]
pub(super) struct LiveLockReadings {
    live_locks: Mutex<Option<LiveLocks>>,
    /// Grants that took over another owner's expired lease, in the whole database, as last
    /// counted.
    expired_takeovers: Mutex<Option<u64>>,
}

impl LiveLockReadings {
    pub fn set_live_locks(&self, count: u64) {
        *self
            .live_locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(LiveLocks {
            count,
            read_at: Instant::now(),
        });
    }

    pub fn set_expired_takeovers(&self, count: u64) {
        *self
            .expired_takeovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(count);
    }
}

/// Help texts here are written whole (with their period): a collector's descriptors are not
/// completed by the registry. Counter names go without `_total`, which the encoder appends.
impl Collector for LiveLockReadings {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let live = *self
            .live_locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(live) = live {
            let count = ConstGauge::new(i64::try_from(live.count).unwrap_or(i64::MAX));
            count.encode(encoder.encode_descriptor(
                "lockd_live_locks",
                "Live locks of every tenant, as last counted (see lockd_live_locks_age_seconds).",
                None,
                count.metric_type(),
            )?)?;
            let age = ConstGauge::new(live.read_at.elapsed().as_secs_f64());
            age.encode(encoder.encode_descriptor(
                "lockd_live_locks_age_seconds",
                "How long ago lockd_live_locks was counted.",
                None,
                age.metric_type(),
            )?)?;
        }
        let takeovers = *self
            .expired_takeovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(takeovers) = takeovers {
            let takeovers = ConstCounter::new(takeovers);
            takeovers.encode(encoder.encode_descriptor(
                "lockd_expired_takeovers",
                "Grants that took a lock over from another owner whose lease had expired, in the \
                 whole database (every instance reports the same total), as last counted (see \
                 lockd_live_locks_age_seconds).",
                None,
                takeovers.metric_type(),
            )?)?;
        }
        Ok(())
    }
}

/// Counts the live locks (and reads the expired takeovers) every `interval`, forever: the values
/// `/metrics` reports are at most `interval` plus one count's duration old (their age is
/// reported beside them). Counting reads the expiry index of every live lock, so it runs here
/// in the background, never per scrape.
pub async fn run_live_lock_counter(
    repo: Arc<dyn LockRepository>,
    metrics: Arc<Metrics>,
    interval: Duration,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let counts = async {
            let live = repo.count_live().await?;
            let takeovers = repo.count_expired_takeovers().await?;
            Ok::<_, lock_domain::RepositoryError>((live, takeovers))
        };
        match counts.await {
            Ok((live, takeovers)) => {
                metrics.set_live_locks(live);
                metrics.set_expired_takeovers(takeovers);
            }
            Err(error) => {
                metrics.families.live_lock_count_failures.inc();
                tracing::warn!(error = %error, "counting live locks for /metrics failed");
            }
        }
    }
}
