//! Elections through the real binary, on both backends: one leader at a time, terms that only
//! grow across leaders, a sitting leader re-elected in its term, proclaim and renew by the leader
//! only, resign (body or query), FIFO waiting candidates (also across two instances), the term
//! check against a paused leader, bad input refused without a change, tenants and namespaces
//! apart, and every operation counted and audited.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    a_vacant_office_elects_and_terms_grow_across_leaders,
    the_sitting_leader_campaigning_again_keeps_its_term,
    only_the_leader_proclaims_and_a_proclaim_changes_only_the_value,
    only_the_leader_renews_and_an_expired_leader_leads_no_more,
    a_leader_resigns_by_body_or_query,
    waiting_candidates_are_elected_in_arrival_order,
    a_candidate_waiting_on_one_instance_is_elected_when_the_leader_resigns_on_another,
    a_paused_leaders_term_turns_stale_when_its_lease_runs_out,
    bad_election_requests_are_422_or_405_and_change_nothing,
    elections_are_apart_from_locks_semaphores_and_other_tenants,
    election_operations_are_counted_and_audited,
);

fn campaign(server: &TestServer, election: &str, body: Value) -> Reply {
    server.send(
        "POST",
        &format!("/elections/{election}/campaign"),
        Some(&body),
    )
}

/// The leader of a campaign that elected its candidate (asserting it did).
fn elected(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["elected"], true, "{reply:?}");
    reply.body["leader"].clone()
}

/// The leader named in a campaign that did not elect its candidate (asserting it did not).
fn not_elected(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["elected"], false, "{reply:?}");
    let object = reply.body.as_object().expect("an object");
    assert_eq!(object.len(), 2, "elected and leader only: {reply:?}");
    reply.body["leader"].clone()
}

fn run_for(server: &TestServer, election: &str, candidate: &str, ttl: i64) -> Value {
    elected(&campaign(
        server,
        election,
        json!({"candidate": candidate, "ttl_seconds": ttl}),
    ))
}

fn term(leader: &Value) -> i64 {
    leader["term"].as_i64().expect("a term")
}

fn leader(server: &TestServer, election: &str) -> Reply {
    server.send("GET", &format!("/elections/{election}"), None)
}

fn resign(server: &TestServer, election: &str, candidate: &str) -> Reply {
    server.send(
        "DELETE",
        &format!("/elections/{election}/leader?candidate={candidate}"),
        None,
    )
}

fn a_vacant_office_elects_and_terms_grow_across_leaders(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    leader(&server, "scheduler").assert_problem(404, "not-found");
    let a = elected(&campaign(
        &server,
        "scheduler",
        json!({"candidate": "a", "ttl_seconds": 30, "value": {"address": "10.0.0.7:8080"}}),
    ));
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "candidate",
            "elected_at",
            "election",
            "expires_at",
            "term",
            "value"
        ],
        "{a}"
    );
    assert_eq!(
        (a["election"].as_str(), a["candidate"].as_str()),
        (Some("scheduler"), Some("a"))
    );
    assert_eq!(a["value"], json!({"address": "10.0.0.7:8080"}));
    assert_eq!(
        timestamp_ms(&a["expires_at"]) - timestamp_ms(&a["elected_at"]),
        30_000
    );
    assert_eq!(leader(&server, "scheduler").body, a);
    // Another candidate is told who leads, and nothing changes.
    assert_eq!(not_elected(&run_for_reply(&server, "b")), a);
    assert_eq!(leader(&server, "scheduler").body, a);

    let mut last = term(&a);
    for next in ["b", "c", "a"] {
        let sitting = leader(&server, "scheduler").body["candidate"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(resign(&server, "scheduler", &sitting).status, 204);
        leader(&server, "scheduler").assert_problem(404, "not-found");
        let new = run_for(&server, "scheduler", next, 30);
        assert!(term(&new) > last, "terms grow: {last} then {new}");
        assert!(
            new.get("value").is_none(),
            "a new leader starts without a value: {new}"
        );
        last = term(&new);
    }
}

fn run_for_reply(server: &TestServer, candidate: &str) -> Reply {
    campaign(
        server,
        "scheduler",
        json!({"candidate": candidate, "ttl_seconds": 30}),
    )
}

