//! What `GET /metrics` reports, in the Prometheus text exposition format (version 0.0.4):
//! requests by route pattern and status, their latency, lock outcomes, live waiters, the
//! database pool, the number of live locks and the log lines dropped.
//!
//! The families are defined once, typed, in a `prometheus-client` registry (the Prometheus
//! project's own Rust client), which also renders them. No label value ever comes from a
//! request (routes are actix's patterns such as `/locks/{resource}`, methods outside a known set
//! are `other`), so no client can create series.
//!
//! - [`families`]: the families, their help texts and label sets, registered once;
//! - [`live_locks`]: the last count of the live locks, and how it is reported;
//! - [`timings`]: how long acquires wait and holds last, and the contended acquires.
//!
//! Requests are counted by the HTTP crate's middleware, through [`Metrics::request`].

mod families;
mod live_locks;
mod timings;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lock_domain::{PoolState, ReleaseResult, RenewResult};
use prometheus_client::registry::Registry;

use families::{
    Families, FenceLabels, LimitLabel, PoolLabel, PrimitiveLabel, QuotaLabels, RequestLabels,
    ResultLabel, RouteLabel, SemaphoreLabels,
};
use live_locks::LiveLockReadings;
use timings::Timings;

/// How an acquire ended, for `lockd_acquire_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AcquireMetric {
    /// Granted at once.
    Granted,
    /// Held by another owner; the caller did not wait.
    Held,
    /// Granted after waiting for the holder.
    WaitedThenGranted,
    /// Waited and gave up: still held at the deadline.
    TimedOut,
    /// Refused: the caller holds the lock in the other mode.
    ModeMismatch,
    /// Not granted: a lease of another owner ran out less than its lock-delay ago.
    Delayed,
}

impl AcquireMetric {
    const ALL: [AcquireMetric; 6] = [
        AcquireMetric::Granted,
        AcquireMetric::Held,
        AcquireMetric::WaitedThenGranted,
        AcquireMetric::TimedOut,
        AcquireMetric::ModeMismatch,
        AcquireMetric::Delayed,
    ];

    /// The value of the `outcome` label.
    fn label(self) -> &'static str {
        match self {
            AcquireMetric::Granted => "granted",
            AcquireMetric::Held => "held",
            AcquireMetric::WaitedThenGranted => "waited_then_granted",
            AcquireMetric::TimedOut => "timed_out",
            AcquireMetric::ModeMismatch => "mode_mismatch",
            AcquireMetric::Delayed => "delayed",
        }
    }
}

