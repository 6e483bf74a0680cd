//! The metric families lockd reports: their names, help texts, types and label sets, registered
//! once in the process's registry. Every label value comes from a fixed set or from the app's
//! route table, never from a request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use prometheus_client::encoding::{
    EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::AcquireMetric;

/// The upper bounds (seconds) of the request latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// `lockd_http_requests_total`'s labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct RequestLabels {
    /// The route pattern, or `unmatched`.
    pub route: &'static str,
    /// The method, or `other` outside the usual ones.
    pub method: &'static str,
    pub status: u16,
}

/// `lockd_http_request_duration_seconds`'s label.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct RouteLabel {
    pub route: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct OutcomeLabel {
    outcome: AcquireMetric,
}

impl From<AcquireMetric> for OutcomeLabel {
    fn from(outcome: AcquireMetric) -> Self {
        Self { outcome }
    }
}

impl EncodeLabelValue for AcquireMetric {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        EncodeLabelValue::encode(&self.label(), encoder)
    }
}

/// The result of a release or a renewal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct ResultLabel {
    pub result: &'static str,
}

/// A semaphore or election operation and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct SemaphoreLabels {
    pub operation: &'static str,
    pub outcome: &'static str,
}

/// A fence check: of which primitive, and its result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct FenceLabels {
    pub primitive: &'static str,
    pub result: &'static str,
}

/// Which primitive: `lock`, `semaphore` or `election`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct PrimitiveLabel {
    pub primitive: &'static str,
}

/// A session keepalive's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct KeepAliveLabel {
    pub outcome: &'static str,
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct ReasonLabel {
    pub reason: &'static str,
}

/// Every outcome of a keepalive, registered at 0 from the start.
pub(super) const SESSION_KEEPALIVE_OUTCOMES: [&str; 3] = ["kept", "not_found", "failed"];

/// Every reason a session ends, registered at 0 from the start (`SessionEnd::as_str`).
pub(super) const SESSION_END_REASONS: [&str; 3] = ["closed", "expired", "force-released"];

/// Every (operation, outcome) a semaphore operation reports, registered at 0 from the start.
pub(super) const SEMAPHORE_OUTCOMES: [(&str, &str); 11] = [
    ("acquire", "granted"),
    ("acquire", "unavailable"),
    ("acquire", "waited_then_granted"),
    ("acquire", "timed_out"),
    ("acquire", "limit_mismatch"),
    ("acquire", "permits_mismatch"),
    ("release", "released"),
    ("release", "not_found"),
    ("renew", "renewed"),
    ("renew", "not_found"),
    ("acquire", "hung_up"),
];

/// Every (operation, outcome) an election operation reports, registered at 0 from the start.
pub(super) const ELECTION_OUTCOMES: [(&str, &str); 14] = [
    ("campaign", "elected"),
    ("campaign", "waited_then_elected"),
    ("campaign", "not_elected"),
    ("campaign", "timed_out"),
    ("campaign", "hung_up"),
    ("proclaim", "proclaimed"),
    ("proclaim", "not_leader"),
    ("proclaim", "vacant"),
    ("renew", "renewed"),
    ("renew", "not_leader"),
    ("renew", "vacant"),
    ("resign", "resigned"),
    ("resign", "not_leader"),
    ("resign", "vacant"),
];

/// Which limit of waiters was reached: `total` or `tenant`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct LimitLabel {
    pub limit: &'static str,
}

/// One limit of one tenant of the limits file (`limit` is its key, such as `max_live_leases`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct QuotaLabels {
    pub tenant: String,
    pub limit: &'static str,
}

/// A pooled connection's state: `in_use` or `idle`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(super) struct PoolLabel {
    pub state: &'static str,
}

