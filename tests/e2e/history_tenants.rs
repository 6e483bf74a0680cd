//! History and the event stream per tenant, on both backends: one tenant's records (of locks,
//! semaphores and elections of the same names) are never in another's history or stream, live
//! or replayed from `Last-Event-ID: 0`, while each tenant's own do arrive on its stream, which
//! stays open; and bad requests are refused (401 before anything else, then 422, 405).

use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::history::SOON;
use crate::observe::{Event, Observer};
use crate::server::{Reply, TestServer};

on_both_backends!(
    history_and_events_are_per_tenant,
    history_and_events_refuse_bad_requests,
);

const ACME: &str = "acme-history-key-0123456789";
const GLOBEX: &str = "globex-history-key-9876543210";
const QUIET: Duration = Duration::from_millis(800);

fn start(db: &TestDatabase) -> (TestServer, tempfile::TempDir) {
    crate::tenants::start_with_keys(db, &[("acme", ACME, false), ("globex", GLOBEX, false)])
}

fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

fn as_key(server: &TestServer, key: &str, method: &str, path: &str, body: Option<&Value>) -> Reply {
    server.send_with_header(method, path, body, ("authorization", &bearer(key)))
}

/// Sends a change as `key`'s tenant and checks it was made.
fn change(server: &TestServer, key: &str, method: &str, path: &str, body: Value) {
    let body = (!body.is_null()).then_some(body);
    let reply = as_key(server, key, method, path, body.as_ref());
    assert!(reply.status < 300, "{method} {path}: {reply:?}");
}

/// The stream of `key`'s tenant, from `last_event_id` (or from now).
fn stream(server: &TestServer, key: &str, last_event_id: Option<&str>) -> Observer {
    let auth = bearer(key);
    let mut headers = vec![("authorization", auth.as_str())];
    if let Some(id) = last_event_id {
        headers.push(("last-event-id", id));
    }
    Observer::open(server, "/events", &headers)
}

/// `(kind, name, owner, event)` of a record.
fn said(record: &Value) -> (String, String, String, String) {
    let text = |key: &str| record[key].as_str().unwrap_or_default().to_owned();
    (text("kind"), text("name"), text("owner"), text("event"))
}

fn told(event: &Event) -> (String, String, String, String) {
    said(&event.data)
}

fn record(kind: &str, name: &str, owner: &str, event: &str) -> (String, String, String, String) {
    (kind.into(), name.into(), owner.into(), event.into())
}

