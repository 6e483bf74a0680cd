//! What `GET /metrics` reports, in the Prometheus text exposition format (version 0.0.4):
//! requests by route pattern and status, their latency, lock outcomes, live waiters, the
//! database pool and the number of live locks.
//!
//! Written by hand (a few counters under one mutex, rendered on scrape) rather than with a
//! metrics crate: the set of series is small and fixed, and no label value ever comes from a
//! request (routes are actix's patterns such as `/locks/{resource}`, methods outside a known set
//! are `other`), so no client can create series.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use lock_domain::{PoolState, ReleaseResult, RenewResult};

/// The upper bounds (seconds) of the request latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How an acquire ended, for `lockd_acquire_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AcquireMetric {
    /// Granted at once.
    Granted,
    /// Held by another owner; the caller did not wait.
    Held,
    /// Granted after waiting for the holder.
    WaitedThenGranted,
    /// Waited and gave up: still held at the deadline.
    TimedOut,
}

impl AcquireMetric {
    const ALL: [AcquireMetric; 4] = [
        AcquireMetric::Granted,
        AcquireMetric::Held,
        AcquireMetric::WaitedThenGranted,
        AcquireMetric::TimedOut,
    ];

    fn label(self) -> &'static str {
        match self {
            AcquireMetric::Granted => "granted",
            AcquireMetric::Held => "held",
            AcquireMetric::WaitedThenGranted => "waited_then_granted",
            AcquireMetric::TimedOut => "timed_out",
        }
    }
}

/// One latency histogram.
#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Cumulative counts are computed on render; these are per bucket (the last is `+Inf`).
    buckets: [u64; LATENCY_BUCKETS.len() + 1],
    sum_seconds: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[bucket] += 1;
        self.sum_seconds += seconds;
        self.count += 1;
    }
}

/// The counters that change per request, behind one short-held mutex.
#[derive(Debug, Default)]
struct Counters {
    /// (route pattern, method, status) -> requests.
    requests: BTreeMap<(&'static str, &'static str, u16), u64>,
    /// route pattern -> latency.
    latency: BTreeMap<&'static str, Histogram>,
    acquires: BTreeMap<AcquireMetric, u64>,
    releases: BTreeMap<&'static str, u64>,
    renewals: BTreeMap<&'static str, u64>,
    /// limit ("total" or "tenant") -> waiting acquires refused.
    waiters_rejected: BTreeMap<&'static str, u64>,
}

/// The live-lock count and when it was read.
#[derive(Debug, Clone, Copy)]
struct LiveLocks {
    count: u64,
    read_at: Instant,
}

