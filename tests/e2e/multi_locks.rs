//! Several locks at once through the real binary, on both backends: `POST /locks` grants a set
//! whole or changes nothing, in either mode beside other holders; `DELETE /locks` answers for
//! each resource. Bad input: [`invalid`]. Sets that wait, race or hang up, on one instance or
//! two: [`waiting`].

mod invalid;
mod waiting;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{Reply, TestServer};

on_both_backends!(
    a_set_is_granted_whole_with_a_token_for_each_lock,
    a_set_with_one_held_lock_changes_nothing,
    a_set_mixes_modes_beside_other_readers,
    a_release_of_many_answers_for_each_resource,
);

/// The members of a granted set's lock objects.
const LOCK_KEYS: [&str; 6] = [
    "acquired_at",
    "expires_at",
    "fencing_token",
    "mode",
    "owner",
    "resource",
];

/// A multi-lock body: `owner` asks for each resource in exclusive mode (no `mode`), 30 s.
fn set(owner: &str, resources: &[&str]) -> Value {
    let locks: Vec<Value> = resources.iter().map(|r| json!({"resource": r})).collect();
    json!({"owner": owner, "ttl_seconds": 30, "locks": locks})
}

fn waiting(mut body: Value, seconds: i64) -> Value {
    body["wait_seconds"] = json!(seconds);
    body
}

fn acquire_all(server: &TestServer, body: &Value) -> Reply {
    server.send("POST", "/locks", Some(body))
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

fn token(lock: &Value) -> i64 {
    lock["fencing_token"].as_i64().expect("integer token")
}

/// The locks of a granted set, checked to be `resources` in request order, each a whole lock
/// object of `owner`.
fn granted_all(reply: &Reply, owner: &str, resources: &[&str]) -> Vec<Value> {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(keys(&reply.body), ["acquired", "locks"], "{reply:?}");
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    let locks = reply.body["locks"].as_array().expect("locks").clone();
    let names: Vec<&str> = locks
        .iter()
        .map(|l| l["resource"].as_str().unwrap())
        .collect();
    assert_eq!(names, resources, "request order: {reply:?}");
    for lock in &locks {
        assert_eq!(lock["owner"], owner, "{lock}");
        let mut members = keys(lock);
        members.retain(|key| *key != "value");
        assert_eq!(members, LOCK_KEYS, "{lock}");
    }
    locks
}

/// The unavailable resources of a refused set (its whole body: nothing else is said).
fn unavailable(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(keys(&reply.body), ["acquired", "unavailable"], "{reply:?}");
    assert_eq!(reply.body["acquired"], false, "{reply:?}");
    reply.body["unavailable"]
        .as_array()
        .expect("unavailable")
        .iter()
        .map(|name| name.as_str().expect("a name").to_owned())
        .collect()
}

/// `DELETE /locks`: each resource's (result, token) in request order.
fn release_all(server: &TestServer, owner: &str, resources: &[&str]) -> Vec<(String, Option<i64>)> {
    let body = json!({"owner": owner, "resources": resources});
    let reply = server.send("DELETE", "/locks", Some(&body));
    assert_eq!(reply.status, 200, "{reply:?}");
    let results = reply.body["results"].as_array().expect("results");
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    assert_eq!(names, resources, "request order: {reply:?}");
    results
        .iter()
        .map(|r| {
            let result = r["result"].as_str().expect("result").to_owned();
            (result, r.get("fencing_token").map(token_of))
        })
        .collect()
}

fn token_of(value: &Value) -> i64 {
    value.as_i64().expect("integer token")
}

fn absent(server: &TestServer, resources: &[&str]) {
    for resource in resources {
        server.status(resource).assert_problem(404, "not-found");
    }
}

/// One counter of `/metrics`, e.g. `lockd_acquire_total{outcome="granted"}`.
fn counter(server: &TestServer, series: &str) -> u64 {
    let scrape = server.send("GET", "/metrics", None);
    let text = scrape.body.as_str().unwrap_or_default().to_owned();
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0, |value| value.trim().parse().expect("a count"))
}

