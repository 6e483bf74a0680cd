//! `GET /sessions/{id}/observe` through the real binary, on both backends: the session and its
//! holds first, then `granted` and `released` for each hold (a lock, permits, a leadership), a
//! keepalive and a re-grant no event, and `ended` with each reason (closed, run out, an admin's
//! force), after which the stream closes; ids that grow, also across a reconnect; 404 for an
//! unknown, malformed or ended session; and a session changed and ended through another instance
//! on the same database. The session's reports pass through the observing events to the metrics.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::observe::{Event, Observer};
use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    a_session_stream_shows_its_holds_then_its_close,
    a_session_that_runs_out_ends_its_stream_expired,
    an_admins_force_ends_the_stream_force_released,
    unknown_malformed_and_ended_sessions_are_404,
    another_instances_grants_releases_and_close_arrive,
);

const SOON: Duration = Duration::from_secs(3);

fn open_session(server: &TestServer, body: Value) -> String {
    let reply = server.send("POST", "/sessions", Some(&body));
    assert_eq!(reply.status, 201, "{reply:?}");
    reply.body["session"]["id"]
        .as_str()
        .expect("an id")
        .to_owned()
}

fn granted(reply: &Reply, member: &str) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    reply.body[member].clone()
}

fn observe_path(sid: &str) -> String {
    format!("/sessions/{sid}/observe")
}

/// A hold as the session's stream (and `GET /sessions/{id}`) shows it.
fn hold(kind: &str, name: &str, token: &Value, extra: Value) -> Value {
    let mut hold = json!({"kind": kind, "name": name, "fencing_token": token});
    hold.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    hold
}

fn is(event: &Event, name: &str, data: &Value) {
    assert_eq!(
        (event.event.as_str(), &event.data),
        (name, data),
        "{event:?}"
    );
}

/// The whole body of a stream, once the server closes it: read by a thread from now on.
fn whole_stream(server: &TestServer, path: &str) -> mpsc::Receiver<String> {
    let response = ureq::get(&server.url(path))
        .call()
        .expect("the stream opens");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut body = String::new();
        if response.into_reader().read_to_string(&mut body).is_ok() {
            let _ = tx.send(body);
        }
    });
    rx
}