fn the_sitting_leader_campaigning_again_keeps_its_term(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = elected(&campaign(
        &server,
        "x",
        json!({"candidate": "a", "ttl_seconds": 5, "value": 1}),
    ));
    std::thread::sleep(Duration::from_millis(20));
    let again = run_for(&server, "x", "a", 30);
    assert_eq!(term(&again), term(&first), "the term is kept");
    assert_eq!(again["value"], 1, "and the value, when none is given");
    assert!(timestamp_ms(&again["elected_at"]) > timestamp_ms(&first["elected_at"]));
    assert_eq!(
        timestamp_ms(&again["expires_at"]) - timestamp_ms(&again["elected_at"]),
        30_000
    );
    // Even with a wait: the leader never queues behind candidates for its own office.
    let waited = elected(&campaign(
        &server,
        "x",
        json!({"candidate": "a", "ttl_seconds": 30, "wait_seconds": 5, "value": 2}),
    ));
    assert_eq!(
        (term(&waited), waited["value"].clone()),
        (term(&first), json!(2))
    );
    let metrics = server.send("GET", "/metrics", None);
    let text = metrics.body.as_str().unwrap_or_default();
    assert!(
        text.lines().any(|l| l == "lockd_election_terms_total 1"),
        "three campaigns, one term: {text}"
    );
}

fn only_the_leader_proclaims_and_a_proclaim_changes_only_the_value(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let proclaim = |candidate: &str, value: Value| {
        server.send(
            "POST",
            "/elections/x/proclaim",
            Some(&json!({"candidate": candidate, "value": value})),
        )
    };
    proclaim("a", json!(1)).assert_problem(404, "not-found");
    let a = run_for(&server, "x", "a", 30);
    let proclaimed = proclaim("a", json!({"address": "10.0.0.8:8080"}));
    assert_eq!(proclaimed.status, 200, "{proclaimed:?}");
    let mut expected = a.clone();
    expected["value"] = json!({"address": "10.0.0.8:8080"});
    assert_eq!(
        proclaimed.body, expected,
        "term, elected_at and expires_at are kept"
    );
    assert_eq!(leader(&server, "x").body, expected);
    proclaim("b", json!(2)).assert_problem(403, "forbidden");
    let missing = server.send(
        "POST",
        "/elections/x/proclaim",
        Some(&json!({"candidate": "a"})),
    );
    assert_eq!(
        missing.error_codes(),
        [("value".to_owned(), "required".to_owned())]
    );
    assert_eq!(
        leader(&server, "x").body,
        expected,
        "refusals change nothing"
    );
}

fn only_the_leader_renews_and_an_expired_leader_leads_no_more(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let renew = |candidate: &str, ttl: i64| {
        server.send(
            "POST",
            "/elections/x/renew",
            Some(&json!({"candidate": candidate, "ttl_seconds": ttl})),
        )
    };
    renew("a", 30).assert_problem(404, "not-found");
    let a = run_for(&server, "x", "a", 1);
    let renewed = renew("a", 2);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_eq!(term(&renewed.body), term(&a));
    assert_eq!(renewed.body["elected_at"], a["elected_at"]);
    assert!(timestamp_ms(&renewed.body["expires_at"]) > timestamp_ms(&a["expires_at"]));
    renew("b", 30).assert_problem(403, "forbidden");
    // The leader stops renewing: once its lease has run out it leads no more.
    std::thread::sleep(Duration::from_millis(2_150));
    leader(&server, "x").assert_problem(404, "not-found");
    renew("a", 30).assert_problem(404, "not-found");
    let b = run_for(&server, "x", "b", 30);
    assert!(term(&b) > term(&a));
}

fn a_leader_resigns_by_body_or_query(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    run_for(&server, "x", "node a", 30);
    resign(&server, "x", "node+b").assert_problem(403, "forbidden");
    assert_eq!(resign(&server, "x", "node+a").status, 204, "`+` is a space");
    resign(&server, "x", "node+a").assert_problem(404, "not-found");
    run_for(&server, "x", "a", 30);
    let by_body = server.send(
        "DELETE",
        "/elections/x/leader",
        Some(&json!({"candidate": "a"})),
    );
    assert_eq!(by_body.status, 204, "{by_body:?}");
    run_for(&server, "x", "a", 30);
    let disagree = server.send(
        "DELETE",
        "/elections/x/leader?candidate=b",
        Some(&json!({"candidate": "a"})),
    );
    assert_eq!(
        disagree.error_codes(),
        [("candidate".to_owned(), "conflict".to_owned())]
    );
    let nobody = server.send("DELETE", "/elections/x/leader", None);
    assert_eq!(
        nobody.error_codes(),
        [("candidate".to_owned(), "required".to_owned())]
    );
    let owner_is_not_candidate = server.send("DELETE", "/elections/x/leader?owner=a", None);
    assert_eq!(
        owner_is_not_candidate.error_codes(),
        [
            ("candidate".to_owned(), "required".to_owned()),
            ("owner".to_owned(), "unknown_parameter".to_owned())
        ]
    );
    assert_eq!(
        leader(&server, "x").body["candidate"],
        "a",
        "nothing changed"
    );
}

