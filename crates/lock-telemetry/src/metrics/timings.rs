//! How long acquires wait and holds last, and how many acquires found their place held:
//! `lockd_wait_seconds`, `lockd_hold_seconds` and `lockd_contended_acquires_total`, labelled by
//! primitive and outcome only (never a name or an owner, so their series are a fixed, small set).
//!
//! Every series is created when the families are registered, and its handle kept in a table
//! indexed by the service's enums: an observation is an array index and the histogram's own
//! short lock, with no label set built, hashed or allocated on the request's path.

use std::time::Duration;

use lock_service::{HoldEnd, Primitive, Waited};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The upper bounds (seconds) of the wait and hold histograms' buckets: from a millisecond (a
/// grant at once, a lock held around one write) to a day (a leader's term, a batch job's lock).
pub(super) const TIMING_BUCKETS: [f64; 20] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    300.0, 900.0, 3600.0, 14400.0, 86400.0,
];

/// A wait's or a hold's labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TimingLabels {
    primitive: &'static str,
    outcome: &'static str,
}

/// `lockd_contended_acquires_total`'s label.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PrimitiveOnly {
    primitive: &'static str,
}

type TimingFamily = Family<TimingLabels, Histogram, fn() -> Histogram>;

fn timing_histogram() -> Histogram {
    Histogram::new(TIMING_BUCKETS)
}

const PRIMITIVES: usize = Primitive::ALL.len();

/// The handles of every series, resolved once.
#[derive(Debug)]
pub(super) struct Timings {
    waits: [[Histogram; Waited::ALL.len()]; PRIMITIVES],
    holds: [[Histogram; HoldEnd::ALL.len()]; PRIMITIVES],
    contended: [Counter; PRIMITIVES],
}

