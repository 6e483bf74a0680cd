//! Shared (read/write) locks through the real binary, on both backends: the 409s and 422s of
//! `mode`, the shapes of `GET`, renew and release by a reader, the listing, and v1 clients that
//! send no mode. Readers and writers that wait, on one instance or two: [`waiting`].

mod waiting;

use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    a_change_of_mode_is_a_conflict_both_ways,
    a_mode_that_is_not_one_is_a_422,
    readers_renew_and_release_their_own_leases,
    the_listing_shows_each_reader,
    clients_that_send_no_mode_keep_the_v1_contract,
);

/// The members of every lock object: v1's, and `mode`.
const LOCK_KEYS: [&str; 6] = [
    "acquired_at",
    "expires_at",
    "fencing_token",
    "mode",
    "owner",
    "resource",
];

fn acquire(server: &TestServer, resource: &str, body: Value) -> Reply {
    server.send("POST", &format!("/locks/{resource}"), Some(&body))
}

/// A shared acquire's body.
fn read(owner: &str, ttl: i64) -> Value {
    json!({"owner": owner, "ttl_seconds": ttl, "mode": "shared"})
}

/// An exclusive acquire's body as a v1 client sends it: no mode.
fn write(owner: &str, ttl: i64) -> Value {
    json!({"owner": owner, "ttl_seconds": ttl})
}

fn waiting(mut body: Value, seconds: i64) -> Value {
    body["wait_seconds"] = json!(seconds);
    body
}

fn token(lock: &Value) -> i64 {
    lock["fencing_token"].as_i64().expect("integer token")
}