/// The metrics of one lockd process. Shared by every worker (`Arc`); cheap to update: a request
/// touches a few atomics and one short-held lock per family.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    families: Families,
    live_locks: Arc<LiveLockReadings>,
    timings: Timings,
    /// Route patterns are interned so that label sets can hold `&'static str` without
    /// allocating per request.
    routes: RouteNames,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Metrics whose `lockd_log_lines_dropped_total` stays 0 (nothing logs through them): for
    /// tests, and servers whose logging is not lockd's own.
    pub fn new() -> Self {
        Self::with_log_lines_dropped(Arc::default())
    }

    /// Metrics that report `dropped` as `lockd_log_lines_dropped_total`: the count of log lines
    /// the logger dropped rather than block, which it keeps and increments itself.
    pub fn with_log_lines_dropped(dropped: Arc<AtomicU64>) -> Self {
        let mut registry = Registry::default();
        let families = Families::register(&mut registry, dropped);
        let live_locks = Arc::new(LiveLockReadings::default());
        registry.register_collector(Box::new(Arc::clone(&live_locks)));
        let timings = Timings::register(&mut registry);
        Self {
            registry,
            families,
            live_locks,
            timings,
            routes: RouteNames::default(),
        }
    }

    /// Counts one acquire by how it ended.
    pub fn acquire_outcome(&self, outcome: AcquireMetric) {
        self.families.acquires.get_or_create(&outcome.into()).inc();
    }

    /// Counts one release by its result.
    pub fn release_result(&self, result: &ReleaseResult) {
        let result = match result {
            ReleaseResult::Released(_) => "released",
            ReleaseResult::NotFound => "not_found",
            ReleaseResult::Forbidden => "forbidden",
        };
        self.families
            .releases
            .get_or_create(&ResultLabel { result })
            .inc();
    }

    /// Counts one renewal by its result.
    pub fn renew_result(&self, result: &RenewResult) {
        let result = match result {
            RenewResult::Renewed(_) => "renewed",
            RenewResult::NotFound => "not_found",
            RenewResult::Forbidden => "forbidden",
        };
        self.families
            .renewals
            .get_or_create(&ResultLabel { result })
            .inc();
    }

    /// Counts a semaphore operation's outcome (`operation` and `outcome` from
    /// `families::SEMAPHORE_OUTCOMES`).
    pub fn semaphore_outcome(&self, operation: &'static str, outcome: &'static str) {
        self.families
            .semaphores
            .get_or_create(&SemaphoreLabels { operation, outcome })
            .inc();
    }

    /// Counts an election operation's outcome (`operation` and `outcome` from
    /// `families::ELECTION_OUTCOMES`).
    pub fn election_outcome(&self, operation: &'static str, outcome: &'static str) {
        self.families
            .elections
            .get_or_create(&SemaphoreLabels { operation, outcome })
            .inc();
    }

    /// Counts the leases of a `primitive` (`lock`, `semaphore`, `election`) an admin's
    /// force-release ended.
    pub fn force_released(&self, primitive: &'static str, leases: usize) {
        self.families
            .force_releases
            .get_or_create(&PrimitiveLabel { primitive })
            .inc_by(leases as u64);
    }

    /// Observes an acquire of `primitive` that asked to wait, answered `how` after `waited`
    /// (`lockd_wait_seconds`).
    pub fn waited(
        &self,
        primitive: lock_service::Primitive,
        how: lock_service::Waited,
        waited: Duration,
    ) {
        self.timings.waited(primitive, how, waited);
    }

    /// Observes a hold of `primitive` that ended `how` after `held` (`lockd_hold_seconds`).
    pub fn hold_ended(
        &self,
        primitive: lock_service::Primitive,
        how: lock_service::HoldEnd,
        held: Duration,
    ) {
        self.timings.hold_ended(primitive, how, held);
    }

    /// Counts an acquire of `primitive` that found its place held
    /// (`lockd_contended_acquires_total`).
    pub fn contended(&self, primitive: lock_service::Primitive) {
        self.timings.contended(primitive);
    }

    /// Sets the count of live sessions (`lockd_sessions`).
    pub fn set_live_sessions(&self, count: u64) {
        self.families
            .live_sessions
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Counts a keepalive's `outcome` (`kept`, `not_found`, `failed`).
    pub fn session_keepalive(&self, outcome: &'static str) {
        self.families
            .session_keepalives
            .get_or_create(&families::KeepAliveLabel { outcome })
            .inc();
    }

    /// Counts `count` sessions ended for `reason` (`closed`, `expired`, `force-released`).
    pub fn sessions_ended(&self, reason: &'static str, count: usize) {
        self.families
            .sessions_ended
            .get_or_create(&families::ReasonLabel { reason })
            .inc_by(count as u64);
    }

    /// Sets the limits in force and their usage, replacing the last ones (a reload may have
    /// dropped a tenant or a limit).
    pub fn set_quota_usage(&self, usage: &[lock_service::QuotaUsage]) {
        self.families.quota_limits.clear();
        self.families.quota_usage.clear();
        for one in usage {
            let labels = QuotaLabels {
                tenant: one.tenant.as_str().to_owned(),
                limit: one.limit.key(),
            };
            let gauge = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
            self.families
                .quota_limits
                .get_or_create(&labels)
                .set(gauge(one.allowed));
            if let Some(used) = one.used {
                self.families
                    .quota_usage
                    .get_or_create(&labels)
                    .set(gauge(used));
            }
        }
    }

    /// Counts a request refused for going over `limit` of `tenant`.
    pub fn quota_exceeded(&self, tenant: &str, limit: &'static str) {
        self.families
            .quota_rejections
            .get_or_create(&QuotaLabels {
                tenant: tenant.to_owned(),
                limit,
            })
            .inc();
    }

    /// Counts a new leader elected through this server (a new term).
    pub fn election_term_changed(&self) {
        self.families.election_terms.inc();
    }

    /// Counts a fence check of a `primitive` (`lock`, `semaphore` or `election`): `valid` or stale.
    pub fn fence_checked(&self, primitive: &'static str, valid: bool) {
        let result = if valid { "valid" } else { "stale" };
        self.families
            .fences
            .get_or_create(&FenceLabels { primitive, result })
            .inc();
    }

    /// Counts one acquire refused a place in line because the server's limit of waiters (in
    /// all, or of the caller's tenant) was reached.
    pub fn waiter_rejected(&self, per_tenant: bool) {
        let limit = if per_tenant { "tenant" } else { "total" };
        self.families
            .waiters_rejected
            .get_or_create(&LimitLabel { limit })
            .inc();
    }

    /// Sets the number of observe streams open right now (`lockd_observers`).
    pub fn set_observers(&self, observers: u64) {
        self.families
            .observers
            .set(i64::try_from(observers).unwrap_or(i64::MAX));
    }

    /// Sets the number of acquires waiting for a lock right now (`lockd_live_waiters`); the
    /// `/metrics` handler reads it from the waiting queues before each render.
    pub fn set_live_waiters(&self, waiters: u64) {
        self.families
            .live_waiters
            .set(i64::try_from(waiters).unwrap_or(i64::MAX));
    }

    /// Records the live-lock count read from the repository.
    pub fn set_live_locks(&self, count: u64) {
        self.live_locks.set_live_locks(count);
    }

    /// A count of the live locks failed (`lockd_live_locks_count_failures_total`).
    pub fn live_lock_count_failed(&self) {
        self.families.live_lock_count_failures.inc();
    }

    /// Records the database's count of expired takeovers.
    pub fn set_expired_takeovers(&self, count: u64) {
        self.live_locks.set_expired_takeovers(count);
    }

    /// The exposition text, with the pool state read now (`None`: the store has no pool, and
    /// `lockd_db_pool_connections` is left out).
    pub fn render(&self, pool: Option<PoolState>) -> String {
        if let Some(pool) = pool {
            for (state, connections) in [("in_use", pool.in_use), ("idle", pool.idle)] {
                self.families
                    .pool_connections
                    .get_or_create(&PoolLabel { state })
                    .set(i64::from(connections));
            }
        }
        let mut out = String::with_capacity(8192);
        // Writing into a String cannot fail, and no family of ours fails to encode.
        if let Err(error) =
            prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)
        {
            tracing::warn!(%error, "encoding /metrics failed; the scrape is cut short");
        }
        out
    }
}

