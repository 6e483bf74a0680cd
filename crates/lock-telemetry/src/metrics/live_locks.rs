//! The last count of the live locks (and of the expired takeovers) for `/metrics`, and the
//! collector that reports it with its age. The count itself is a background job of the service
//! (`lock_service::run_live_lock_counter`), reported through `LockEvents::counted`.

use std::sync::Mutex;
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

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
