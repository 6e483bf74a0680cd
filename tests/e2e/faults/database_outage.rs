//! PostgreSQL cut off behind a proxy while lockd runs: refused (the port closed, connections
//! reset) or black-holed (connections open, nothing answered). Through the cut every lock request
//! answers 503 problem+json with `Retry-After` within 5 s, readiness turns 503, liveness stays
//! 200; once the database is back, requests succeed within a second without a restart, and
//! nothing granted before the cut, nor anything asked during it, has changed.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::proxy::{Mode, Proxy};
use crate::server::{NoReply, Reply, TestServer};

/// Locks granted before the cut.
const HELD: usize = 4;
/// No request may take longer than this during the cut.
const LONGEST_ANSWER: Duration = Duration::from_secs(5);
/// How soon after the cut `/readyz` must answer 503.
const READINESS_WITHIN: Duration = Duration::from_secs(3);
/// How soon after the database returns requests must succeed again.
const RECOVERY_WITHIN: Duration = Duration::from_secs(1);

#[test]
fn a_refused_database_answers_503_then_recovers_with_nothing_changed() {
    outage_then_recovery(Mode::Refuse);
}

#[test]
fn a_black_holed_database_answers_503_then_recovers_with_nothing_changed() {
    outage_then_recovery(Mode::BlackHole);
}

#[test]
fn readyz_reports_a_refused_database_within_3_s() {
    readiness_follows_the_outage(Mode::Refuse);
}

#[test]
fn readyz_reports_a_black_holed_database_within_3_s() {
    readiness_follows_the_outage(Mode::BlackHole);
}

/// lockd on a fresh PostgreSQL database reached through a proxy, holding [`HELD`] locks.
struct Outage {
    server: TestServer,
    proxy: Proxy,
    /// The locks granted before the cut, as the acquire answered them.
    held: Vec<Value>,
    /// Dropped last: dropping it drops the database.
    _db: TestDatabase,
}

impl Outage {
    /// `None` when PostgreSQL is unreachable and not required (after a loud message).
    fn start() -> Option<Self> {
        let db = TestDatabase::postgres()?;
        let proxy = Proxy::start(database_address(&db.url_string()));
        let server = TestServer::start_on(&through_proxy(&db.url_string(), proxy.port()), &[]);
        let held = (0..HELD)
            .map(|i| {
                server
                    .acquire(&format!("held-{i}"), &format!("owner-{i}"), 120)
                    .granted()
                    .clone()
            })
            .collect();
        Some(Self {
            server,
            proxy,
            held,
            _db: db,
        })
    }

    /// Asserts that lockd never panicked.
    fn assert_no_panic(&self) {
        let stderr = self.server.drain_stderr().join("\n");
        assert!(!stderr.contains("panicked"), "lockd panicked:\n{stderr}");
    }
}

fn outage_then_recovery(mode: Mode) {
    let Some(outage) = Outage::start() else {
        return;
    };
    outage.proxy.cut(mode);
    let answers = send_at_once(&outage.server, &requests_during_the_cut());
    let mut failures = Vec::new();
    for (request, answer, took) in &answers {
        eprintln!("{mode:?}: {request} answered in {took:?}");
        let expected = if request.ends_with("/healthz") {
            200
        } else {
            503
        };
        if let Some(failure) = check_answer(answer, expected, *took) {
            failures.push(format!("{request}: {failure}"));
        }
    }
    let slowest = answers.iter().map(|(_, _, took)| *took).max();
    eprintln!(
        "{mode:?}: {} requests during the cut, the slowest answered in {slowest:?}",
        answers.len()
    );
    assert!(failures.is_empty(), "during the cut:\n{failures:#?}");

    outage.proxy.restore();
    let recovered = poll_until(
        RECOVERY_WITHIN * 10,
        || matches!(outage.server.client().status("held-0"), Ok(r) if r.status == 200),
    );
    eprintln!("{mode:?}: requests succeed again {recovered:?} after the database returned");
    assert!(
        recovered.is_some_and(|t| t <= RECOVERY_WITHIN),
        "requests succeed again within {RECOVERY_WITHIN:?} of the database's return, not \
         {recovered:?}"
    );

    for lock in &outage.held {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(
            &outage.server.status(resource).body,
            lock,
            "{resource}, granted before the cut, is unchanged (neither renewed nor released)"
        );
        assert_eq!(
            outage.server.acquire(resource, "intruder", 30).body,
            json!({"acquired": false, "resource": resource}),
            "{resource} still has one holder"
        );
    }
    for i in 0..HELD {
        outage
            .server
            .status(&format!("new-{i}"))
            .assert_problem(404, "not-found");
    }
    assert_eq!(outage.server.send("GET", "/readyz", None).status, 200);
    outage.assert_no_panic();
}