impl Metrics {
    /// Counts one answered request and its latency: `route` is the router's pattern (such as
    /// `/locks/{resource}`; `None` when no route matched), `method` a fixed label (the HTTP
    /// crate maps any unusual method to `other`), so no client can create series.
    pub fn request(
        &self,
        route: Option<&str>,
        method: &'static str,
        status: u16,
        elapsed: Duration,
    ) {
        let route = match route {
            Some(pattern) => self.routes.intern(pattern),
            None => "unmatched",
        };
        self.families
            .requests
            .get_or_create(&RequestLabels {
                route,
                method,
                status,
            })
            .inc();
        self.families
            .latency
            .get_or_create(&RouteLabel { route })
            .observe(elapsed.as_secs_f64());
    }
}

/// The route patterns seen so far, each leaked once, so that label sets can hold them as
/// `&'static str`. Their number is bounded by the routes the app registers.
#[derive(Debug, Default)]
struct RouteNames(Mutex<Vec<&'static str>>);

impl RouteNames {
    fn intern(&self, route: &str) -> &'static str {
        let mut routes = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = routes.iter().find(|known| **known == route) {
            return known;
        }
        // Bounded by the app's route table (a handful of patterns): leaking them is the
        // cheapest way to key the families by `&'static str`.
        let leaked: &'static str = Box::leak(route.to_owned().into_boxed_str());
        routes.push(leaked);
        leaked
    }
}
