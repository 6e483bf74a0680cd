//! The v1 contract over HTTP: acquire, status, renew and release, their answers and rules.

use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::{timestamp_ms, TestServer};

on_both_backends!(
    a_full_session_acquire_status_renew_release,
    release_by_query_parameter_when_there_is_no_body,
    encoded_names_are_decoded_once_and_kept_verbatim,
    owners_are_trimmed_and_compared_case_sensitively,
    an_expired_lock_belongs_to_nobody,
    the_max_ttl_is_configurable,
    unknown_fields_are_ignored,
    errors_are_problem_documents_in_the_contract_order,
);

fn a_full_session_acquire_status_renew_release(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);

    let granted = server.acquire("payment:42", "worker-7", 30);
    assert!(
        granted.content_type.starts_with("application/json"),
        "{granted:?}"
    );
    let lock = granted.granted().clone();
    assert_eq!(lock["resource"], "payment:42");
    assert_eq!(lock["owner"], "worker-7");
    let acquired_at = timestamp_ms(&lock["acquired_at"]);
    let expires_at = timestamp_ms(&lock["expires_at"]);
    assert_eq!(expires_at - acquired_at, 30_000);
    assert!(granted.token() > 0);

    let status = server.status("payment:42");
    assert_eq!(status.status, 200);
    assert_eq!(status.body, lock, "GET shows exactly the granted lock");

    let held = server.acquire("payment:42", "worker-8", 30);
    assert_eq!(held.status, 200);
    assert_eq!(
        held.body,
        json!({"acquired": false, "resource": "payment:42"})
    );

    std::thread::sleep(Duration::from_millis(20));
    let renewed = server.renew("payment:42", "worker-7", 120);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_eq!(renewed.body["acquired_at"], lock["acquired_at"]);
    assert_eq!(renewed.body["fencing_token"], lock["fencing_token"]);
    let renewed_expiry = timestamp_ms(&renewed.body["expires_at"]);
    assert!(
        renewed_expiry >= acquired_at + 120_000 + 20,
        "expires_at = now + ttl"
    );

    let released = server.release("payment:42", "worker-7");
    assert_eq!(released.status, 204, "{released:?}");
    assert_eq!(released.body, serde_json::Value::Null, "204 has no body");
    server.status("payment:42").assert_problem(404, "not-found");
    server
        .release("payment:42", "worker-7")
        .assert_problem(404, "not-found");
    server
        .renew("payment:42", "worker-7", 30)
        .assert_problem(404, "not-found");

    let next = server.acquire("payment:42", "worker-8", 30);
    assert!(
        next.token() > granted.token(),
        "a grant after release gets a larger token"
    );
}

fn release_by_query_parameter_when_there_is_no_body(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    server.acquire("job:nightly", "cron host", 30).granted();
    server
        .send("DELETE", "/locks/job:nightly?owner=someone+else", None)
        .assert_problem(403, "forbidden");
    let released = server.send("DELETE", "/locks/job:nightly?owner=cron+host", None);
    assert_eq!(
        released.status, 204,
        "`+` in a query is a space: {released:?}"
    );
    let missing = server.send("DELETE", "/locks/job:nightly", None);
    assert_eq!(
        missing.error_codes(),
        vec![("owner".to_owned(), "required".to_owned())]
    );
    let disagree = server.send(
        "DELETE",
        "/locks/job:nightly?owner=a",
        Some(&json!({"owner": "b"})),
    );
    assert_eq!(
        disagree.error_codes(),
        vec![("owner".to_owned(), "conflict".to_owned())]
    );
}