fn readiness_follows_the_outage(mode: Mode) {
    let Some(outage) = Outage::start() else {
        return;
    };
    assert_eq!(outage.server.send("GET", "/readyz", None).status, 200);
    outage.proxy.cut(mode);
    let cut = Instant::now();
    let mut probes = Vec::new();
    let unready = loop {
        let sent = Instant::now();
        let reply = outage.server.send("GET", "/readyz", None);
        probes.push((reply.status, sent.elapsed()));
        if reply.status == 503 {
            reply.assert_problem(503, "service-unavailable");
            assert!(reply.header("retry-after").is_some(), "{reply:?}");
            break cut.elapsed();
        }
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(
            cut.elapsed() < Duration::from_secs(30),
            "/readyz never answered 503: {probes:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("{mode:?}: /readyz answered 503 {unready:?} after the cut; probes (status, time): {probes:?}");
    assert_eq!(outage.server.send("GET", "/healthz", None).status, 200);
    assert!(
        unready <= READINESS_WITHIN,
        "/readyz answered 503 only {unready:?} after the cut (probes: {probes:?}); lockd \
         said:\n{}",
        outage.server.drain_stderr().join("\n")
    );

    outage.proxy.restore();
    let ready = poll_until(Duration::from_secs(10), || {
        outage.server.send("GET", "/readyz", None).status == 200
    });
    eprintln!("{mode:?}: /readyz answered 200 again {ready:?} after the database returned");
    assert!(ready.is_some_and(|t| t <= RECOVERY_WITHIN), "{ready:?}");
    outage.assert_no_panic();
}

/// One request of the cut.
struct Request {
    method: &'static str,
    path: String,
    body: Option<Value>,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// Every kind of lock request, on the held locks and on new resources, and liveness.
fn requests_during_the_cut() -> Vec<Request> {
    let mut requests = Vec::new();
    for i in 0..HELD {
        let (held, owner) = (format!("/locks/held-{i}"), format!("owner-{i}"));
        requests.extend([
            Request {
                method: "POST",
                path: format!("/locks/new-{i}"),
                body: Some(json!({"owner": "newcomer", "ttl_seconds": 120})),
            },
            Request {
                method: "GET",
                path: held.clone(),
                body: None,
            },
            Request {
                method: "POST",
                path: format!("{held}/renew"),
                body: Some(json!({"owner": owner, "ttl_seconds": 300})),
            },
            Request {
                method: "DELETE",
                path: held,
                body: Some(json!({"owner": owner})),
            },
        ]);
    }
    requests.extend((0..2).map(|_| Request {
        method: "GET",
        path: "/healthz".to_owned(),
        body: None,
    }));
    requests
}

/// Sends every request at once, each on its own thread, and returns each answer with its time.
fn send_at_once(
    server: &TestServer,
    requests: &[Request],
) -> Vec<(String, Result<Reply, NoReply>, Duration)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = requests
            .iter()
            .map(|request| {
                let client = server.client();
                scope.spawn(move || {
                    let sent = Instant::now();
                    let answer = client.send(request.method, &request.path, request.body.as_ref());
                    (request.to_string(), answer, sent.elapsed())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("request thread"))
            .collect()
    })
}

/// What is wrong with an answer of the cut, if anything.
fn check_answer(answer: &Result<Reply, NoReply>, expected: u16, took: Duration) -> Option<String> {
    let reply = match answer {
        Ok(reply) => reply,
        Err(failure) => return Some(format!("no answer: {failure}")),
    };
    if took > LONGEST_ANSWER {
        return Some(format!("answered {} after {took:?}", reply.status));
    }
    if expected == 503 {
        let is_problem = reply.status == 503
            && reply.content_type == "application/problem+json"
            && reply.body["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("/service-unavailable"))
            && reply.body["status"] == 503;
        if !is_problem || reply.header("retry-after").is_none() {
            return Some(format!("not a 503 problem with Retry-After: {reply:?}"));
        }
    } else if reply.status != expected {
        return Some(format!("expected {expected}: {reply:?}"));
    }
    None
}

/// Calls `ready` every 10 ms until it is true; how long that took, or `None` after `limit`.
fn poll_until(limit: Duration, mut ready: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Where the `host:port` part of a database URL lies.
fn host_span(url: &str) -> std::ops::Range<usize> {
    let authority_start = url.find("://").expect("URL scheme") + 3;
    let authority_end = url[authority_start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| authority_start + i);
    let host_start = url[authority_start..authority_end]
        .rfind('@')
        .map_or(authority_start, |at| authority_start + at + 1);
    host_start..authority_end
}

/// The address of the database server a URL names.
fn database_address(url: &str) -> SocketAddr {
    let host = &url[host_span(url)];
    let host = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    };
    host.to_socket_addrs()
        .expect("resolve the database host")
        .next()
        .expect("an address of the database host")
}

/// The URL with its host and port replaced by 127.0.0.1:`port`.
fn through_proxy(url: &str, port: u16) -> String {
    let span = host_span(url);
    format!("{}127.0.0.1:{port}{}", &url[..span.start], &url[span.end..])
}

#[test]
fn database_urls_are_rewritten_to_the_proxy() {
    let url = "postgres://postgres@127.0.0.1:5432/t_1?x=y";
    assert_eq!(
        database_address(url),
        "127.0.0.1:5432".parse().expect("address")
    );
    assert_eq!(
        through_proxy(url, 4000),
        "postgres://postgres@127.0.0.1:4000/t_1?x=y"
    );
    assert_eq!(
        through_proxy("postgres://h/db", 1),
        "postgres://127.0.0.1:1/db"
    );
}
