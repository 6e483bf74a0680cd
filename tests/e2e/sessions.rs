//! Sessions through the real binary, on both backends: a session holds every primitive and ends
//! them all at once (closed: free at once; run out: at that instant, kept for its lock-delay and
//! recorded expired); keepalives move every hold and never revive a session; the input rules;
//! a waiter under a session that ends is told so; and two instances on one database see one
//! session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    a_session_holds_every_primitive_and_a_close_ends_them_all,
    a_session_that_runs_out_ends_every_hold_and_is_never_revived,
    keepalives_move_every_hold_across_two_instances,
    session_requests_are_validated_and_change_nothing,
    a_waiter_under_a_session_that_ends_is_told_and_granted_nothing,
    the_rust_client_holds_under_a_session,
    sessions_are_counted_in_the_metrics_and_the_audit_log,
);

fn open(server: &TestServer, body: Value) -> Value {
    let reply = server.send("POST", "/sessions", Some(&body));
    assert_eq!(reply.status, 201, "{reply:?}");
    let session = reply.body["session"].clone();
    let id = session["id"].as_str().expect("an id").to_owned();
    assert_eq!(id.len(), 22, "{session}");
    assert_eq!(
        reply.header("location"),
        Some(format!("/sessions/{id}").as_str())
    );
    session
}

fn id(session: &Value) -> String {
    session["id"].as_str().expect("an id").to_owned()
}

fn granted<'a>(reply: &'a Reply, member: &str) -> &'a Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    &reply.body[member]
}

fn problem(reply: &Reply, status: u16, kind: &str) {
    assert_eq!(reply.status, status, "{reply:?}");
    assert_eq!(reply.body["type"], format!("/problems/{kind}"), "{reply:?}");
}

