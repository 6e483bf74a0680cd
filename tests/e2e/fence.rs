//! Fence checks through the real binary, on both backends: a token is valid exactly while its
//! lease is live (exclusive, shared, a semaphore's grant), a paused holder's token turns stale
//! when its lease runs out, bad queries are 422 and change nothing, tenants see only their own
//! leases, and every check is counted.

use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{Reply, TestServer};

on_both_backends!(
    a_lock_token_is_valid_exactly_while_its_lease_is_live,
    a_paused_holders_token_turns_stale_when_its_lease_runs_out,
    every_shared_holders_token_is_valid,
    a_semaphore_grants_token_is_valid_while_the_grant_is_live,
    bad_fence_queries_are_422_and_change_nothing,
    fence_checks_are_counted,
    a_tenant_checks_only_its_own_tokens,
    a_stale_check_is_audited_and_a_valid_one_is_not,
);

fn fence(server: &TestServer, resource: &str, token: i64) -> Reply {
    server.send(
        "GET",
        &format!("/locks/{resource}/fence?token={token}"),
        None,
    )
}

/// The `current` of a stale verdict (asserting it is one).
fn stale(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["valid"], false, "{reply:?}");
    let object = reply.body.as_object().expect("an object");
    assert_eq!(object.len(), 2, "valid and current only: {reply:?}");
    object
        .get("current")
        .cloned()
        .expect("current is always present")
}

/// The lock of a valid verdict (asserting it is one).
fn valid(reply: &Reply) -> &Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["valid"], true, "{reply:?}");
    &reply.body["lock"]
}

fn a_lock_token_is_valid_exactly_while_its_lease_is_live(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    stale_with(&server, "payment:42", 1, Value::Null);

    let a = server.acquire("payment:42", "a", 30).granted().clone();
    let first = a["fencing_token"].as_i64().unwrap();
    assert_eq!(valid(&fence(&server, "payment:42", first)), &a);
    stale_with(&server, "payment:42", first + 1_000, json!(first));
    if first > 1 {
        stale_with(&server, "payment:42", first - 1, json!(first));
    }
    // A renew keeps the token, and the check sees the new expiry.
    let renewed = server.renew("payment:42", "a", 60);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_eq!(valid(&fence(&server, "payment:42", first)), &renewed.body);

    assert_eq!(server.release("payment:42", "a").status, 204);
    stale_with(&server, "payment:42", first, Value::Null);

    let second = server.acquire("payment:42", "b", 30).token();
    assert!(second > first);
    stale_with(&server, "payment:42", first, json!(second));
    assert_eq!(
        valid(&fence(&server, "payment:42", second))["owner"],
        "b",
        "the new holder's token"
    );
    // Names that need encoding work as on the other routes.
    let odd = server.acquire("a%2Fb%3Fc", "o", 30).token();
    assert_eq!(
        valid(&fence(&server, "a%2Fb%3Fc", odd))["resource"],
        "a/b?c"
    );
}

fn stale_with(server: &TestServer, resource: &str, token: i64, current: Value) {
    assert_eq!(
        stale(&fence(server, resource, token)),
        current,
        "{resource} {token}"
    );
}

fn a_paused_holders_token_turns_stale_when_its_lease_runs_out(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let paused = server.acquire("export", "paused", 1).token();
    assert!(fence(&server, "export", paused).body["valid"] == true);
    // The holder "pauses" past its lease: nobody released anything.
    std::thread::sleep(Duration::from_millis(1_150));
    stale_with(&server, "export", paused, Value::Null);
    let next = server.acquire("export", "next", 30).token();
    stale_with(&server, "export", paused, json!(next));
    // The paused holder wakes up and asks again: still stale, whatever it does with the answer.
    assert_eq!(fence(&server, "export", paused).body["valid"], false);
}