fn encoded_names_are_decoded_once_and_kept_verbatim(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let slash = server.acquire("tenant%2Fjob", "o", 30);
    assert_eq!(slash.granted()["resource"], "tenant/job");
    let plus = server.acquire("a+b", "o", 30);
    assert_eq!(plus.granted()["resource"], "a+b");
    let space = server.acquire("a%20b", "o", 30);
    assert_eq!(space.granted()["resource"], "a b");
    assert_eq!(server.status("tenant%2fjob").body["resource"], "tenant/job");
    server
        .status("TENANT%2Fjob")
        .assert_problem(404, "not-found");
    let unicode = server.acquire("%E6%97%A5%E6%9C%AC", "o", 30);
    assert_eq!(unicode.granted()["resource"], "日本");
}

fn owners_are_trimmed_and_compared_case_sensitively(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server.acquire("r", "  worker-7\t", 30);
    assert_eq!(lock.granted()["owner"], "worker-7");
    assert_eq!(server.acquire("r", "worker-7", 30).token(), lock.token());
    let other_case = server.acquire("r", "Worker-7", 30);
    assert_eq!(other_case.body["acquired"], false);
    server
        .release("r", "WORKER-7")
        .assert_problem(403, "forbidden");
    assert_eq!(server.release("r", " worker-7 ").status, 204);
}

fn an_expired_lock_belongs_to_nobody(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = server.acquire("short", "alice", 1);
    let first_token = first.token();
    std::thread::sleep(Duration::from_millis(1_100));
    server.status("short").assert_problem(404, "not-found");
    server
        .renew("short", "alice", 30)
        .assert_problem(404, "not-found");
    server
        .release("short", "alice")
        .assert_problem(404, "not-found");
    let taken = server.acquire("short", "bob", 30);
    assert!(taken.token() > first_token);
    assert_eq!(taken.granted()["owner"], "bob");
}

fn the_max_ttl_is_configurable(db: TestDatabase) {
    let server = TestServer::start(&db, &["--max-ttl-seconds", "60"]);
    server.acquire("r", "o", 60).granted();
    let refused = server.acquire("r2", "o", 61);
    assert_eq!(
        refused.error_codes(),
        vec![("ttl_seconds".to_owned(), "out_of_range".to_owned())]
    );
    server
        .renew("r", "o", 61)
        .assert_problem(422, "validation-failed");
}

fn unknown_fields_are_ignored(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let reply = server.send(
        "POST",
        "/locks/r",
        Some(&json!({"owner": "o", "ttl_seconds": 5, "priority": "high", "nested": {"a": [1, 2]}})),
    );
    reply.granted();
}

fn errors_are_problem_documents_in_the_contract_order(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    server
        .send("GET", "/nope", None)
        .assert_problem(404, "not-found");
    let wrong_method = server.send("PUT", "/locks/r", None);
    wrong_method.assert_problem(405, "method-not-allowed");
    assert!(wrong_method
        .header("allow")
        .is_some_and(|a| a.contains("POST")));
    server
        .send_raw("POST", "/locks/r", Some("text/plain"), &vec![b'x'; 20_000])
        .assert_problem(415, "unsupported-media-type");
    server
        .send_raw(
            "POST",
            "/locks/r",
            Some("application/json"),
            &vec![b'x'; 20_000],
        )
        .assert_problem(413, "payload-too-large");
    server
        .send_raw("POST", "/locks/%00", Some("application/json"), b"{not json")
        .assert_problem(400, "bad-request");
    let invalid = server.send_raw(
        "POST",
        "/locks/%00",
        None,
        br#"{"owner": "", "ttl_seconds": 0}"#,
    );
    assert_eq!(
        invalid.error_codes(),
        vec![
            ("resource".to_owned(), "control_character".to_owned()),
            ("owner".to_owned(), "empty".to_owned()),
            ("ttl_seconds".to_owned(), "out_of_range".to_owned()),
        ]
    );
    assert_eq!(invalid.body["instance"], "/locks/%00");
    let charset = server.send_raw(
        "POST",
        "/locks/r",
        Some("application/json; charset=utf-8"),
        br#"{"owner": "o", "ttl_seconds": 5}"#,
    );
    charset.granted();
}