fn ids_grow(events: &[&Event]) {
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e.id.expect("every event has an id"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids {ids:?}");
}

fn a_session_stream_shows_its_holds_then_its_close(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let sid = open_session(&server, json!({"ttl_seconds": 30, "owner": "worker-7"}));
    let lock = granted(
        &server.send("POST", "/locks/so-lock", Some(&json!({"session": sid}))),
        "lock",
    );
    let observer = Observer::open(&server, &observe_path(&sid), &[]);
    assert_eq!(observer.content_type, "text/event-stream");
    let closing = whole_stream(&server, &observe_path(&sid));
    let state = observer.next(SOON);
    let look = server.send("GET", &format!("/sessions/{sid}"), None);
    assert_eq!(look.status, 200, "{look:?}");
    is(&state, "state", &look.body);
    let lock_hold = hold(
        "lock",
        "so-lock",
        &lock["fencing_token"],
        json!({"mode": "exclusive"}),
    );
    assert_eq!(look.body["holds"], json!([lock_hold]));

    // Each hold as it is granted, at once.
    let permit = granted(
        &server.send(
            "POST",
            "/semaphores/so-sem",
            Some(&json!({"session": sid, "limit": 4, "permits": 2})),
        ),
        "permit",
    );
    let answered = Instant::now();
    let permitted = observer.next(SOON);
    assert!(permitted.at.saturating_duration_since(answered) < Duration::from_millis(100));
    let permit_hold = hold(
        "semaphore",
        "so-sem",
        &permit["fencing_token"],
        json!({"permits": 2}),
    );
    is(&permitted, "granted", &permit_hold);
    let campaign = server.send(
        "POST",
        "/elections/so-office/campaign",
        Some(&json!({"session": sid})),
    );
    assert_eq!(campaign.body["elected"], true, "{campaign:?}");
    let term = &campaign.body["leader"]["term"];
    let leadership = hold("election", "so-office", term, json!({"term": term}));
    let elected = observer.next(SOON);
    is(&elected, "granted", &leadership);

    // A re-grant and a keepalive are no event.
    granted(
        &server.send("POST", "/locks/so-lock", Some(&json!({"session": sid}))),
        "lock",
    );
    let kept = server.send("POST", &format!("/sessions/{sid}/keepalive"), None);
    assert_eq!(kept.status, 200, "{kept:?}");
    observer.quiet(Duration::from_millis(600));

    // Each hold released on its own, at once.
    let released = server.send("DELETE", &format!("/locks/so-lock?session={sid}"), None);
    assert_eq!(released.status, 204, "{released:?}");
    let unlocked = observer.next(SOON);
    is(&unlocked, "released", &lock_hold);
    let resigned = server.send(
        "DELETE",
        &format!("/elections/so-office/leader?session={sid}"),
        None,
    );
    assert_eq!(resigned.status, 204, "{resigned:?}");
    let resign = observer.next(SOON);
    is(&resign, "released", &leadership);

    // Closed: the end names the hold that ended with it, and the stream closes.
    let closed = server.send("DELETE", &format!("/sessions/{sid}"), None);
    assert_eq!(closed.status, 204, "{closed:?}");
    let ended = observer.next(SOON);
    is(
        &ended,
        "ended",
        &json!({"session": sid, "reason": "closed", "holds": [permit_hold]}),
    );
    ids_grow(&[&state, &permitted, &elected, &unlocked, &resign, &ended]);
    let body = closing
        .recv_timeout(SOON)
        .expect("the stream closes after `ended`");
    assert!(body.starts_with("id: "), "{body}");
    let (_, last) = body
        .trim_end()
        .rsplit_once("\n\n")
        .expect("more than one event");
    let data = last
        .strip_prefix(&format!("id: {}\nevent: ended\ndata: ", ended.id.unwrap()))
        .unwrap_or_else(|| panic!("the last event is `ended`: {body}"));
    assert_eq!(serde_json::from_str::<Value>(data).unwrap(), ended.data);
    // The session's keepalive and close reach the metrics through the observing events.
    let metrics = ureq::get(&server.url("/metrics"))
        .call()
        .expect("metrics")
        .into_string()
        .expect("text");
    for line in [
        "lockd_session_keepalives_total{outcome=\"kept\"} 1",
        "lockd_sessions_ended_total{reason=\"closed\"} 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in:\n{metrics}");
    }
}

fn a_session_that_runs_out_ends_its_stream_expired(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let sid = open_session(&server, json!({"ttl_seconds": 1}));
    let lock = granted(
        &server.send("POST", "/locks/so-out", Some(&json!({"session": sid}))),
        "lock",
    );
    let observer = Observer::open(&server, &observe_path(&sid), &[]);
    let state = observer.next(SOON);
    assert_eq!(state.event, "state");
    let expires_at = timestamp_ms(&state.data["session"]["expires_at"]);
    let ended = observer.next(SOON);
    is(
        &ended,
        "ended",
        &json!({"session": sid, "reason": "expired", "holds": [
            hold("lock", "so-out", &lock["fencing_token"], json!({"mode": "exclusive"}))
        ]}),
    );
    // Within 250 ms of the session's end.
    let now_ms = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let late_ms = now_ms - expires_at - i64::try_from(ended.at.elapsed().as_millis()).unwrap();
    assert!(
        (0..=250).contains(&late_ms),
        "ended {late_ms} ms after expires_at"
    );
    ids_grow(&[&state, &ended]);
}

fn an_admins_force_ends_the_stream_force_released(db: TestDatabase) {
    const USER: &str = "acme-session-user-key-0123";
    const ADMIN: &str = "acme-session-admin-key-0123";
    let (server, _keys) =
        crate::tenants::start_with_keys(&db, &[("acme", USER, false), ("acme", ADMIN, true)]);
    let user = format!("Bearer {USER}");
    let admin = format!("Bearer {ADMIN}");
    let as_user = |method: &str, path: &str, body: Option<&Value>| {
        server.send_with_header(method, path, body, ("authorization", &user))
    };
    let opened = as_user("POST", "/sessions", Some(&json!({"ttl_seconds": 30})));
    assert_eq!(opened.status, 201, "{opened:?}");
    let sid = opened.body["session"]["id"].as_str().unwrap().to_owned();
    let lock = granted(
        &as_user("POST", "/locks/so-forced", Some(&json!({"session": sid}))),
        "lock",
    );
    // Without a key, no stream.
    server
        .send("GET", &observe_path(&sid), None)
        .assert_problem(401, "unauthorized");
    let observer = Observer::open(
        &server,
        &observe_path(&sid),
        &[("authorization", user.as_str())],
    );
    assert_eq!(observer.next(SOON).event, "state");
    let forced = server.send_with_header(
        "DELETE",
        &format!("/sessions/{sid}?force=true&reason=worker-7+is+wedged"),
        None,
        ("authorization", &admin),
    );
    assert_eq!(forced.status, 204, "{forced:?}");
    let ended = observer.next(SOON);
    is(
        &ended,
        "ended",
        &json!({"session": sid, "reason": "force-released", "holds": [
            hold("lock", "so-forced", &lock["fencing_token"], json!({"mode": "exclusive"}))
        ]}),
    );
}