fn a_session_holds_every_primitive_and_a_close_ends_them_all(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let session = open(
        &server,
        json!({"ttl_seconds": 30, "owner": "worker-7", "lock_delay_seconds": 30}),
    );
    let sid = id(&session);
    assert_eq!(session["owner"], "worker-7");
    assert_eq!(session["lock_delay_seconds"], 30);
    let under = |extra: Value| {
        let mut body = json!({"session": sid});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    let lock = server.send("POST", "/locks/s-lock", Some(&under(json!({}))));
    let lock = granted(&lock, "lock").clone();
    assert_eq!(lock["owner"], "worker-7");
    assert_eq!(lock["session"], sid.as_str());
    assert_eq!(lock["expires_at"], session["expires_at"]);
    let reader = server.send(
        "POST",
        "/locks/s-read",
        Some(&under(json!({"mode": "shared"}))),
    );
    assert_eq!(granted(&reader, "lock")["mode"], "shared");
    let permits = server.send(
        "POST",
        "/semaphores/s-sem",
        Some(&under(json!({"limit": 2, "permits": 2}))),
    );
    granted(&permits, "permit");
    let campaign = server.send(
        "POST",
        "/elections/s-office/campaign",
        Some(&under(json!({"value": "10.0.0.7"}))),
    );
    assert_eq!(campaign.body["elected"], true, "{campaign:?}");
    assert_eq!(campaign.body["leader"]["candidate"], "worker-7");
    let set = server.send(
        "POST",
        "/locks",
        Some(&under(
            json!({"locks": [{"resource": "s-x"}, {"resource": "s-y"}]}),
        )),
    );
    assert_eq!(granted(&set, "locks").as_array().map(Vec::len), Some(2));
    // The same session again is the same holder: the token is kept.
    let again = server.send("POST", "/locks/s-lock", Some(&under(json!({}))));
    assert_eq!(
        granted(&again, "lock")["fencing_token"],
        lock["fencing_token"]
    );
    // Its label is not its identity.
    let plain = server.send(
        "POST",
        "/locks/s-lock",
        Some(&json!({"owner": "worker-7", "ttl_seconds": 30})),
    );
    assert_eq!(plain.body["acquired"], false, "{plain:?}");

    let look = server.send("GET", &format!("/sessions/{sid}"), None);
    assert_eq!(look.status, 200, "{look:?}");
    let kinds: Vec<(String, String)> = look.body["holds"]
        .as_array()
        .expect("holds")
        .iter()
        .map(|h| (h["kind"].to_string(), h["name"].to_string()))
        .collect();
    assert_eq!(kinds.len(), 6, "{look:?}");
    let listed = server.send("GET", "/sessions", None);
    assert_eq!(listed.body["sessions"][0]["holds"], 6, "{listed:?}");

    let closed = server.send("DELETE", &format!("/sessions/{sid}"), None);
    assert_eq!(closed.status, 204, "{closed:?}");
    // Every hold ended with it, and its places are free at once (no lock-delay after a close).
    for path in ["/locks/s-lock", "/locks/s-read", "/locks/s-x", "/locks/s-y"] {
        problem(&server.send("GET", path, None), 404, "not-found");
    }
    assert_eq!(server.send("GET", "/elections/s-office", None).status, 404);
    let next = server.send(
        "POST",
        "/semaphores/s-sem",
        Some(&json!({"owner": "next", "ttl_seconds": 30, "limit": 2, "permits": 2})),
    );
    granted(&next, "permit");
    let history = server.send("GET", "/locks/s-lock/history", None);
    let events: Vec<&str> = history.body["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(events[0], "released", "{history:?}");
    assert_eq!(history.body["records"][0]["session"], sid.as_str());
    problem(
        &server.send("DELETE", &format!("/sessions/{sid}"), None),
        404,
        "session-not-found",
    );
    problem(
        &server.send("GET", &format!("/sessions/{sid}"), None),
        404,
        "session-not-found",
    );
}

fn a_session_that_runs_out_ends_every_hold_and_is_never_revived(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let session = open(&server, json!({"ttl_seconds": 1, "lock_delay_seconds": 3}));
    let sid = id(&session);
    let held = server.send("POST", "/locks/x-lock", Some(&json!({"session": sid})));
    let held = granted(&held, "lock").clone();
    let permit = server.send(
        "POST",
        "/semaphores/x-sem",
        Some(&json!({"session": sid, "limit": 1})),
    );
    granted(&permit, "permit");
    let ended_at = timestamp_ms(&session["expires_at"]);
    std::thread::sleep(Duration::from_millis(1_300));

    let status = server.send("GET", "/locks/x-lock", None);
    problem(&status, 404, "not-found");
    assert_eq!(
        timestamp_ms(&status.body["available_at"]),
        ended_at + 3_000,
        "kept for the session's lock-delay from the session's end: {status:?}"
    );
    problem(
        &server.send("POST", &format!("/sessions/{sid}/keepalive"), None),
        404,
        "session-not-found",
    );
    problem(
        &server.send("POST", "/locks/x-other", Some(&json!({"session": sid}))),
        404,
        "session-not-found",
    );
    let semaphore = server.send("GET", "/semaphores/x-sem", None);
    assert_eq!(semaphore.status, 404, "{semaphore:?}");
    let listed = server.send("GET", "/sessions", None);
    assert_eq!(listed.body["sessions"], json!([]), "{listed:?}");

    // Once the lock-delay is over, another owner takes the lock with a larger token, and the
    // session's hold is recorded as expired.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    let over = ended_at + 3_000 + 200 - now_ms;
    std::thread::sleep(Duration::from_millis(over.max(0) as u64));
    let next = server.send(
        "POST",
        "/locks/x-lock",
        Some(&json!({"owner": "next", "ttl_seconds": 30})),
    );
    let next = granted(&next, "lock");
    assert!(next["fencing_token"].as_i64() > held["fencing_token"].as_i64());
    let history = server.send("GET", "/locks/x-lock/history", None);
    let events: Vec<(&str, &str)> = history.body["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| (r["event"].as_str().unwrap(), r["owner"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("granted", "next"),
            ("expired", sid.as_str()),
            ("granted", sid.as_str())
        ],
        "{history:?}"
    );
}

fn keepalives_move_every_hold_across_two_instances(db: TestDatabase) {
    let first = TestServer::start(&db, &[]);
    let second = TestServer::start(&db, &[]);
    let session = open(&first, json!({"ttl_seconds": 2, "owner": "mover"}));
    let sid = id(&session);
    granted(
        &second.send("POST", "/locks/m-1", Some(&json!({"session": sid}))),
        "lock",
    );
    granted(
        &first.send(
            "POST",
            "/semaphores/m-2",
            Some(&json!({"session": sid, "limit": 3})),
        ),
        "permit",
    );
    // Kept alive on either instance for 3 s: its holds outlive the first 2 s.
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < Duration::from_secs(3) {
        let kept = second.send("POST", &format!("/sessions/{sid}/keepalive"), None);
        assert_eq!(kept.status, 200, "{kept:?}");
        last = kept.body["session"].clone();
        std::thread::sleep(Duration::from_millis(500));
    }
    let status = first.send("GET", "/locks/m-1", None);
    assert_eq!(status.status, 200, "{status:?}");
    assert_eq!(status.body["expires_at"], last["expires_at"], "{status:?}");
    let look = first.send("GET", &format!("/sessions/{sid}"), None);
    assert_eq!(look.body["holds"].as_array().map(Vec::len), Some(2));
    // A new TTL, on the other instance.
    let longer = first.send(
        "POST",
        &format!("/sessions/{sid}/keepalive"),
        Some(&json!({"ttl_seconds": 30})),
    );
    assert_eq!(longer.body["session"]["ttl_seconds"], 30, "{longer:?}");
    // Closed on one instance: the other sees every hold gone.
    assert_eq!(
        first
            .send("DELETE", &format!("/sessions/{sid}"), None)
            .status,
        204
    );
    problem(&second.send("GET", "/locks/m-1", None), 404, "not-found");
    assert_eq!(second.send("GET", "/semaphores/m-2", None).status, 404);
    problem(
        &second.send("POST", &format!("/sessions/{sid}/keepalive"), None),
        404,
        "session-not-found",
    );
}

fn session_requests_are_validated_and_change_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let bad = server.send("POST", "/sessions", Some(&json!({"owner": "x"})));
    problem(&bad, 422, "validation-failed");
    let bad = server.send(
        "POST",
        "/sessions",
        Some(&json!({"ttl_seconds": 0, "lock_delay_seconds": 61, "owner": ""})),
    );
    let fields: Vec<&str> = bad.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, vec!["ttl_seconds", "owner", "lock_delay_seconds"]);
    let session = open(&server, json!({"ttl_seconds": 30}));
    let sid = id(&session);
    assert_eq!(
        session["owner"],
        sid.as_str(),
        "the label defaults to the id"
    );

    // The session is the holder, its end and its lock-delay: naming them too is a conflict.
    let conflict = server.send(
        "POST",
        "/locks/v",
        Some(&json!({"session": sid, "owner": "x", "ttl_seconds": 5, "lock_delay_seconds": 1})),
    );
    problem(&conflict, 422, "validation-failed");
    let codes: Vec<(&str, &str)> = conflict.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        codes,
        vec![
            ("owner", "conflict"),
            ("ttl_seconds", "conflict"),
            ("lock_delay_seconds", "conflict")
        ]
    );
    let campaign = server.send(
        "POST",
        "/elections/v/campaign",
        Some(&json!({"session": sid, "candidate": "x"})),
    );
    problem(&campaign, 422, "validation-failed");
    for body in [json!({"session": 7}), json!({"session": "short"})] {
        problem(
            &server.send("POST", "/locks/v", Some(&body)),
            422,
            "validation-failed",
        );
    }
    // An unknown session grants nothing.
    let stranger = "AAAAAAAAAAAAAAAAAAAAAA";
    problem(
        &server.send("POST", "/locks/v", Some(&json!({"session": stranger}))),
        404,
        "session-not-found",
    );
    problem(&server.send("GET", "/locks/v", None), 404, "not-found");
    for path in [
        format!("/sessions/{stranger}"),
        "/sessions/not-an-id".to_owned(),
    ] {
        problem(&server.send("GET", &path, None), 404, "session-not-found");
    }
    // A renew of a session's hold: keep the session alive instead.
    granted(
        &server.send("POST", "/locks/v", Some(&json!({"session": sid}))),
        "lock",
    );
    problem(
        &server.send("POST", "/locks/v/renew", Some(&json!({"session": sid}))),
        409,
        "session-held",
    );
    // Releasing one hold: by its session, not by its label.
    assert_eq!(
        server
            .send("DELETE", &format!("/locks/v?owner={sid}"), None)
            .status,
        403
    );
    problem(
        &server.send("DELETE", &format!("/locks/v?owner=x&session={sid}"), None),
        422,
        "validation-failed",
    );
    assert_eq!(
        server
            .send("DELETE", &format!("/locks/v?session={sid}"), None)
            .status,
        204
    );
    assert_eq!(
        server
            .send("DELETE", &format!("/locks/v?session={sid}"), None)
            .status,
        404
    );
    let bad_keepalive = server.send(
        "POST",
        &format!("/sessions/{sid}/keepalive"),
        Some(&json!({"ttl_seconds": -1})),
    );
    problem(&bad_keepalive, 422, "validation-failed");
    let look = server.send("GET", &format!("/sessions/{sid}"), None);
    assert_eq!(look.body["session"]["ttl_seconds"], 30, "nothing changed");
    problem(
        &server.send("DELETE", &format!("/sessions/{sid}?nope=1"), None),
        422,
        "validation-failed",
    );
}

