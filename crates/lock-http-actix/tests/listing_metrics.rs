//! `GET /locks` and `GET /metrics` at the HTTP layer, over the in-memory reference repository:
//! pages and cursors, problem answers for bad queries, tenants, the exposition format, and
//! counters that move with requests without ever naming a resource.

mod wired;

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use lock_domain::{LeaseStore, MockLeaseStore, MockStoreHealth, PoolState, StoreHealth};
use lock_http_actix::{hash_key, ApiKeys, ApiSettings};
use lock_telemetry::{AcquireMetric, Metrics};
use serde_json::Value;

struct Answer {
    status: StatusCode,
    content_type: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn send(
    repo: Arc<dyn LeaseStore>,
    settings: ApiSettings,
    reqs: Vec<TestRequest>,
) -> Vec<Answer> {
    let mut health = MockStoreHealth::new();
    health.expect_pool_state().returning(|| None);
    send_over(repo, Arc::new(health), settings, reqs).await
}

async fn send_over(
    repo: Arc<dyn LeaseStore>,
    health: Arc<dyn StoreHealth>,
    settings: ApiSettings,
    reqs: Vec<TestRequest>,
) -> Vec<Answer> {
    let app = init_service(App::new().configure(wired::configure(
        wired::Ports {
            store: lock_service::StorePorts {
                leases: repo,
                sessions: Arc::new(lock_domain::MockSessionStore::new()),
                history: Arc::new(lock_domain::MockHistoryRepository::new()),
                usage: Arc::new(lock_domain::MockLeaseUsage::new()),
            },
            health,
        },
        settings,
    )))
    .await;
    let mut answers = Vec::new();
    for req in reqs {
        let response = call_service(&app, req.to_request()).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = String::from_utf8(read_body(response).await.to_vec()).unwrap();
        answers.push(Answer {
            status,
            content_type,
            body,
        });
    }
    answers
}

fn acquire(resource: &str, owner: &str) -> TestRequest {
    TestRequest::post()
        .uri(&format!(
            "/locks/{}",
            percent_encoding::utf8_percent_encode(resource, percent_encoding::NON_ALPHANUMERIC)
        ))
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(format!(r#"{{"owner": "{owner}", "ttl_seconds": 30}}"#))
}

fn get(uri: &str) -> TestRequest {
    TestRequest::get().uri(uri)
}

fn names(page: &Value) -> Vec<String> {
    page["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["resource"].as_str().unwrap().to_owned())
        .collect()
}

fn memory() -> Arc<dyn LeaseStore> {
    Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new())))
}

#[actix_web::test]
async fn pages_follow_the_cursor_to_the_last_page() {
    let mut reqs: Vec<TestRequest> = ["b", "a", "B", "é", "c", "other"]
        .iter()
        .map(|r| acquire(r, "w"))
        .collect();
    reqs.push(get("/locks?limit=2"));
    let answers = send(memory(), ApiSettings::default(), reqs).await;
    let first = answers.last().unwrap();
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.content_type, "application/json");
    let page = first.json();
    assert_eq!(names(&page), ["B", "a"]);
    let lock = &page["locks"][0];
    for field in [
        "resource",
        "owner",
        "acquired_at",
        "expires_at",
        "fencing_token",
    ] {
        assert!(lock.get(field).is_some(), "{field} in {lock}");
    }
    assert_eq!(
        lock["ttl_remaining_ms"], 30_000,
        "the manual clock has not moved"
    );

    // Follow the cursors with a fresh app over a repository holding the same locks.
    let repo = memory();
    let setup: Vec<TestRequest> = ["b", "a", "B", "é", "c", "other"]
        .iter()
        .map(|r| acquire(r, "w"))
        .collect();
    send(Arc::clone(&repo), ApiSettings::default(), setup).await;
    let mut seen = Vec::new();
    let mut uri = "/locks?limit=2".to_owned();
    for _ in 0..10 {
        let answer = send(Arc::clone(&repo), ApiSettings::default(), vec![get(&uri)]).await;
        let page = answer[0].json();
        seen.extend(names(&page));
        match page.get("next_cursor") {
            Some(cursor) => {
                let cursor = cursor.as_str().unwrap();
                assert!(!cursor.contains('=') && !cursor.contains('/') && !cursor.contains('+'));
                uri = format!("/locks?limit=2&cursor={cursor}");
            }
            None => break,
        }
    }
    assert_eq!(seen, ["B", "a", "b", "c", "other", "é"]);