/// The metrics of one lockd process. Shared by every worker (`Arc`); cheap to update.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<Counters>,
    live_waiters: AtomicI64,
    live_locks: Mutex<Option<LiveLocks>>,
    live_lock_refreshes_failed: AtomicU64,
    /// Grants that took over another owner's expired lease, in the whole database, as last
    /// counted in the background (with the live locks).
    expired_takeovers: Mutex<Option<u64>>,
    /// Route patterns are interned here so that the maps can key on `&'static str` without
    /// allocating per request; their number is bounded by the routes the app registers.
    routes: Mutex<Vec<&'static str>>,
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    fn counters(&self) -> MutexGuard<'_, Counters> {
        self.counters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts one acquire by how it ended.
    pub fn acquire_outcome(&self, outcome: AcquireMetric) {
        *self.counters().acquires.entry(outcome).or_default() += 1;
    }

    /// Counts one release by its result.
    pub fn release_result(&self, result: &ReleaseResult) {
        let label = match result {
            ReleaseResult::Released(_) => "released",
            ReleaseResult::NotFound => "not_found",
            ReleaseResult::Forbidden => "forbidden",
        };
        *self.counters().releases.entry(label).or_default() += 1;
    }

    /// Counts one renewal by its result.
    pub fn renew_result(&self, result: &RenewResult) {
        let label = match result {
            RenewResult::Renewed(_) => "renewed",
            RenewResult::NotFound => "not_found",
            RenewResult::Forbidden => "forbidden",
        };
        *self.counters().renewals.entry(label).or_default() += 1;
    }

    /// Counts one acquire refused a place in line because the server's limit of waiters (in
    /// all, or of the caller's tenant) was reached.
    pub fn waiter_rejected(&self, per_tenant: bool) {
        let limit = if per_tenant { "tenant" } else { "total" };
        *self.counters().waiters_rejected.entry(limit).or_default() += 1;
    }

    /// Sets the number of acquires waiting for a lock right now (`lockd_live_waiters`); the
    /// `/metrics` handler reads it from the waiting queues before each render.
    pub fn set_live_waiters(&self, waiters: u64) {
        self.live_waiters.store(
            i64::try_from(waiters).unwrap_or(i64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Records the live-lock count read from the repository.
    pub fn set_live_locks(&self, count: u64) {
        *self
            .live_locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(LiveLocks {
            count,
            read_at: Instant::now(),
        });
    }

    /// A count of the live locks failed (`lockd_live_locks_count_failures_total`).
    pub fn live_lock_count_failed(&self) {
        self.live_lock_refreshes_failed
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Records the database's count of expired takeovers.
    pub fn set_expired_takeovers(&self, count: u64) {
        *self
            .expired_takeovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(count);
    }

    fn intern(&self, route: &str) -> &'static str {
        let mut routes = self
            .routes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = routes.iter().find(|known| **known == route) {
            return known;
        }
        // Bounded by the app's route table (a handful of patterns): leaking them is the
        // cheapest way to key the maps by `&'static str`.
        let leaked: &'static str = Box::leak(route.to_owned().into_boxed_str());
        routes.push(leaked);
        leaked
    }

    /// Counts one answered request and its latency.
    fn request(&self, route: Option<&str>, method: &Method, status: u16, elapsed: Duration) {
        let route = match route {
            Some(pattern) => self.intern(pattern),
            None => "unmatched",
        };
        let method = match *method {
            Method::GET => "GET",
            Method::POST => "POST",
            Method::DELETE => "DELETE",
            Method::PUT => "PUT",
            Method::PATCH => "PATCH",
            Method::HEAD => "HEAD",
            Method::OPTIONS => "OPTIONS",
            _ => "other",
        };
        let mut counters = self.counters();
        *counters
            .requests
            .entry((route, method, status))
            .or_default() += 1;
        counters
            .latency
            .entry(route)
            .or_default()
            .observe(elapsed.as_secs_f64());
    }

    /// The exposition text, with the pool state read now.
    pub fn render(&self, pool: Option<PoolState>) -> String {
        let mut out = String::with_capacity(4096);
        let counters = self.counters();

        family(
            &mut out,
            "lockd_http_requests_total",
            "counter",
            "HTTP requests answered, by route pattern, method and status.",
        );
        for ((route, method, status), count) in &counters.requests {
            let _ = writeln!(
                out,
                "lockd_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {count}",
                escape(route)
            );
        }

        family(
            &mut out,
            "lockd_http_request_duration_seconds",
            "histogram",
            "Time from request to response, by route pattern.",
        );
        for (route, histogram) in &counters.latency {
            let route = escape(route);
            let mut cumulative = 0;
            for (bound, count) in LATENCY_BUCKETS.iter().zip(histogram.buckets) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "lockd_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "lockd_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                histogram.count
            );
            let _ = writeln!(
                out,
                "lockd_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                histogram.sum_seconds
            );
            let _ = writeln!(
                out,
                "lockd_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                histogram.count
            );
        }

        family(&mut out, "lockd_acquire_total", "counter", "Acquires by outcome (granted at once, held, granted after waiting, timed out waiting).");
        for outcome in AcquireMetric::ALL {
            let count = counters.acquires.get(&outcome).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "lockd_acquire_total{{outcome=\"{}\"}} {count}",
                outcome.label()
            );
        }
        family(
            &mut out,
            "lockd_release_total",
            "counter",
            "Releases by result.",
        );
        for result in ["released", "not_found", "forbidden"] {
            let count = counters.releases.get(result).copied().unwrap_or(0);
            let _ = writeln!(out, "lockd_release_total{{result=\"{result}\"}} {count}");
        }
        family(
            &mut out,
            "lockd_renew_total",
            "counter",
            "Renewals by result.",
        );
        for result in ["renewed", "not_found", "forbidden"] {
            let count = counters.renewals.get(result).copied().unwrap_or(0);
            let _ = writeln!(out, "lockd_renew_total{{result=\"{result}\"}} {count}");
        }
        family(
            &mut out,
            "lockd_waiters_rejected_total",
            "counter",
            "Acquires with wait_seconds answered 429 because the limit of waiting acquires was reached, by limit (total, or the tenant's).",
        );
        for limit in ["total", "tenant"] {
            let count = counters.waiters_rejected.get(limit).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "lockd_waiters_rejected_total{{limit=\"{limit}\"}} {count}"
            );
        }
        drop(counters);

        family(
            &mut out,
            "lockd_live_waiters",
            "gauge",
            "Acquires waiting for a lock right now.",
        );
        let _ = writeln!(
            out,
            "lockd_live_waiters {}",
            self.live_waiters.load(Ordering::Relaxed).max(0)
        );

        if let Some(pool) = pool {
            family(&mut out, "lockd_db_pool_connections", "gauge", "Pooled database connections by state (the SQLite writer's own connection is not pooled).");
            let _ = writeln!(
                out,
                "lockd_db_pool_connections{{state=\"in_use\"}} {}",
                pool.in_use
            );
            let _ = writeln!(
                out,
                "lockd_db_pool_connections{{state=\"idle\"}} {}",
                pool.idle
            );
        }

        let live = *self
            .live_locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(live) = live {
            family(
                &mut out,
                "lockd_live_locks",
                "gauge",
                "Live locks of every tenant, as last counted (see lockd_live_locks_age_seconds).",
            );
            let _ = writeln!(out, "lockd_live_locks {}", live.count);
            family(
                &mut out,
                "lockd_live_locks_age_seconds",
                "gauge",
                "How long ago lockd_live_locks was counted.",
            );
            let _ = writeln!(
                out,
                "lockd_live_locks_age_seconds {}",
                live.read_at.elapsed().as_secs_f64()
            );
        }
        let takeovers = *self
            .expired_takeovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(takeovers) = takeovers {
            family(
                &mut out,
                "lockd_expired_takeovers_total",
                "counter",
                "Grants that took a lock over from another owner whose lease had expired, in the whole database (every instance reports the same total), as last counted (see lockd_live_locks_age_seconds).",
            );
            let _ = writeln!(out, "lockd_expired_takeovers_total {takeovers}");
        }
        family(
            &mut out,
            "lockd_live_locks_count_failures_total",
            "counter",
            "Background counts of live locks that failed.",
        );
        let _ = writeln!(
            out,
            "lockd_live_locks_count_failures_total {}",
            self.live_lock_refreshes_failed.load(Ordering::Relaxed)
        );
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value as the exposition format quotes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The middleware that counts every answered request by its route pattern and status.
pub(crate) async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let metrics = req
        .app_data::<actix_web::web::Data<crate::ApiState>>()
        .map(|state| Arc::clone(&state.settings.metrics));
    let method = req.method().clone();
    let route = req.match_pattern();
    let response = next.call(req).await;
    if let Some(metrics) = metrics {
        let status = match &response {
            Ok(response) => response.status().as_u16(),
            Err(error) => error.as_response_error().status_code().as_u16(),
        };
        metrics.request(route.as_deref(), &method, status, started.elapsed());
    }
    response
}