fn keys(object: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = object
        .as_object()
        .unwrap_or_else(|| panic!("an object: {object}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The lock of a granted acquire, in `mode`, with exactly the members of a lock object.
fn granted(reply: &Reply, mode: &str) -> Value {
    let lock = reply.granted().clone();
    assert_eq!(lock["mode"], mode, "{reply:?}");
    assert_eq!(keys(&lock), LOCK_KEYS, "{lock}");
    lock
}

/// Not acquired, answered at once: v1's body, no `Retry-After`.
fn refused(reply: &Reply, resource: &str) {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.body,
        json!({"acquired": false, "resource": resource}),
        "{reply:?}"
    );
    assert!(reply.header("retry-after").is_none(), "{reply:?}");
}

fn release(server: &TestServer, resource: &str, owner: &str) -> u16 {
    server
        .send("DELETE", &format!("/locks/{resource}?owner={owner}"), None)
        .status
}

fn holders(reply: &Reply) -> Vec<(String, i64)> {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["mode"], "shared", "{reply:?}");
    reply.body["holders"]
        .as_array()
        .expect("holders")
        .iter()
        .map(|l| (l["owner"].as_str().expect("owner").to_owned(), token(l)))
        .collect()
}

fn a_change_of_mode_is_a_conflict_both_ways(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let reader = granted(&acquire(&server, "r", read("a", 30)), "shared");
    let writer = granted(&acquire(&server, "w", write("a", 30)), "exclusive");
    for wait in [0, 1] {
        let to_exclusive = json!({"owner": "a", "ttl_seconds": 30, "mode": "exclusive"});
        acquire(&server, "r", waiting(to_exclusive, wait)).assert_problem(409, "mode-mismatch");
        acquire(&server, "r", waiting(write("a", 30), wait)).assert_problem(409, "mode-mismatch");
        acquire(&server, "w", waiting(read("a", 30), wait)).assert_problem(409, "mode-mismatch");
    }
    // Nothing changed, and each was counted.
    assert_eq!(server.status("r").body["holders"], json!([reader]));
    assert_eq!(server.status("w").body, writer);
    let metrics = server.send("GET", "/metrics", None);
    let series = r#"lockd_acquire_total{outcome="mode_mismatch"} 6"#;
    assert!(
        metrics
            .body
            .as_str()
            .is_some_and(|text| text.lines().any(|l| l == series)),
        "{series} expected: {metrics:?}"
    );
    // Once released (or run out), the owner may hold it in the other mode.
    granted(&acquire(&server, "expiring", read("a", 1)), "shared");
    std::thread::sleep(Duration::from_millis(1_100));
    granted(&acquire(&server, "expiring", write("a", 30)), "exclusive");
    assert_eq!(release(&server, "w", "a"), 204);
    granted(&acquire(&server, "w", read("a", 30)), "shared");
}

fn a_mode_that_is_not_one_is_a_422(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for (mode, code) in [
        (json!("read"), "invalid_value"),
        (json!("SHARED"), "invalid_value"),
        (json!(""), "invalid_value"),
        (json!(null), "invalid_type"),
        (json!(1), "invalid_type"),
        (json!(true), "invalid_type"),
        (json!(["shared"]), "invalid_type"),
        (json!({"mode": "shared"}), "invalid_type"),
    ] {
        let reply = acquire(
            &server,
            "m",
            json!({"owner": "o", "ttl_seconds": 30, "mode": mode}),
        );
        assert_eq!(
            reply.error_codes(),
            [("mode".to_owned(), code.to_owned())],
            "{mode}"
        );
    }
    // Listed with every other invalid input, last, in the contract's order.
    let all = json!({"owner": "", "ttl_seconds": 0, "wait_seconds": -1, "mode": "read"});
    assert_eq!(
        acquire(&server, "m", all).error_codes(),
        [
            ("owner".to_owned(), "empty".to_owned()),
            ("ttl_seconds".to_owned(), "out_of_range".to_owned()),
            ("wait_seconds".to_owned(), "out_of_range".to_owned()),
            ("mode".to_owned(), "invalid_value".to_owned()),
        ]
    );
    server.status("m").assert_problem(404, "not-found");
}

fn readers_renew_and_release_their_own_leases(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let r1 = granted(&acquire(&server, "book", read("r1", 30)), "shared");
    let r2 = granted(&acquire(&server, "book", read("r2", 30)), "shared");
    let status = server.status("book");
    assert_eq!(
        status.body,
        json!({"resource": "book", "mode": "shared", "holders": [r1, r2]}),
        "GET shows every reader's lock, in token order"
    );

    std::thread::sleep(Duration::from_millis(20));
    let renewed = server.renew("book", "r2", 60);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_eq!(keys(&renewed.body), LOCK_KEYS);
    assert_eq!(renewed.body["mode"], "shared");
    assert_eq!(renewed.body["fencing_token"], r2["fencing_token"]);
    assert_eq!(renewed.body["acquired_at"], r2["acquired_at"]);
    assert!(timestamp_ms(&renewed.body["expires_at"]) >= timestamp_ms(&r2["acquired_at"]) + 60_020);
    assert_eq!(server.status("book").body["holders"][1], renewed.body);

    // Others read, the caller does not: 403.
    server
        .renew("book", "x", 30)
        .assert_problem(403, "forbidden");
    server.release("book", "x").assert_problem(403, "forbidden");
    let released = server.release("book", "r1");
    assert_eq!(released.status, 204, "{released:?}");
    assert_eq!(released.body, Value::Null);
    server
        .release("book", "r1")
        .assert_problem(403, "forbidden");
    server
        .renew("book", "r1", 30)
        .assert_problem(403, "forbidden");
    assert_eq!(
        holders(&server.status("book")),
        [("r2".to_owned(), token(&r2))]
    );
    // Nobody holds it: 404.
    assert_eq!(release(&server, "book", "r2"), 204);
    server.status("book").assert_problem(404, "not-found");
    server
        .release("book", "r2")
        .assert_problem(404, "not-found");
    server
        .renew("book", "r2", 30)
        .assert_problem(404, "not-found");
}

fn the_listing_shows_each_reader(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    granted(&acquire(&server, "ls:a", read("r1", 30)), "shared");
    granted(&acquire(&server, "ls:a", read("r2", 30)), "shared");
    granted(&acquire(&server, "ls:b", write("w", 30)), "exclusive");
    granted(&acquire(&server, "ls:c", read("r3", 30)), "shared");
    granted(&acquire(&server, "other", read("r4", 30)), "shared");
    let entries = |page: &Reply| -> Vec<(String, String, String)> {
        assert_eq!(page.status, 200, "{page:?}");
        let field = |l: &Value, name: &str| l[name].as_str().expect(name).to_owned();
        page.body["locks"]
            .as_array()
            .expect("locks")
            .iter()
            .inspect(|l| assert!(l["ttl_remaining_ms"].as_i64().is_some_and(|ms| ms > 0)))
            .map(|l| (field(l, "resource"), field(l, "owner"), field(l, "mode")))
            .collect()
    };
    let entry = |r: &str, o: &str, m: &str| (r.to_owned(), o.to_owned(), m.to_owned());
    let all = server.send("GET", "/locks?prefix=ls%3A", None);
    assert_eq!(
        entries(&all),
        [
            entry("ls:a", "r1", "shared"),
            entry("ls:a", "r2", "shared"),
            entry("ls:b", "w", "exclusive"),
            entry("ls:c", "r3", "shared"),
        ]
    );
    // `limit` counts resources: a page of one holds both readers of ls:a.
    let mut pages = Vec::new();
    let mut path = "/locks?prefix=ls%3A&limit=1".to_owned();
    loop {
        let page = server.send("GET", &path, None);
        pages.push(entries(&page));
        let Some(cursor) = page.body.get("next_cursor") else {
            break;
        };
        let cursor = cursor.as_str().expect("a string cursor");
        path = format!("/locks?prefix=ls%3A&limit=1&cursor={cursor}");
        assert!(pages.len() < 10, "paging did not end");
    }
    assert_eq!(
        pages,
        [
            vec![entry("ls:a", "r1", "shared"), entry("ls:a", "r2", "shared")],
            vec![entry("ls:b", "w", "exclusive")],
            vec![entry("ls:c", "r3", "shared")],
        ]
    );
}

fn clients_that_send_no_mode_keep_the_v1_contract(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = granted(&server.acquire("v1", "alice", 30), "exclusive");
    assert_eq!(
        server.status("v1").body,
        lock,
        "GET: the v1 object and mode"
    );
    refused(&server.acquire("v1", "bob", 30), "v1");
    // Saying "exclusive" is the same as saying nothing.
    let explicit = json!({"owner": "alice", "ttl_seconds": 30, "mode": "exclusive"});
    assert_eq!(
        token(&granted(&acquire(&server, "v1", explicit), "exclusive")),
        token(&lock)
    );
    refused(&acquire(&server, "v1", read("bob", 30)), "v1");
    let renewed = server.renew("v1", "alice", 60);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_eq!(keys(&renewed.body), LOCK_KEYS);
    assert_eq!(
        (&renewed.body["mode"], &renewed.body["fencing_token"]),
        (&json!("exclusive"), &lock["fencing_token"])
    );
    server.release("v1", "bob").assert_problem(403, "forbidden");
    assert_eq!(server.release("v1", "alice").status, 204);
    server.status("v1").assert_problem(404, "not-found");
    // A v1 client meets readers as it met another holder: refused, 403.
    granted(&acquire(&server, "v1", read("reader", 30)), "shared");
    refused(&server.acquire("v1", "alice", 30), "v1");
    server
        .release("v1", "alice")
        .assert_problem(403, "forbidden");
    server
        .renew("v1", "alice", 30)
        .assert_problem(403, "forbidden");
}