/// The records of `path` as `key`'s tenant sees them, oldest first.
fn records(server: &TestServer, key: &str, path: &str) -> Vec<(String, String, String, String)> {
    let reply = as_key(server, key, "GET", path, None);
    assert_eq!(reply.status, 200, "{path}: {reply:?}");
    let mut records: Vec<_> = reply.body["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(said)
        .collect();
    records.reverse();
    records
}

fn history_and_events_are_per_tenant(db: TestDatabase) {
    let (server, _keys) = start(&db);
    let acme = stream(&server, ACME, None);
    let globex = stream(&server, GLOBEX, None);
    std::thread::sleep(Duration::from_millis(300));
    let lease = json!({"owner": "g", "ttl_seconds": 30});
    change(&server, GLOBEX, "POST", "/locks/x", lease);
    // Globex's own stream has it (so the change was made and streamed) ...
    assert_eq!(
        told(&globex.next(SOON)),
        record("lock", "x", "g", "granted")
    );
    // ... Acme's does not, and is still open: Acme's own change comes next.
    acme.quiet(QUIET);
    let lease = json!({"owner": "a", "ttl_seconds": 30});
    change(&server, ACME, "POST", "/locks/y", lease);
    assert_eq!(told(&acme.next(SOON)), record("lock", "y", "a", "granted"));
    globex.quiet(QUIET);
    // The same names of every kind in both tenants (Acme's semaphore with a limit of its own).
    let permit =
        |owner: &str, limit: i64| json!({"owner": owner, "ttl_seconds": 30, "limit": limit});
    change(&server, GLOBEX, "POST", "/semaphores/s", permit("g", 2));
    change(&server, ACME, "POST", "/semaphores/s", permit("a", 1));
    let term = |candidate: &str| json!({"candidate": candidate, "ttl_seconds": 30});
    change(&server, GLOBEX, "POST", "/elections/e/campaign", term("g"));
    change(&server, ACME, "POST", "/elections/e/campaign", term("a"));
    change(
        &server,
        GLOBEX,
        "DELETE",
        "/elections/e/leader?candidate=g",
        Value::Null,
    );
    change(&server, GLOBEX, "DELETE", "/locks/x?owner=g", Value::Null);
    let globex_own = [
        record("lock", "x", "g", "granted"),
        record("semaphore", "s", "g", "granted"),
        record("election", "e", "g", "granted"),
        record("election", "e", "g", "released"),
        record("lock", "x", "g", "released"),
    ];
    let acme_own = [
        record("lock", "y", "a", "granted"),
        record("semaphore", "s", "a", "granted"),
        record("election", "e", "a", "granted"),
    ];
    // Live: each stream has its tenant's changes, in order, and nothing of the other's.
    let got: Vec<_> = (0..4).map(|_| told(&globex.next(SOON))).collect();
    assert_eq!(got, globex_own[1..]);
    let got: Vec<_> = (0..2).map(|_| told(&acme.next(SOON))).collect();
    assert_eq!(got, acme_own[1..]);
    acme.quiet(QUIET);
    globex.quiet(QUIET);
    // History, per name of every kind and of the whole tenant.
    for (key, own, other_owner) in [(ACME, &acme_own[..], "g"), (GLOBEX, &globex_own[..], "a")] {
        assert_eq!(records(&server, key, "/history"), own, "{key}");
        for (path, kind, name) in [
            ("/locks/x/history", "lock", "x"),
            ("/locks/y/history", "lock", "y"),
            ("/semaphores/s/history", "semaphore", "s"),
            ("/elections/e/history", "election", "e"),
        ] {
            let expected: Vec<_> = own
                .iter()
                .filter(|r| r.0 == kind && r.1 == name)
                .cloned()
                .collect();
            let got = records(&server, key, path);
            assert_eq!(got, expected, "{key} {path}");
            assert!(got.iter().all(|r| r.2 != other_owner));
        }
    }
    // Replayed from the oldest record: each tenant's own, then nothing, then live again.
    for (key, own, next) in [(ACME, &acme_own[..], "z"), (GLOBEX, &globex_own[..], "w")] {
        let replay = stream(&server, key, Some("0"));
        let got: Vec<_> = own.iter().map(|_| told(&replay.next(SOON))).collect();
        assert_eq!(got, own, "{key}");
        replay.quiet(QUIET);
        let lease = json!({"owner": "o", "ttl_seconds": 30});
        change(&server, key, "POST", &format!("/locks/{next}"), lease);
        assert_eq!(
            told(&replay.next(SOON)),
            record("lock", next, "o", "granted")
        );
    }
}

fn history_and_events_refuse_bad_requests(db: TestDatabase) {
    let (server, _keys) = start(&db);
    server
        .send("GET", "/history", None)
        .assert_problem(401, "unauthorized");
    server
        .send("GET", "/events", None)
        .assert_problem(401, "unauthorized");
    for path in [
        "/history?limit=0",
        "/history?cursor=abc",
        "/history?since=yesterday",
        "/history?kinds=lock",
        "/history?limit=1&limit=2",
        "/locks/%00/history",
        "/locks/x/history?prefix=a",
        "/semaphores/x/history?cursor=0",
        "/elections/x/history?since=2026-13-01T00:00:00Z",
        "/events?kinds=locks",
        "/events?limit=1",
    ] {
        as_key(&server, ACME, "GET", path, None).assert_problem(422, "validation-failed");
    }
    let bad_id = server.send_with_header("GET", "/events", None, ("last-event-id", "-1"));
    // Without a key the answer is 401 before anything else is looked at.
    bad_id.assert_problem(401, "unauthorized");
    let reply = server.get_with_headers(
        "/events",
        &[("authorization", &bearer(ACME)), ("last-event-id", "x")],
    );
    reply.assert_problem(422, "validation-failed");
    let post = as_key(&server, ACME, "POST", "/history", None);
    post.assert_problem(405, "method-not-allowed");
    assert_eq!(post.header("allow"), Some("GET"));
}