fn unknown_malformed_and_ended_sessions_are_404(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for path in [
        "/sessions/AAAAAAAAAAAAAAAAAAAAAA/observe",
        "/sessions/short/observe",
        "/sessions/AAAAAAAAAAAAAAAAAAAAA%3D/observe",
    ] {
        server
            .send("GET", path, None)
            .assert_problem(404, "session-not-found");
    }
    let sid = open_session(&server, json!({"ttl_seconds": 30}));
    let first = Observer::open(&server, &observe_path(&sid), &[]);
    let seen = first.next(SOON);
    drop(first);
    // A reconnect gets the state again, with an id above the one it last saw.
    let last = seen.id.unwrap().to_string();
    let again = Observer::open(
        &server,
        &observe_path(&sid),
        &[("last-event-id", last.as_str())],
    );
    let state = again.next(SOON);
    assert_eq!(state.event, "state");
    assert!(state.id.unwrap() > seen.id.unwrap());
    let post = server.send("POST", &observe_path(&sid), None);
    post.assert_problem(405, "method-not-allowed");
    assert_eq!(post.header("allow"), Some("GET"));
    assert_eq!(
        server
            .send("DELETE", &format!("/sessions/{sid}"), None)
            .status,
        204
    );
    assert_eq!(again.next(SOON).event, "ended");
    server
        .send("GET", &observe_path(&sid), None)
        .assert_problem(404, "session-not-found");
}

fn another_instances_grants_releases_and_close_arrive(db: TestDatabase) {
    let here = TestServer::start(&db, &[]);
    let there = TestServer::start(&db, &[]);
    let within = |event: &Event, answered: Instant| {
        let late = event.at.saturating_duration_since(answered);
        assert!(late <= Duration::from_secs(1), "{event:?} {late:?} late");
    };
    let sid = open_session(&there, json!({"ttl_seconds": 30, "owner": "far"}));
    let observer = Observer::open(&here, &observe_path(&sid), &[]);
    let state = observer.next(SOON);
    assert_eq!(state.data["holds"], json!([]), "{state:?}");

    let lock = granted(
        &there.send("POST", "/locks/so-far", Some(&json!({"session": sid}))),
        "lock",
    );
    let answered = Instant::now();
    let lock_hold = hold(
        "lock",
        "so-far",
        &lock["fencing_token"],
        json!({"mode": "exclusive"}),
    );
    let event = observer.next(SOON);
    within(&event, answered);
    is(&event, "granted", &lock_hold);
    let reader = granted(
        &there.send(
            "POST",
            "/locks/so-read",
            Some(&json!({"session": sid, "mode": "shared"})),
        ),
        "lock",
    );
    let read_hold = hold(
        "lock",
        "so-read",
        &reader["fencing_token"],
        json!({"mode": "shared"}),
    );
    is(&observer.next(SOON), "granted", &read_hold);

    let released = there.send("DELETE", &format!("/locks/so-far?session={sid}"), None);
    assert_eq!(released.status, 204, "{released:?}");
    let answered = Instant::now();
    let event = observer.next(SOON);
    within(&event, answered);
    is(&event, "released", &lock_hold);

    // Closed there: its reader's history says it was closed, not run out nor forced.
    assert_eq!(
        there
            .send("DELETE", &format!("/sessions/{sid}"), None)
            .status,
        204
    );
    let answered = Instant::now();
    let ended = observer.next(SOON);
    within(&ended, answered);
    is(
        &ended,
        "ended",
        &json!({"session": sid, "reason": "closed", "holds": [read_hold]}),
    );
    here.send("GET", &observe_path(&sid), None)
        .assert_problem(404, "session-not-found");
}