/// Starts a waiting campaign of `candidate` in a thread; its reply and when it came.
fn wait_for_office(
    server: &Arc<TestServer>,
    candidate: &'static str,
    wait: i64,
) -> std::thread::JoinHandle<(Reply, Instant)> {
    let server = Arc::clone(server);
    std::thread::spawn(move || {
        let reply = campaign(
            &server,
            "queue",
            json!({"candidate": candidate, "ttl_seconds": 30, "wait_seconds": wait}),
        );
        (reply, Instant::now())
    })
}

/// Waits until `server` has `count` waiting acquires or campaigns.
fn until_waiting(server: &TestServer, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = format!("lockd_live_waiters {count}");
    loop {
        let metrics = server.send("GET", "/metrics", None);
        if metrics
            .body
            .as_str()
            .unwrap_or_default()
            .lines()
            .any(|l| l == line)
        {
            return;
        }
        assert!(Instant::now() < deadline, "never {count} waiting");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn waiting_candidates_are_elected_in_arrival_order(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    let first = run_for(&server, "queue", "leader", 30);
    let b = wait_for_office(&server, "b", 20);
    until_waiting(&server, 1);
    let c = wait_for_office(&server, "c", 20);
    until_waiting(&server, 2);
    assert_eq!(resign(&server, "queue", "leader").status, 204);
    let (b_reply, _) = b.join().expect("b's campaign");
    let b_leader = elected(&b_reply);
    assert_eq!(b_leader["candidate"], "b", "first come, first served");
    assert!(term(&b_leader) > term(&first));
    assert!(!c.is_finished(), "c still waits while b leads");
    assert_eq!(resign(&server, "queue", "b").status, 204);
    let (c_reply, _) = c.join().expect("c's campaign");
    let c_leader = elected(&c_reply);
    assert_eq!(c_leader["candidate"], "c");
    assert!(term(&c_leader) > term(&b_leader));

    // A wait that ends: not elected, told who leads and when to come back.
    let timed_out = campaign(
        &server,
        "queue",
        json!({"candidate": "d", "ttl_seconds": 30, "wait_seconds": 1}),
    );
    assert_eq!(not_elected(&timed_out)["candidate"], "c");
    let retry: u64 = timed_out
        .header("retry-after")
        .expect("Retry-After after a wait")
        .parse()
        .expect("whole seconds");
    assert!((1..=30).contains(&retry), "{retry}");
}

fn a_candidate_waiting_on_one_instance_is_elected_when_the_leader_resigns_on_another(
    db: TestDatabase,
) {
    let one = Arc::new(TestServer::start(&db, &[]));
    let other = TestServer::start(&db, &[]);
    let first = run_for(&other, "queue", "leader", 30);
    let waiting = wait_for_office(&one, "b", 20);
    until_waiting(&one, 1);
    not_elected(&run_for_reply_on(&other, "queue", "c"));
    let resigned_at = Instant::now();
    assert_eq!(resign(&other, "queue", "leader").status, 204);
    let (reply, at) = waiting.join().expect("b's campaign");
    let b = elected(&reply);
    assert!(term(&b) > term(&first));
    // PostgreSQL tells the other instance at once; SQLite instances look every so often.
    let bound = if db.is_postgres() { 1_000 } else { 3_000 };
    let took = at.duration_since(resigned_at).as_millis();
    assert!(took < bound, "elected {took} ms after the resign");
    assert_eq!(leader(&other, "queue").body, b);
}

fn run_for_reply_on(server: &TestServer, election: &str, candidate: &str) -> Reply {
    campaign(
        server,
        election,
        json!({"candidate": candidate, "ttl_seconds": 30}),
    )
}

fn fence(server: &TestServer, election: &str, term: i64) -> Reply {
    server.send(
        "GET",
        &format!("/elections/{election}/fence?term={term}"),
        None,
    )
}

fn a_paused_leaders_term_turns_stale_when_its_lease_runs_out(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    assert_eq!(
        fence(&server, "x", 1).body,
        json!({"valid": false, "current": null})
    );
    let paused = run_for(&server, "x", "paused", 1);
    let t = term(&paused);
    assert_eq!(
        fence(&server, "x", t).body,
        json!({"valid": true, "leader": paused})
    );
    assert_eq!(
        fence(&server, "x", t + 5).body,
        json!({"valid": false, "current": t})
    );
    // The leader "pauses" past its lease; nobody resigned.
    std::thread::sleep(Duration::from_millis(1_150));
    assert_eq!(
        fence(&server, "x", t).body,
        json!({"valid": false, "current": null})
    );
    let next = run_for(&server, "x", "next", 30);
    assert_eq!(
        fence(&server, "x", t).body,
        json!({"valid": false, "current": term(&next)}),
        "the paused leader's term is refused once another leads"
    );
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/elections/x/fence", vec![("term", "required")]),
        ("/elections/x/fence?term=0", vec![("term", "out_of_range")]),
        ("/elections/x/fence?term=a", vec![("term", "invalid_type")]),
        (
            "/elections/x/fence?token=3",
            vec![("token", "unknown_parameter"), ("term", "required")],
        ),
    ];
    for (path, expected) in cases {
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(f, c)| (f.to_owned(), c.to_owned()))
            .collect();
        assert_eq!(
            server.send("GET", path, None).error_codes(),
            expected,
            "{path}"
        );
    }
}