type LatencyFamily = Family<RouteLabel, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// Handles on the registered families (clones share their values with the registry).
#[derive(Debug)]
pub(super) struct Families {
    pub requests: Family<RequestLabels, Counter>,
    pub latency: LatencyFamily,
    pub acquires: Family<OutcomeLabel, Counter>,
    pub releases: Family<ResultLabel, Counter>,
    pub renewals: Family<ResultLabel, Counter>,
    pub semaphores: Family<SemaphoreLabels, Counter>,
    pub fences: Family<FenceLabels, Counter>,
    pub elections: Family<SemaphoreLabels, Counter>,
    pub election_terms: Counter,
    pub force_releases: Family<PrimitiveLabel, Counter>,
    pub live_sessions: Gauge,
    pub session_keepalives: Family<KeepAliveLabel, Counter>,
    pub sessions_ended: Family<ReasonLabel, Counter>,
    pub waiters_rejected: Family<LimitLabel, Counter>,
    pub quota_limits: Family<QuotaLabels, Gauge>,
    pub quota_usage: Family<QuotaLabels, Gauge>,
    pub quota_rejections: Family<QuotaLabels, Counter>,
    pub live_waiters: Gauge,
    pub observers: Gauge,
    pub pool_connections: Family<PoolLabel, Gauge>,
    pub live_lock_count_failures: Counter,
}

impl Families {
    /// Registers every family of requests, outcomes, waiters and the pool in `registry`, and
    /// `dropped` as `lockd_log_lines_dropped_total`. Counters are named without `_total`: the
    /// encoder appends it. Help texts end without a period: the registry appends one.
    pub fn register(registry: &mut Registry, dropped: Arc<AtomicU64>) -> Self {
        let families = Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            acquires: Family::default(),
            releases: Family::default(),
            renewals: Family::default(),
            semaphores: Family::default(),
            fences: Family::default(),
            elections: Family::default(),
            election_terms: Counter::default(),
            force_releases: Family::default(),
            live_sessions: Gauge::default(),
            session_keepalives: Family::default(),
            sessions_ended: Family::default(),
            waiters_rejected: Family::default(),
            quota_limits: Family::default(),
            quota_usage: Family::default(),
            quota_rejections: Family::default(),
            live_waiters: Gauge::default(),
            observers: Gauge::default(),
            pool_connections: Family::default(),
            live_lock_count_failures: Counter::default(),
        };
        // The fixed outcomes are reported from the start, at 0, so that a rate over them is
        // defined before the first one happens.
        for outcome in AcquireMetric::ALL {
            drop(families.acquires.get_or_create(&outcome.into()));
        }
        for primitive in ["lock", "semaphore", "election"] {
            drop(
                families
                    .force_releases
                    .get_or_create(&PrimitiveLabel { primitive }),
            );
        }
        for result in ["released", "not_found", "forbidden"] {
            drop(families.releases.get_or_create(&ResultLabel { result }));
        }
        for outcome in SESSION_KEEPALIVE_OUTCOMES {
            drop(
                families
                    .session_keepalives
                    .get_or_create(&KeepAliveLabel { outcome }),
            );
        }
        for reason in SESSION_END_REASONS {
            drop(
                families
                    .sessions_ended
                    .get_or_create(&ReasonLabel { reason }),
            );
        }
        for result in ["renewed", "not_found", "forbidden"] {
            drop(families.renewals.get_or_create(&ResultLabel { result }));
        }
        for (operation, outcome) in SEMAPHORE_OUTCOMES {
            drop(
                families
                    .semaphores
                    .get_or_create(&SemaphoreLabels { operation, outcome }),
            );
        }
        for (operation, outcome) in ELECTION_OUTCOMES {
            drop(
                families
                    .elections
                    .get_or_create(&SemaphoreLabels { operation, outcome }),
            );
        }
        for primitive in ["lock", "semaphore", "election"] {
            for result in ["valid", "stale"] {
                drop(
                    families
                        .fences
                        .get_or_create(&FenceLabels { primitive, result }),
                );
            }
        }
        for limit in ["total", "tenant"] {
            drop(
                families
                    .waiters_rejected
                    .get_or_create(&LimitLabel { limit }),
            );
        }