fn a_set_is_granted_whole_with_a_token_for_each_lock(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let names = ["transfer:b", "transfer:a", "transfer/é c"];
    let locks = granted_all(&acquire_all(&server, &set("t-7", &names)), "t-7", &names);
    let mut tokens: Vec<i64> = locks.iter().map(token).collect();
    for lock in &locks {
        assert_eq!(lock["mode"], "exclusive", "{lock}");
        assert_eq!(lock["acquired_at"], locks[0]["acquired_at"], "one instant");
        assert_eq!(server.status(&encoded(lock)).body, *lock, "GET shows it");
    }
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(
        tokens.len(),
        3,
        "a token of its own for each lock: {locks:?}"
    );
    assert_eq!(
        counter(&server, r#"lockd_acquire_total{outcome="granted"}"#),
        3
    );
    let listed = server.send("GET", "/locks?prefix=transfer", None);
    assert_eq!(listed.body["locks"].as_array().map(Vec::len), Some(3));

    // The same set again, in another order: re-granted, each token kept.
    let again = ["transfer/é c", "transfer:a", "transfer:b"];
    let regranted = granted_all(&acquire_all(&server, &set("t-7", &again)), "t-7", &again);
    for (lock, before) in regranted.iter().zip(locks.iter().rev()) {
        assert_eq!(token(lock), token(before), "{lock}");
    }
    // Others are refused each of them, one at a time.
    for name in ["transfer%3Aa", "transfer%3Ab"] {
        assert_eq!(server.acquire(name, "other", 30).body["acquired"], false);
    }
}

/// A resource name as one path segment.
fn encoded(lock: &Value) -> String {
    let name = lock["resource"].as_str().expect("resource");
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn a_set_with_one_held_lock_changes_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let held = server.acquire("b", "bob", 30).granted().clone();
    let refused = acquire_all(&server, &set("alice", &["a", "b", "c"]));
    assert_eq!(unavailable(&refused), ["b"]);
    assert!(
        refused.header("retry-after").is_none(),
        "no wait, no Retry-After"
    );
    absent(&server, &["a", "c"]);
    assert_eq!(
        server.status("b").body,
        held,
        "the holder keeps it as it was"
    );
    assert_eq!(
        counter(&server, r#"lockd_acquire_total{outcome="held"}"#),
        1
    );

    // Every unavailable one is named, in request order, whoever holds it.
    server.acquire("d", "dan", 30).granted();
    let refused = acquire_all(&server, &set("alice", &["d", "a", "b"]));
    assert_eq!(unavailable(&refused), ["d", "b"]);
    absent(&server, &["a", "c"]);
    // A lock the caller holds in the other mode is unavailable too (not a 409).
    let shared = json!({"owner": "alice", "ttl_seconds": 30, "mode": "shared"});
    server.send("POST", "/locks/s", Some(&shared)).granted();
    let refused = acquire_all(&server, &set("alice", &["a", "s"]));
    assert_eq!(unavailable(&refused), ["s"]);
    absent(&server, &["a"]);
    assert_eq!(server.status("s").body["holders"][0]["owner"], "alice");

    // Once the holder has gone, the same set is granted whole.
    assert_eq!(server.release("b", "bob").status, 204);
    let locks = granted_all(
        &acquire_all(&server, &set("alice", &["a", "b", "c"])),
        "alice",
        &["a", "b", "c"],
    );
    assert!(
        token(&locks[1]) > token(&held),
        "a new grant of b: {locks:?}"
    );
}

fn a_set_mixes_modes_beside_other_readers(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let read = json!({"owner": "r1", "ttl_seconds": 30, "mode": "shared"});
    let r1 = server
        .send("POST", "/locks/rates", Some(&read))
        .granted()
        .clone();
    let mixed = |owner: &str, rates_mode: &str| {
        json!({"owner": owner, "ttl_seconds": 30, "locks": [
            {"resource": "rates", "mode": rates_mode},
            {"resource": "account:1", "mode": "exclusive"},
        ]})
    };
    let names = ["rates", "account:1"];
    let locks = granted_all(
        &acquire_all(&server, &mixed("t-1", "shared")),
        "t-1",
        &names,
    );
    assert_eq!(
        (&locks[0]["mode"], &locks[1]["mode"]),
        (&json!("shared"), &json!("exclusive"))
    );
    assert!(token(&locks[0]) > token(&r1));
    assert_eq!(
        server.status("rates").body,
        json!({"resource": "rates", "mode": "shared", "holders": [r1, locks[0]]}),
        "the set's reader beside the other"
    );
    assert_eq!(server.status("account%3A1").body, locks[1]);

    // A writer, alone or in a set, is refused rates while readers hold it; another set is
    // refused the account.
    assert_eq!(server.acquire("rates", "w", 30).body["acquired"], false);
    let writer = json!({"owner": "w", "ttl_seconds": 30, "locks": [{"resource": "rates"}]});
    assert_eq!(unavailable(&acquire_all(&server, &writer)), ["rates"]);
    assert_eq!(
        unavailable(&acquire_all(&server, &mixed("t-2", "shared"))),
        ["account:1"]
    );
    // The set's owner asking for rates in the other mode: unavailable, nothing changed.
    assert_eq!(
        unavailable(&acquire_all(&server, &mixed("t-1", "exclusive"))),
        ["rates"]
    );
    // The same set again: re-granted with its tokens.
    let again = granted_all(
        &acquire_all(&server, &mixed("t-1", "shared")),
        "t-1",
        &names,
    );
    assert_eq!(
        again.iter().map(token).collect::<Vec<_>>(),
        locks.iter().map(token).collect::<Vec<_>>()
    );

    // Released together: the other reader keeps its lease, the account is free.
    assert_eq!(
        release_all(&server, "t-1", &names),
        [
            ("released".to_owned(), Some(token(&locks[0]))),
            ("released".to_owned(), Some(token(&locks[1]))),
        ]
    );
    assert_eq!(server.status("rates").body["holders"], json!([r1]));
    absent(&server, &["account%3A1"]);
    let t2 = granted_all(
        &acquire_all(&server, &mixed("t-2", "shared")),
        "t-2",
        &names,
    );
    assert!(token(&t2[1]) > token(&locks[1]));
}

fn a_release_of_many_answers_for_each_resource(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let locks = granted_all(
        &acquire_all(&server, &set("alice", &["a", "b"])),
        "alice",
        &["a", "b"],
    );
    server.acquire("c", "bob", 30).granted();
    let read = json!({"owner": "alice", "ttl_seconds": 30, "mode": "shared"});
    let s = server
        .send("POST", "/locks/s", Some(&read))
        .granted()
        .clone();
    let released = |t: &Value| ("released".to_owned(), Some(token(t)));
    let other = |result: &str| (result.to_owned(), None);
    assert_eq!(
        release_all(&server, "alice", &["b", "c", "d", "s", "a"]),
        [
            released(&locks[1]),
            other("forbidden"),
            other("not_found"),
            released(&s),
            released(&locks[0]),
        ]
    );
    absent(&server, &["a", "b", "s"]);
    assert_eq!(server.status("c").body["owner"], "bob");
    assert_eq!(
        release_all(&server, "alice", &["a"]),
        [other("not_found")],
        "a second release finds nothing"
    );
    assert_eq!(
        counter(&server, r#"lockd_release_total{result="released"}"#),
        3
    );
}