fn a_waiter_under_a_session_that_ends_is_told_and_granted_nothing(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    granted(
        &server.send(
            "POST",
            "/locks/w",
            Some(&json!({"owner": "holder", "ttl_seconds": 60})),
        ),
        "lock",
    );
    let session = open(&server, json!({"ttl_seconds": 30}));
    let sid = id(&session);
    let waiter = {
        let (server, sid) = (Arc::clone(&server), sid.clone());
        std::thread::spawn(move || {
            let body = json!({"session": sid, "wait_seconds": 20});
            (server.send("POST", "/locks/w", Some(&body)), Instant::now())
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while live_waiters(&server) != Some(1) {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        server
            .send("DELETE", &format!("/sessions/{sid}"), None)
            .status,
        204
    );
    // The lock is released: the waiter's next attempt finds its session gone.
    let released = server.send("DELETE", "/locks/w?owner=holder", None);
    assert_eq!(released.status, 204, "{released:?}");
    let (reply, _) = waiter.join().expect("the waiter");
    problem(&reply, 404, "session-not-found");
    problem(&server.send("GET", "/locks/w", None), 404, "not-found");
}

fn live_waiters(server: &TestServer) -> Option<u64> {
    let reply = server.send("GET", "/metrics", None);
    let text = reply.body.as_str().expect("the exposition text").to_owned();
    text.lines()
        .find_map(|line| line.strip_prefix("lockd_live_waiters "))
        .and_then(|value| value.trim().parse().ok())
}

fn the_rust_client_holds_under_a_session(db: TestDatabase) {
    use lock_client::{AcquireOptions, Acquired, ClientConfig, LockClient, Released};
    let server = TestServer::start(&db, &[]);
    let client = LockClient::new(&ClientConfig::new(server.base.clone()));
    let session = client
        .open_session(30, Some("batch-7"), None)
        .expect("opened");
    assert_eq!(session.owner, "batch-7");
    let Acquired::Granted(lease) = client
        .acquire_in_session("c-1", &session.id, &AcquireOptions::default())
        .expect("answered")
    else {
        panic!("granted");
    };
    assert_eq!(lease.owner, "batch-7");
    assert_eq!(lease.session.as_deref(), Some(session.id.as_str()));
    assert_eq!(lease.expires_at, session.expires_at);
    client
        .acquire_in_session("c-2", &session.id, &AcquireOptions::shared())
        .expect("answered");
    let kept = client
        .keep_alive(&session.id, Some(60), Duration::from_secs(5))
        .expect("answered")
        .expect("live");
    assert_eq!(kept.ttl_seconds, 60);
    let (_, holds) = client
        .session(&session.id)
        .expect("answered")
        .expect("live");
    assert_eq!(holds.len(), 2);
    assert_eq!(
        client
            .release_in_session("c-2", &session.id)
            .expect("answered"),
        Released::Released
    );
    assert!(client.end_session(&session.id).expect("answered"));
    assert!(!client.end_session(&session.id).expect("answered"));
    assert_eq!(client.status("c-1").expect("answered"), None);
    assert_eq!(
        client
            .keep_alive(&session.id, None, Duration::from_secs(5))
            .expect("answered"),
        None,
        "never revived"
    );
    match client.acquire_in_session("c-3", &session.id, &AcquireOptions::default()) {
        Err(lock_client::ClientError::Problem(problem)) => {
            assert_eq!(problem.status, 404);
            assert!(problem.kind.ends_with("session-not-found"), "{problem:?}");
        }
        other => panic!("session-not-found, got {other:?}"),
    }
}

/// Waits until a scrape of `server` has every one of `series` (whole lines), within 30 s
/// (`lockd_sessions` is counted every 5 s, later on a loaded machine).
fn until_scraped(server: &TestServer, series: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let scrape = server.send("GET", "/metrics", None);
        let text = scrape.body.as_str().unwrap_or_default().to_owned();
        if series.iter().all(|s| text.lines().any(|line| line == *s)) {
            return;
        }
        assert!(Instant::now() < deadline, "never {series:?} in:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sessions_are_counted_in_the_metrics_and_the_audit_log(db: TestDatabase) {
    let server = TestServer::start(&db, &["--log", "lockd::audit=info"]);
    let session = open(
        &server,
        json!({"ttl_seconds": 30, "owner": "worker-7", "lock_delay_seconds": 0}),
    );
    let sid = id(&session);
    let reply = server.send("POST", "/locks/audited", Some(&json!({"session": sid})));
    granted(&reply, "lock");
    for _ in 0..2 {
        let kept = server.send("POST", &format!("/sessions/{sid}/keepalive"), None);
        assert_eq!(kept.status, 200, "{kept:?}");
    }
    until_scraped(
        &server,
        &[
            "lockd_sessions 1",
            r#"lockd_session_keepalives_total{outcome="kept"} 2"#,
        ],
    );
    assert_eq!(
        server
            .send("DELETE", &format!("/sessions/{sid}"), None)
            .status,
        204
    );
    let gone = server.send("POST", &format!("/sessions/{sid}/keepalive"), None);
    problem(&gone, 404, "session-not-found");
    until_scraped(
        &server,
        &[
            "lockd_sessions 0",
            r#"lockd_session_keepalives_total{outcome="not_found"} 1"#,
            r#"lockd_sessions_ended_total{reason="closed"} 1"#,
        ],
    );

    // The audit log: the session opened and ended, and its hold under its label and id (never
    // the mark a store keeps it by).
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lines = Vec::new();
    loop {
        lines.extend(server.drain_stderr());
        let ended = lines
            .iter()
            .any(|line| line.contains("session_ended") && line.contains(&sid));
        if ended {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no session_ended line: {lines:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let audit: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("lockd::audit"))
        .collect();
    let find = |event: &str| {
        audit
            .iter()
            .find(|line| {
                line.contains(&format!("event=\"{event}\""))
                    || line.contains(&format!("event={event}"))
            })
            .unwrap_or_else(|| panic!("no {event} line: {audit:#?}"))
            .to_string()
    };
    let opened = find("session_opened");
    assert!(
        opened.contains(&sid) && opened.contains("worker-7"),
        "{opened}"
    );
    let grant = find("granted");
    assert!(
        grant.contains(&format!("worker-7 (session {sid})")),
        "{grant}"
    );
    assert!(
        !audit
            .iter()
            .any(|line| line.contains('\u{2}') || line.contains("\\u{2}")),
        "{audit:#?}"
    );
    let ended = find("session_ended");
    assert!(ended.contains("closed"), "{ended}");
}