        registry.register(
            "lockd_http_requests",
            "HTTP requests answered, by route pattern, method and status",
            families.requests.clone(),
        );
        registry.register(
            "lockd_http_request_duration_seconds",
            "Time from request to response, by route pattern",
            families.latency.clone(),
        );
        registry.register(
            "lockd_acquire",
            "Acquires by outcome (granted at once, held, granted after waiting, timed out waiting)",
            families.acquires.clone(),
        );
        registry.register(
            "lockd_release",
            "Releases by result",
            families.releases.clone(),
        );
        registry.register(
            "lockd_renew",
            "Renewals by result",
            families.renewals.clone(),
        );
        registry.register(
            "lockd_semaphore_operations",
            "Semaphore operations by operation (acquire, release, renew) and outcome",
            families.semaphores.clone(),
        );
        registry.register(
            "lockd_fence_checks",
            "Fence checks by primitive (lock, semaphore, election) and result (valid: the token was a live \
             holder's; stale)",
            families.fences.clone(),
        );
        registry.register(
            "lockd_election_operations",
            "Election operations by operation (campaign, proclaim, renew, resign) and outcome",
            families.elections.clone(),
        );
        registry.register(
            "lockd_election_terms",
            "New leaders elected through this server (a new term; the sitting leader campaigning \
             again keeps its term and is not counted)",
            families.election_terms.clone(),
        );
        registry.register(
            "lockd_force_releases",
            "Leases ended by an admin's force-release through this server, by primitive (lock, \
             semaphore, election)",
            families.force_releases.clone(),
        );
        registry.register(
            "lockd_sessions",
            "Live sessions of every tenant in the database, as last counted",
            families.live_sessions.clone(),
        );
        registry.register(
            "lockd_session_keepalives",
            "Session keepalives answered by this server, by outcome (kept; not_found: the session \
             had ended; failed: the store failed)",
            families.session_keepalives.clone(),
        );
        registry.register(
            "lockd_sessions_ended",
            "Sessions ended, by reason (closed or force-released through this server; expired: \
             ended by this server's sweeper once they ran out and their lock-delay was over)",
            families.sessions_ended.clone(),
        );
        registry.register(
            "lockd_waiters_rejected",
            "Acquires with wait_seconds answered 429 because the limit of waiting acquires was \
             reached, by limit (total, or the tenant's)",
            families.waiters_rejected.clone(),
        );
        registry.register(
            "lockd_tenant_quota_limit",
            "Each limit of each tenant of the tenant limits file, as in force now",
            families.quota_limits.clone(),
        );
        registry.register(
            "lockd_tenant_quota_usage",
            "What each tenant uses of each of its limits now: live leases (in the whole \
             database), waiting acquires and open observe or event streams (of this server); none \
             for max_ttl_seconds, a bound on each request",
            families.quota_usage.clone(),
        );
        registry.register(
            "lockd_tenant_quota_rejections",
            "Requests answered 429 /problems/quota-exceeded by this server, by tenant and limit",
            families.quota_rejections.clone(),
        );
        registry.register(
            "lockd_live_waiters",
            "Acquires waiting for a lock right now",
            families.live_waiters.clone(),
        );
        registry.register(
            "lockd_observers",
            "Observe streams open right now (of locks, semaphores and elections)",
            families.observers.clone(),
        );
        registry.register(
            "lockd_db_pool_connections",
            "Pooled database connections by state (the SQLite writer's own connection is not \
             pooled)",
            families.pool_connections.clone(),
        );
        registry.register(
            "lockd_live_locks_count_failures",
            "Background counts of live locks that failed",
            families.live_lock_count_failures.clone(),
        );
        registry.register(
            "lockd_log_lines_dropped",
            "Log and audit lines dropped because standard error did not take them in time (the \
             queue to the log writer was full), or because writing them failed",
            SharedCounter(dropped),
        );
        families
    }
}

/// A counter kept and incremented outside this crate (by the logger), read at each scrape.
#[derive(Debug)]
struct SharedCounter(Arc<AtomicU64>);

impl EncodeMetric for SharedCounter {
    fn encode(&self, mut encoder: MetricEncoder) -> std::fmt::Result {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.0.load(Ordering::Relaxed), None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
}