fn bad_election_requests_are_422_or_405_and_change_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let sitting = run_for(&server, "x", "a", 30);
    type Case = (&'static str, Value, Vec<(&'static str, &'static str)>);
    let cases: Vec<Case> = vec![
        (
            "/elections/x/campaign",
            json!({"ttl_seconds": 30}),
            vec![("candidate", "required")],
        ),
        (
            "/elections/x/campaign",
            json!({"owner": "b", "ttl_seconds": 30}),
            vec![("candidate", "required")],
        ),
        (
            "/elections/x/campaign",
            json!({"candidate": " ", "ttl_seconds": 0, "wait_seconds": -1, "value": ""}),
            vec![
                ("candidate", "empty"),
                ("ttl_seconds", "out_of_range"),
                ("wait_seconds", "out_of_range"),
            ],
        ),
        (
            "/elections/%00/campaign",
            json!({"candidate": 7, "ttl_seconds": "30"}),
            vec![
                ("name", "control_character"),
                ("candidate", "invalid_type"),
                ("ttl_seconds", "invalid_type"),
            ],
        ),
        (
            "/elections/x/renew",
            json!({"candidate": "a"}),
            vec![("ttl_seconds", "required")],
        ),
        (
            "/elections/x/proclaim",
            json!({"candidate": "a", "value": null}),
            vec![("value", "required")],
        ),
    ];
    for (path, body, expected) in cases {
        let reply = server.send("POST", path, Some(&body));
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(f, c)| (f.to_owned(), c.to_owned()))
            .collect();
        assert_eq!(reply.error_codes(), expected, "{path} {body}");
    }
    let not_json = server.send_raw(
        "POST",
        "/elections/x/campaign",
        Some("application/json"),
        b"[1]",
    );
    not_json.assert_problem(400, "bad-request");
    for (method, path, allow) in [
        ("POST", "/elections/x", "GET, DELETE"),
        ("PUT", "/elections/x", "GET, DELETE"),
        ("GET", "/elections/x/campaign", "POST"),
        ("PUT", "/elections/x/proclaim", "POST"),
        ("GET", "/elections/x/renew", "POST"),
        ("GET", "/elections/x/leader", "DELETE"),
        ("POST", "/elections/x/fence?term=1", "GET"),
    ] {
        let reply = server.send(method, path, None);
        reply.assert_problem(405, "method-not-allowed");
        assert_eq!(reply.header("allow"), Some(allow), "{method} {path}");
    }
    assert_eq!(leader(&server, "x").body, sitting, "nothing changed");
}