impl Timings {
    /// Registers the three families in `registry`, every series at 0.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let waits: TimingFamily = Family::new_with_constructor(timing_histogram);
        let holds: TimingFamily = Family::new_with_constructor(timing_histogram);
        let contended: Family<PrimitiveOnly, Counter> = Family::default();
        let timing = |family: &TimingFamily, primitive: Primitive, outcome: &'static str| {
            family
                .get_or_create(&TimingLabels {
                    primitive: primitive.as_str(),
                    outcome,
                })
                .clone()
        };
        let timings = Self {
            waits: Primitive::ALL
                .map(|primitive| Waited::ALL.map(|how| timing(&waits, primitive, how.as_str()))),
            holds: Primitive::ALL
                .map(|primitive| HoldEnd::ALL.map(|how| timing(&holds, primitive, how.as_str()))),
            contended: Primitive::ALL.map(|primitive| {
                contended
                    .get_or_create(&PrimitiveOnly {
                        primitive: primitive.as_str(),
                    })
                    .clone()
            }),
        };
        registry.register(
            "lockd_wait_seconds",
            "Time from the arrival of an acquire that asked to wait (wait_seconds above 0) to its \
             answer, a grant at once included, by primitive (lock, shared_lock, semaphore, \
             election, set) and outcome (granted; timed_out; refused: another mode, limit or \
             permits, a lock-delay, a quota, a session gone, too many waiters; hung_up: granted \
             after its client had gone, and undone); acquires with no wait and store failures are \
             not counted",
            waits,
        );
        registry.register(
            "lockd_hold_seconds",
            "Time from a grant (or its owner's last re-grant) to its end, by primitive and outcome \
             (released: released, resigned or its session closed, through this server; \
             force-released: by an admin, of its name or its session, through this server; \
             expired: ran out, its lease or its session, counted by the one server that took the \
             store's note of it, within a few seconds of the store recording the end)",
            holds,
        );
        registry.register(
            "lockd_contended_acquires",
            "Acquires that found their place held by another holder (refused for it, or waiting \
             for it: behind others in line, or refused while in line, whether then granted, timed \
             out or gone), by primitive",
            contended,
        );
        timings
    }

    /// Observes an acquire that asked to wait.
    pub(super) fn waited(&self, primitive: Primitive, how: Waited, waited: Duration) {
        self.waits[primitive.index()][how.index()].observe(waited.as_secs_f64());
    }

    /// Observes the end of a hold.
    pub(super) fn hold_ended(&self, primitive: Primitive, how: HoldEnd, held: Duration) {
        self.holds[primitive.index()][how.index()].observe(held.as_secs_f64());
    }

    /// Counts a contended acquire.
    pub(super) fn contended(&self, primitive: Primitive) {
        self.contended[primitive.index()].inc();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lock_service::{HoldEnd, Primitive, Waited};

    use crate::Metrics;

    /// The lines of `family` in a scrape.
    fn lines<'a>(scrape: &'a str, prefix: &str) -> Vec<&'a str> {
        scrape
            .lines()
            .filter(|line| line.starts_with(prefix))
            .collect()
    }

    #[test]
    fn every_series_is_reported_at_zero_from_the_start() {
        let scrape = Metrics::new().render(None);
        // 5 primitives x 4 answers, 5 x 3 ends: a count line each, at 0.
        let waits = lines(&scrape, "lockd_wait_seconds_count{");
        assert_eq!(waits.len(), 20, "{waits:?}");
        assert!(waits.iter().all(|line| line.ends_with(" 0")));
        assert_eq!(lines(&scrape, "lockd_hold_seconds_count{").len(), 15);
        let contended = lines(&scrape, "lockd_contended_acquires_total{");
        assert_eq!(contended.len(), 5);
        assert!(scrape.contains("# TYPE lockd_wait_seconds histogram"));
        assert!(scrape.contains("# TYPE lockd_hold_seconds histogram"));
        assert!(scrape.contains("# TYPE lockd_contended_acquires_total counter"));
    }

    #[test]
    fn observations_land_in_their_series_and_buckets() {
        let metrics = Metrics::new();
        metrics.waited(
            Primitive::SharedLock,
            Waited::TimedOut,
            Duration::from_millis(300),
        );
        metrics.hold_ended(
            Primitive::Election,
            HoldEnd::ForceReleased,
            Duration::from_secs(2 * 3_600),
        );
        metrics.contended(Primitive::Set);
        metrics.contended(Primitive::Set);
        let scrape = metrics.render(None);
        let wait = r#"{primitive="shared_lock",outcome="timed_out"#;
        assert!(scrape.contains(&format!("lockd_wait_seconds_count{wait}\"}} 1")));
        assert!(scrape.contains(&format!("lockd_wait_seconds_sum{wait}\"}} 0.3")));
        // 0.3 s: above the 0.25 s bucket, within the 0.5 s one.
        assert!(scrape.contains(&format!(
            "lockd_wait_seconds_bucket{wait}\",le=\"0.25\"}} 0"
        )));
        assert!(scrape.contains(&format!("lockd_wait_seconds_bucket{wait}\",le=\"0.5\"}} 1")));
        let hold = r#"{primitive="election",outcome="force-released"#;
        assert!(scrape.contains(&format!(
            "lockd_hold_seconds_bucket{hold}\",le=\"3600\"}} 0"
        )));
        assert!(scrape.contains(&format!(
            "lockd_hold_seconds_bucket{hold}\",le=\"14400\"}} 1"
        )));
        assert!(scrape.contains(r#"lockd_contended_acquires_total{primitive="set"} 2"#));
        assert!(scrape.contains(r#"lockd_contended_acquires_total{primitive="lock"} 0"#));
        // Everything else is still at 0.
        let counted: Vec<_> = lines(&scrape, "lockd_wait_seconds_count{")
            .into_iter()
            .filter(|line| !line.ends_with(" 0"))
            .collect();
        assert_eq!(counted.len(), 1, "{counted:?}");
    }
}