    let only = send(repo, ApiSettings::default(), vec![get("/locks?prefix=o")]).await;
    let page = only[0].json();
    assert_eq!(names(&page), ["other"]);
    assert!(
        page.get("next_cursor").is_none(),
        "absent on the last page: {page}"
    );
}

#[actix_web::test]
async fn bad_queries_are_422_problems_and_touch_nothing() {
    for uri in [
        "/locks?limit=0",
        "/locks?limit=1001",
        "/locks?limit=abc",
        "/locks?cursor=bm90LWEtY3Vyc29y",
        "/locks?cursor=%FF",
        "/locks?prefix=%00",
        "/locks?prefx=a",
        "/locks?limit=5&limit=5",
    ] {
        // A mock without expectations panics if the repository is reached.
        let answers = send(
            Arc::new(MockLeaseStore::new()),
            ApiSettings::default(),
            vec![get(uri)],
        )
        .await;
        let answer = &answers[0];
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{uri}: {}",
            answer.body
        );
        assert_eq!(answer.content_type, "application/problem+json", "{uri}");
        let problem = answer.json();
        assert_eq!(problem["status"], 422);
        assert!(!problem["errors"].as_array().unwrap().is_empty(), "{uri}");
    }
    let answers = send(
        memory(),
        ApiSettings::default(),
        vec![TestRequest::put().uri("/locks")],
    )
    .await;
    // POST and DELETE /locks take and release several locks; other methods are not allowed.
    assert_eq!(answers[0].status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answers[0].content_type, "application/problem+json");
}

#[actix_web::test]
async fn a_tenant_lists_only_its_own_locks_and_needs_its_key() {
    let keys = Arc::new(
        ApiKeys::parse(&format!(
            "acme {}\nglobex {}\n",
            hash_key("acme-key-000000001"),
            hash_key("globex-key-00000001")
        ))
        .unwrap(),
    );
    let settings = ApiSettings {
        api_keys: Some(keys),
        ..ApiSettings::default()
    };
    let bearer = |key: &str| (header::AUTHORIZATION, format!("Bearer {key}"));
    let answers = send(
        memory(),
        settings,
        vec![
            acquire("acme-job", "w").insert_header(bearer("acme-key-000000001")),
            acquire("globex-job", "w").insert_header(bearer("globex-key-00000001")),
            get("/locks").insert_header(bearer("acme-key-000000001")),
            get("/locks").insert_header(bearer("globex-key-00000001")),
            get("/locks?limit=0"),
            get("/metrics"),
        ],
    )
    .await;
    assert_eq!(names(&answers[2].json()), ["acme-job"]);
    assert_eq!(names(&answers[3].json()), ["globex-job"]);
    assert_eq!(
        answers[4].status,
        StatusCode::UNAUTHORIZED,
        "401 comes before 422"
    );
    assert_eq!(
        answers[5].status,
        StatusCode::OK,
        "/metrics is open, like /healthz"
    );
}

/// Checks every line against the text exposition format 0.0.4: `# HELP`/`# TYPE` lines, and
/// samples `name{label="value",...} number` whose family was declared by a `# TYPE` line.
fn assert_exposition(text: &str) {
    let mut typed: BTreeSet<String> = BTreeSet::new();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(valid_name(name), "{line}");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            assert!(typed.insert(name.to_owned()), "one TYPE per family: {line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, _) = rest.split_once(' ').expect("HELP name text");
            assert!(valid_name(name), "{line}");
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line {line:?}"
        );
        let (series, value) = line.rsplit_once(' ').expect("a sample has a value");
        assert!(
            value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
            "{line}"
        );
        let name = match series.split_once('{') {
            None => series,
            Some((name, labels)) => {
                let labels = labels.strip_suffix('}').expect("labels end with }");
                assert_labels(labels, line);
                name
            }
        };
        assert!(valid_name(name), "{line}");
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| typed.contains(*f)))
            .unwrap_or(name);
        assert!(typed.contains(family), "sample before its TYPE: {line}");
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn assert_labels(mut labels: &str, line: &str) {
    while !labels.is_empty() {
        let (name, rest) = labels
            .split_once("=\"")
            .unwrap_or_else(|| panic!("label=\"…\" in {line}"));
        assert!(valid_name(name) && !name.contains(':'), "{line}");
        // The value runs to the first unescaped quote.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match (escaped, c) {
                (true, '\\' | '"' | 'n') => escaped = false,
                (true, _) => panic!("bad escape in {line}"),
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(i);
                    break;
                }
                (false, '\n') => panic!("raw newline in {line}"),
                _ => {}
            }
        }
        let end = end.unwrap_or_else(|| panic!("unterminated label value in {line}"));
        labels = &rest[end + 1..];
        labels = labels.strip_prefix(',').unwrap_or(labels);
    }
}

fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in\n{text}"))
}

#[actix_web::test]
async fn metrics_count_requests_by_route_pattern_and_outcomes() {
    let metrics = Arc::new(Metrics::new());
    let settings = ApiSettings {
        metrics: Arc::clone(&metrics),
        ..ApiSettings::default()
    };
    // The reference store, behind a mock that lets every lease operation through.
    let mut repo = MockLeaseStore::new();
    let inner = InMemoryLockRepository::new(Arc::new(ManualClock::new()));
    repo.expect_apply()
        .returning(move |t, op| futures_block(inner.apply(t, op)));
    let mut health = MockStoreHealth::new();
    health
        .expect_pool_state()
        .returning(|| Some(PoolState { in_use: 2, idle: 5 }));
    metrics.set_live_locks(42);
    metrics.acquire_outcome(AcquireMetric::WaitedThenGranted);

    let secret = "secret-resource-name";
    let answers = send_over(
        Arc::new(repo),
        Arc::new(health),
        settings,
        vec![
            acquire(secret, "w"),
            acquire(secret, "w"),
            acquire(secret, "intruder"),
            TestRequest::delete().uri(&format!("/locks/{secret}?owner=intruder")),
            TestRequest::delete().uri(&format!("/locks/{secret}?owner=w")),
            TestRequest::post()
                .uri(&format!("/locks/{secret}/renew"))
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .set_payload(r#"{"owner": "w", "ttl_seconds": 5}"#),
            get("/no-such-route/with-a-name"),
            TestRequest::default()
                .method(actix_web::http::Method::from_bytes(b"BREW").unwrap())
                .uri("/metrics"),
            get("/metrics"),
        ],
    )
    .await;
    let scrape = answers.last().unwrap();
    assert_eq!(scrape.status, StatusCode::OK);
    assert_eq!(
        scrape.content_type,
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = &scrape.body;
    assert_exposition(text);
    assert!(
        !text.contains(secret),
        "no resource name in any label:\n{text}"
    );
    assert!(!text.contains("no-such-route") && !text.contains("BREW"));
    let route = r#"route="/locks/{resource}""#;
    assert_eq!(
        sample(
            text,
            &format!(r#"lockd_http_requests_total{{{route},method="POST",status="200"}}"#)
        ),
        3.0
    );
    assert_eq!(
        sample(
            text,
            &format!(r#"lockd_http_requests_total{{{route},method="DELETE",status="403"}}"#)
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            &format!(r#"lockd_http_requests_total{{{route},method="DELETE",status="204"}}"#)
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            r#"lockd_http_requests_total{route="/locks/{resource}/renew",method="POST",status="404"}"#
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            r#"lockd_http_requests_total{route="unmatched",method="GET",status="404"}"#
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            r#"lockd_http_requests_total{route="/metrics",method="other",status="405"}"#
        ),
        1.0
    );
    assert_eq!(
        sample(
            text,
            &format!(r#"lockd_http_request_duration_seconds_count{{{route}}}"#)
        ),
        5.0
    );
    assert_eq!(
        sample(
            text,
            &format!(r#"lockd_http_request_duration_seconds_bucket{{{route},le="+Inf"}}"#)
        ),
        5.0
    );
    assert_eq!(
        sample(text, r#"lockd_acquire_total{outcome="granted"}"#),
        2.0
    );
    assert_eq!(sample(text, r#"lockd_acquire_total{outcome="held"}"#), 1.0);
    assert_eq!(
        sample(
            text,
            r#"lockd_acquire_total{outcome="waited_then_granted"}"#
        ),
        1.0
    );
    assert_eq!(
        sample(text, r#"lockd_acquire_total{outcome="timed_out"}"#),
        0.0
    );
    assert_eq!(
        sample(text, r#"lockd_release_total{result="forbidden"}"#),
        1.0
    );
    assert_eq!(
        sample(text, r#"lockd_release_total{result="released"}"#),
        1.0
    );
    assert_eq!(
        sample(text, r#"lockd_renew_total{result="not_found"}"#),
        1.0
    );
    // Read from the waiting queues at each scrape: nobody waits here (tests/waiting.rs and the
    // e2e waiting tests count real waiters).
    assert_eq!(sample(text, "lockd_live_waiters"), 0.0);
    assert_eq!(
        sample(text, r#"lockd_db_pool_connections{state="in_use"}"#),
        2.0
    );
    assert_eq!(
        sample(text, r#"lockd_db_pool_connections{state="idle"}"#),
        5.0
    );
    assert_eq!(sample(text, "lockd_live_locks"), 42.0);
    assert!(sample(text, "lockd_live_locks_age_seconds") < 60.0);
}

/// Runs a future of the in-memory repository, which is ready at once (it never awaits).
fn futures_block<F: std::future::Future>(future: F) -> F::Output {
    futures::FutureExt::now_or_never(future).expect("the in-memory repository never waits")
}

#[actix_web::test]
async fn the_live_lock_counter_reads_the_repository() {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new())));
    send(
        Arc::clone(&store) as Arc<dyn LeaseStore>,
        ApiSettings::default(),
        vec![acquire("a", "w"), acquire("b", "w")],
    )
    .await;
    let metrics = Arc::new(Metrics::new());
    let counter = actix_web::rt::spawn(lock_service::run_live_lock_counter(
        store,
        Arc::new(lock_telemetry::MetricsAndAudit::new(Arc::clone(&metrics))),
        std::time::Duration::from_millis(10),
    ));
    let mut text = String::new();
    for _ in 0..100 {
        text = metrics.render(None);
        if text.contains("lockd_live_locks 2") {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    counter.abort();
    assert_exposition(&text);
    assert_eq!(sample(&text, "lockd_live_locks"), 2.0);
    assert_eq!(sample(&text, "lockd_expired_takeovers_total"), 0.0);
    assert!(
        !text.contains("lockd_db_pool_connections"),
        "no pool, no pool series"
    );
}

/// Every family the docs list (docs/api.md), with its type: names and types are an interface.
const FAMILIES: [(&str, &str); 25] = [
    ("lockd_http_requests_total", "counter"),
    ("lockd_http_request_duration_seconds", "histogram"),
    ("lockd_acquire_total", "counter"),
    ("lockd_release_total", "counter"),
    ("lockd_renew_total", "counter"),
    ("lockd_semaphore_operations_total", "counter"),
    ("lockd_fence_checks_total", "counter"),
    ("lockd_election_operations_total", "counter"),
    ("lockd_election_terms_total", "counter"),
    ("lockd_force_releases_total", "counter"),
    ("lockd_sessions", "gauge"),
    ("lockd_session_keepalives_total", "counter"),
    ("lockd_sessions_ended_total", "counter"),
    ("lockd_waiters_rejected_total", "counter"),
    ("lockd_live_waiters", "gauge"),
    ("lockd_observers", "gauge"),
    ("lockd_db_pool_connections", "gauge"),
    ("lockd_live_locks", "gauge"),
    ("lockd_live_locks_age_seconds", "gauge"),
    ("lockd_expired_takeovers_total", "counter"),
    ("lockd_live_locks_count_failures_total", "counter"),
    ("lockd_log_lines_dropped_total", "counter"),
    ("lockd_wait_seconds", "histogram"),
    ("lockd_hold_seconds", "histogram"),
    ("lockd_contended_acquires_total", "counter"),
];

/// A scrape in which every family has samples: requests, outcomes, waiters refused, the pool,
/// a live-lock count and dropped log lines.
async fn full_scrape() -> String {
    let dropped = Arc::new(std::sync::atomic::AtomicU64::new(3));
    let metrics = Arc::new(Metrics::with_log_lines_dropped(dropped));
    metrics.set_live_locks(7);
    metrics.set_expired_takeovers(2);
    metrics.waiter_rejected(true);
    metrics.fence_checked("lock", false);
    metrics.acquire_outcome(AcquireMetric::TimedOut);
    let settings = ApiSettings {
        metrics: Arc::clone(&metrics),
        ..ApiSettings::default()
    };
    let mut repo = MockLeaseStore::new();
    let inner = InMemoryLockRepository::new(Arc::new(ManualClock::new()));
    repo.expect_apply()
        .returning(move |t, op| futures_block(inner.apply(t, op)));
    let mut health = MockStoreHealth::new();
    health
        .expect_pool_state()
        .returning(|| Some(PoolState { in_use: 1, idle: 3 }));
    let answers = send_over(
        Arc::new(repo),
        Arc::new(health),
        settings,
        vec![
            acquire("a", "w"),
            acquire("a", "intruder"),
            TestRequest::delete().uri("/locks/a?owner=w"),
            get("/healthz"),
            get("/no-such-route"),
            get("/metrics"),
        ],
    )
    .await;
    let scrape = answers.last().unwrap();
    assert_eq!(scrape.status, StatusCode::OK);
    scrape.body.clone()
}

#[actix_web::test]
async fn every_documented_family_is_reported_once_with_its_type() {
    let text = full_scrape().await;
    assert_exposition(&text);
    for (name, kind) in FAMILIES {
        assert_eq!(
            text.matches(&format!("# TYPE {name} {kind}\n")).count(),
            1,
            "{name} {kind}:\n{text}"
        );
        assert_eq!(
            text.matches(&format!("# HELP {name} ")).count(),
            1,
            "{name}:\n{text}"
        );
    }
    let types = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    assert_eq!(types, FAMILIES.len(), "an undocumented family:\n{text}");
    assert_eq!(sample(&text, "lockd_log_lines_dropped_total"), 3.0);
    assert_eq!(sample(&text, "lockd_expired_takeovers_total"), 2.0);
    assert_eq!(
        sample(&text, r#"lockd_waiters_rejected_total{limit="tenant"}"#),
        1.0
    );
    // Buckets are cumulative: the three requests to the route are in every bucket from 10 s up,
    // and in the smaller ones as fast as they were (timing is the machine's, not asserted).
    let mut below = 0.0;
    for bound in ["0.0005", "0.0025", "1", "10", "+Inf"] {
        let bucket = format!(
            r#"lockd_http_request_duration_seconds_bucket{{route="/locks/{{resource}}",le="{bound}"}}"#
        );
        let count = sample(&text, &bucket);
        assert!(count >= below && count <= 3.0, "{bucket}: {count}");
        if bound == "10" || bound == "+Inf" {
            assert_eq!(count, 3.0, "{bucket}");
        }
        below = count;
    }
    for line in text.lines().filter(|l| l.starts_with("# HELP")) {
        assert!(line.ends_with('.') && !line.ends_with(".."), "{line}");
    }
}

/// `promtool check metrics` (Prometheus's own parser and linter, from Debian's `prometheus`
/// package, which `.ci/run` installs) accepts the exposition with every family present.
#[actix_web::test]
async fn promtool_check_metrics_accepts_the_exposition() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    match Command::new("promtool").arg("--version").output() {
        Ok(output) if output.status.success() => {}
        other if std::env::var_os("CI").is_some() => panic!(
            "promtool cannot run ({other:?}); in CI (CI is set) this test must run, not skip: \
             install Debian's `prometheus` package, as .ci/run does"
        ),
        other => {
            eprintln!(
                "\n!!!!! SKIPPING the promtool check of /metrics: promtool cannot run \
                 ({other:?}). Install it with `apt-get install prometheus` (CI fails instead \
                 of skipping).\n"
            );
            return;
        }
    }
    let text = full_scrape().await;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn promtool");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let output = child.wait_with_output().expect("promtool's answer");
    assert!(
        output.status.success(),
        "promtool check metrics failed ({}):\n{}{}\nThe exposition:\n{text}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}