fn elections_are_apart_from_locks_semaphores_and_other_tenants(db: TestDatabase) {
    const ACME: &str = "acme-election-key-0123456789";
    const GLOBEX: &str = "globex-election-key-9876543210";
    let (server, _keys) =
        crate::tenants::start_with_keys(&db, &[("acme", ACME, false), ("globex", GLOBEX, false)]);
    let as_tenant = |key: &str, method: &str, path: &str, body: Option<Value>| {
        server.send_with_header(
            method,
            path,
            body.as_ref(),
            ("authorization", &format!("Bearer {key}")),
        )
    };
    let body = json!({"candidate": "a", "ttl_seconds": 30});
    let acme = as_tenant(ACME, "POST", "/elections/x/campaign", Some(body.clone()));
    let acme_leader = elected(&acme);
    // globex has an office of its own.
    let globex = as_tenant(
        GLOBEX,
        "POST",
        "/elections/x/campaign",
        Some(json!({"candidate": "g", "ttl_seconds": 30})),
    );
    assert_eq!(elected(&globex)["candidate"], "g");
    as_tenant(GLOBEX, "GET", "/elections/x/fence?term=1", None);
    assert_eq!(
        as_tenant(
            GLOBEX,
            "GET",
            &format!("/elections/x/fence?term={}", term(&acme_leader)),
            None
        )
        .body["valid"],
        false
    );
    as_tenant(GLOBEX, "DELETE", "/elections/x/leader?candidate=a", None)
        .assert_problem(403, "forbidden");
    // A lock and a semaphore of the same name are unrelated, and never list the election.
    as_tenant(ACME, "GET", "/locks/x", None).assert_problem(404, "not-found");
    let lock = as_tenant(
        ACME,
        "POST",
        "/locks/x",
        Some(json!({"owner": "b", "ttl_seconds": 30})),
    );
    assert_eq!(lock.body["acquired"], true, "{lock:?}");
    let listed = as_tenant(ACME, "GET", "/locks", None);
    let owners: Vec<&str> = listed.body["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .filter_map(|l| l["owner"].as_str())
        .collect();
    assert_eq!(owners, ["b"], "{listed:?}");
    as_tenant(ACME, "GET", "/semaphores/x", None).assert_problem(404, "not-found");
    assert_eq!(
        as_tenant(ACME, "GET", "/elections/x", None).body,
        acme_leader
    );
    server
        .send("GET", "/elections/x", None)
        .assert_problem(401, "unauthorized");
}

fn election_operations_are_counted_and_audited(db: TestDatabase) {
    let server = TestServer::start(&db, &["--log", "info", "--log-format", "json"]);
    let a = run_for(&server, "x", "a", 30);
    not_elected(&run_for_reply_on(&server, "x", "b"));
    let proclaimed = server.send(
        "POST",
        "/elections/x/proclaim",
        Some(&json!({"candidate": "a", "value": 1})),
    );
    assert_eq!(proclaimed.status, 200);
    assert_eq!(resign(&server, "x", "b").status, 403);
    assert_eq!(resign(&server, "x", "a").status, 204);
    let text = server
        .send("GET", "/metrics", None)
        .body
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for (labels, count) in [
        (r#"operation="campaign",outcome="elected""#, 1),
        (r#"operation="campaign",outcome="not_elected""#, 1),
        (r#"operation="proclaim",outcome="proclaimed""#, 1),
        (r#"operation="resign",outcome="not_leader""#, 1),
        (r#"operation="resign",outcome="resigned""#, 1),
        (r#"operation="renew",outcome="renewed""#, 0),
    ] {
        let line = format!("lockd_election_operations_total{{{labels}}} {count}");
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    // The election is no lock: the lock counters saw nothing.
    assert!(text
        .lines()
        .any(|l| l == r#"lockd_acquire_total{outcome="granted"} 0"#));
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut events: Vec<Value> = Vec::new();
    let wanted = [
        "elected",
        "not_elected",
        "proclaimed",
        "not_leader",
        "resigned",
    ];
    loop {
        events.extend(
            server
                .drain_stderr()
                .iter()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|e| e["fields"]["primitive"] == "election"),
        );
        let seen: Vec<&str> = events
            .iter()
            .filter_map(|e| e["fields"]["event"].as_str())
            .collect();
        if seen == wanted {
            break;
        }
        assert!(Instant::now() < deadline, "election events {seen:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let elected_event = &events[0]["fields"];
    assert_eq!(
        (
            elected_event["election"].as_str(),
            elected_event["candidate"].as_str(),
            elected_event["tenant"].as_str(),
            elected_event["term"].as_i64(),
        ),
        (Some("x"), Some("a"), Some("default"), Some(term(&a)))
    );
}