fn every_shared_holders_token_is_valid(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let read = |owner: &str| {
        server
            .send(
                "POST",
                "/locks/report",
                Some(&json!({"owner": owner, "ttl_seconds": 30, "mode": "shared"})),
            )
            .token()
    };
    let (r1, r2) = (read("r1"), read("r2"));
    let one = valid(&fence(&server, "report", r1)).clone();
    assert_eq!(
        (one["owner"].as_str(), one["mode"].as_str()),
        (Some("r1"), Some("shared"))
    );
    assert_eq!(valid(&fence(&server, "report", r2))["owner"], "r2");
    stale_with(&server, "report", r2 + 1_000, json!(r2.max(r1)));

    // r1 leaves: its token is stale, r2's still valid.
    assert_eq!(server.release("report", "r1").status, 204);
    stale_with(&server, "report", r1, json!(r2));
    assert_eq!(valid(&fence(&server, "report", r2))["owner"], "r2");
    assert_eq!(server.release("report", "r2").status, 204);
    let writer = server.acquire("report", "w", 30).token();
    stale_with(&server, "report", r2, json!(writer));
}

fn a_semaphore_grants_token_is_valid_while_the_grant_is_live(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let take = |owner: &str| {
        let reply = server.send(
            "POST",
            "/semaphores/exports",
            Some(&json!({"owner": owner, "ttl_seconds": 30, "limit": 2})),
        );
        assert_eq!(reply.body["acquired"], true, "{reply:?}");
        reply.body["permit"].clone()
    };
    let check = |token: i64| {
        server.send(
            "GET",
            &format!("/semaphores/exports/fence?token={token}"),
            None,
        )
    };
    let none = check(1);
    assert_eq!(none.body, json!({"valid": false, "current": null}));
    let (a, b) = (take("a"), take("b"));
    let (ta, tb) = (
        a["fencing_token"].as_i64().unwrap(),
        b["fencing_token"].as_i64().unwrap(),
    );
    assert_eq!(check(ta).body, json!({"valid": true, "permit": a}));
    assert_eq!(check(tb).body["permit"]["owner"], "b");
    assert_eq!(
        check(tb + 1_000).body,
        json!({"valid": false, "current": tb})
    );
    let released = server.send("DELETE", "/semaphores/exports?owner=b", None);
    assert_eq!(released.status, 204, "{released:?}");
    assert_eq!(check(tb).body, json!({"valid": false, "current": ta}));
    // Semaphores and locks are separate namespaces: a's token is no lock's.
    stale_with(&server, "exports", ta, Value::Null);
}

fn bad_fence_queries_are_422_and_change_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server.acquire("payment:42", "a", 30).granted().clone();
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/locks/payment:42/fence", vec![("token", "required")]),
        (
            "/locks/payment:42/fence?token=",
            vec![("token", "invalid_type")],
        ),
        (
            "/locks/payment:42/fence?token=0",
            vec![("token", "out_of_range")],
        ),
        (
            "/locks/payment:42/fence?token=-1",
            vec![("token", "out_of_range")],
        ),
        (
            "/locks/payment:42/fence?token=abc",
            vec![("token", "invalid_type")],
        ),
        (
            "/locks/payment:42/fence?token=1.5",
            vec![("token", "invalid_type")],
        ),
        (
            "/locks/payment:42/fence?token=99999999999999999999",
            vec![("token", "out_of_range")],
        ),
        (
            "/locks/payment:42/fence?token=1&token=2",
            vec![("token", "conflict")],
        ),
        (
            "/locks/payment:42/fence?token=1&owner=a",
            vec![("owner", "unknown_parameter")],
        ),
        (
            "/locks/%00/fence?token=x",
            vec![("resource", "control_character"), ("token", "invalid_type")],
        ),
        (
            "/semaphores/exports/fence?token=0",
            vec![("token", "out_of_range")],
        ),
        (
            "/semaphores/%FF/fence?token=1",
            vec![("name", "invalid_utf8")],
        ),
    ];
    for (path, expected) in cases {
        let reply = server.send("GET", path, None);
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(f, c)| (f.to_owned(), c.to_owned()))
            .collect();
        assert_eq!(reply.error_codes(), expected, "{path}");
    }
    for method in ["POST", "DELETE", "PUT"] {
        let reply = server.send(method, "/locks/payment:42/fence?token=1", None);
        reply.assert_problem(405, "method-not-allowed");
        assert_eq!(reply.header("allow"), Some("GET"), "{method}");
    }
    assert_eq!(server.status("payment:42").body, lock, "nothing changed");
}

fn fence_checks_are_counted(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let token = server.acquire("m", "a", 30).token();
    for _ in 0..3 {
        valid(&fence(&server, "m", token));
    }
    stale(&fence(&server, "m", token + 1));
    let sem = server.send("GET", "/semaphores/m/fence?token=1", None);
    assert_eq!(sem.body["valid"], false);
    let metrics = server.send("GET", "/metrics", None);
    let text = metrics.body.as_str().unwrap_or_default().to_owned();
    for (line, count) in [
        (
            r#"lockd_fence_checks_total{primitive="lock",result="valid"}"#,
            3,
        ),
        (
            r#"lockd_fence_checks_total{primitive="lock",result="stale"}"#,
            1,
        ),
        (
            r#"lockd_fence_checks_total{primitive="semaphore",result="stale"}"#,
            1,
        ),
        (
            r#"lockd_fence_checks_total{primitive="semaphore",result="valid"}"#,
            0,
        ),
    ] {
        assert!(
            text.lines().any(|l| l == format!("{line} {count}")),
            "{line} {count} in\n{text}"
        );
    }
}

fn a_tenant_checks_only_its_own_tokens(db: TestDatabase) {
    const ACME: &str = "acme-fence-key-0123456789";
    const GLOBEX: &str = "globex-fence-key-9876543210";
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
    let token = as_tenant(
        ACME,
        "POST",
        "/locks/payment:42",
        Some(json!({"owner": "a", "ttl_seconds": 30})),
    )
    .token();
    let path = format!("/locks/payment:42/fence?token={token}");
    assert_eq!(as_tenant(ACME, "GET", &path, None).body["valid"], true);
    assert_eq!(
        as_tenant(GLOBEX, "GET", &path, None).body,
        json!({"valid": false, "current": null}),
        "globex has no lock payment:42"
    );
    server
        .send("GET", &path, None)
        .assert_problem(401, "unauthorized");
}

fn a_stale_check_is_audited_and_a_valid_one_is_not(db: TestDatabase) {
    let server = TestServer::start(&db, &["--log", "info", "--log-format", "json"]);
    let token = server.acquire("ledger", "a", 30).token();
    valid(&fence(&server, "ledger", token));
    stale(&fence(&server, "ledger", token + 7));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut events: Vec<Value> = Vec::new();
    while !events.iter().any(|e| e["fields"]["event"] == "fence_stale") {
        assert!(
            std::time::Instant::now() < deadline,
            "no fence_stale event in {events:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
        events.extend(
            server
                .drain_stderr()
                .iter()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|e| e["target"] == "lockd::audit"),
        );
    }
    let stale: Vec<&Value> = events
        .iter()
        .filter(|e| e["fields"]["event"] == "fence_stale")
        .collect();
    assert_eq!(stale.len(), 1, "one stale check, one event: {events:#?}");
    let fields = &stale[0]["fields"];
    assert_eq!(
        (
            fields["primitive"].as_str(),
            fields["resource"].as_str(),
            fields["fencing_token"].as_i64(),
            fields["tenant"].as_str(),
        ),
        (
            Some("lock"),
            Some("ledger"),
            Some(token + 7),
            Some("default")
        ),
        "{fields}"
    );
    assert!(
        !events.iter().any(|e| e["fields"]["event"]
            .as_str()
            .is_some_and(|n| n.contains("fence"))
            && e["fields"]["fencing_token"] == token),
        "a valid check is not audited: {events:#?}"
    );
}
