//! The seed attacks ATK-01..ATK-12: what a hostile or careless client tries against a lock
//! service, each a named test that must keep failing for the attacker. docs/security.md lists them.

use std::sync::{Arc, Barrier};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

on_both_backends!(
    atk_01_release_by_another_owner_is_forbidden_and_changes_nothing,
    atk_02_renew_by_another_owner_is_forbidden_and_changes_nothing,
    atk_03_owner_look_alikes_are_not_the_owner,
    atk_04_zero_and_negative_ttls_are_refused,
    atk_05_huge_ttls_are_refused,
    atk_06_ttls_of_the_wrong_type_are_refused,
    atk_07_injection_looking_resource_names_are_literal_data,
    atk_08_injection_looking_owners_are_literal_data,
    atk_09_same_owner_reacquire_keeps_the_token_and_others_cannot,
    atk_10_concurrent_acquires_have_exactly_one_winner,
    atk_11_an_expired_lock_is_gone_and_fenced,
    atk_12_a_10_kb_resource_name_is_refused,
);

/// ATK-01: someone who is not the holder releases the lock.
fn atk_01_release_by_another_owner_is_forbidden_and_changes_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server
        .acquire("payment:42", "worker-7", 30)
        .granted()
        .clone();
    server
        .release("payment:42", "intruder")
        .assert_problem(403, "forbidden");
    server
        .send("DELETE", "/locks/payment:42?owner=intruder", None)
        .assert_problem(403, "forbidden");
    assert_eq!(server.status("payment:42").body, lock);
}

/// ATK-02: someone who is not the holder extends the lease (to keep the holder's lock alive, or
/// to shorten it).
fn atk_02_renew_by_another_owner_is_forbidden_and_changes_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server
        .acquire("payment:42", "worker-7", 30)
        .granted()
        .clone();
    server
        .renew("payment:42", "intruder", 1)
        .assert_problem(403, "forbidden");
    server
        .renew("payment:42", "intruder", 86_400)
        .assert_problem(403, "forbidden");
    assert_eq!(server.status("payment:42").body, lock);
}

/// ATK-03: owner look-alikes (other case, padding, invisible control characters).
fn atk_03_owner_look_alikes_are_not_the_owner(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server.acquire("r", "worker-7", 30).granted().clone();
    for look_alike in ["Worker-7", "WORKER-7", "worker-7 x", "worker_7"] {
        server
            .release("r", look_alike)
            .assert_problem(403, "forbidden");
        assert_eq!(
            server.acquire("r", look_alike, 30).body["acquired"],
            false,
            "{look_alike}"
        );
    }
    for hidden in ["worker-7\u{0}", "worker\u{7}-7", "worker-7\u{1b}"] {
        server
            .release("r", hidden)
            .assert_problem(422, "validation-failed");
    }
    assert_eq!(server.status("r").body, lock);
}

/// ATK-04: zero or negative TTLs (a lock that is born expired, or lives in the past).
fn atk_04_zero_and_negative_ttls_are_refused(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for ttl in [0, -1, -86_400, i64::MIN] {
        let reply = server.acquire("r", "o", ttl);
        assert_eq!(
            reply.error_codes(),
            vec![("ttl_seconds".to_owned(), "out_of_range".to_owned())]
        );
    }
    server.status("r").assert_problem(404, "not-found");
}

/// ATK-05: TTLs beyond the maximum, beyond i64, or beyond f64 (a lock held forever).
fn atk_05_huge_ttls_are_refused(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for ttl in [
        "86401",
        "9223372036854775807",
        "9223372036854775808",
        "1e400",
        "99999999999999999999999",
    ] {
        let body = format!(r#"{{"owner": "o", "ttl_seconds": {ttl}}}"#);
        let reply = server.send_raw(
            "POST",
            "/locks/r",
            Some("application/json"),
            body.as_bytes(),
        );
        reply.assert_problem(422, "validation-failed");
        assert_eq!(reply.body["errors"][0]["field"], "ttl_seconds", "{ttl}");
    }
    server.status("r").assert_problem(404, "not-found");
}

/// ATK-06: TTLs of the wrong JSON type, which lax parsers coerce.
fn atk_06_ttls_of_the_wrong_type_are_refused(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for ttl in [
        json!("3600"),
        json!(60.5),
        // (60.0 is no wrong type: JSON Schema counts it as the integer 60, and so does lockd.)
        json!(60.01),
        json!(true),
        json!(null),
        json!([60]),
        json!({"s": 60}),
    ] {
        let reply = server.send(
            "POST",
            "/locks/r",
            Some(&json!({"owner": "o", "ttl_seconds": ttl})),
        );
        reply.assert_problem(422, "validation-failed");
        assert_eq!(reply.body["errors"][0]["field"], "ttl_seconds", "{ttl}");
    }
    server.status("r").assert_problem(404, "not-found");
}

/// ATK-07: SQL injection through the resource name.
fn atk_07_injection_looking_resource_names_are_literal_data(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let victim = server.acquire("victim", "owner-v", 30).granted().clone();
    let names = [
        "x'; DROP TABLE distributed_locks; --",
        "' OR '1'='1",
        "victim' --",
        "%' OR resource LIKE '%",
        "\"; DELETE FROM distributed_locks; --",
    ];
    for name in names {
        let encoded: String = percent_encode(name);
        let reply = server.acquire(&encoded, "attacker", 30);
        assert_eq!(reply.granted()["resource"], name);
        assert_eq!(server.status(&encoded).body["resource"], name);
    }
    assert_eq!(
        server.status("victim").body,
        victim,
        "other locks are untouched"
    );
    server
        .status("X'%3B%20DROP%20TABLE%20distributed_locks%3B%20--")
        .assert_problem(404, "not-found");
    assert_eq!(
        server
            .release(&percent_encode("victim' --"), "attacker")
            .status,
        204
    );
    assert_eq!(server.status("victim").body, victim);
}

/// ATK-08: SQL injection through the owner.
fn atk_08_injection_looking_owners_are_literal_data(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = server.acquire("r", "worker-7", 30).granted().clone();
    for owner in ["' OR '1'='1", "worker-7' --", "x' OR owner <> '"] {
        server.release("r", owner).assert_problem(403, "forbidden");
        server
            .renew("r", owner, 30)
            .assert_problem(403, "forbidden");
    }
    assert_eq!(server.status("r").body, lock);
    let odd = server.acquire("r2", "' OR '1'='1", 30);
    assert_eq!(odd.granted()["owner"], "' OR '1'='1");
}

/// ATK-09: abusing re-acquire: the holder re-acquiring keeps its token; nobody else can.
fn atk_09_same_owner_reacquire_keeps_the_token_and_others_cannot(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = server.acquire("r", "worker-7", 30);
    let again = server.acquire("r", "worker-7", 60);
    assert_eq!(again.token(), first.token());
    assert!(again.granted()["acquired_at"].as_str() >= first.granted()["acquired_at"].as_str());
    let stolen = server.acquire("r", "worker-8", 60);
    assert_eq!(stolen.body, json!({"acquired": false, "resource": "r"}));
    assert_eq!(server.status("r").body["owner"], "worker-7");
}

/// ATK-10: many clients racing for one free resource at the same instant.
fn atk_10_concurrent_acquires_have_exactly_one_winner(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    let barrier = Arc::new(Barrier::new(32));
    let handles: Vec<_> = (0..32)
        .map(|i| {
            let server = Arc::clone(&server);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                server.acquire("contended", &format!("racer-{i}"), 30)
            })
        })
        .collect();
    let replies: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("racer"))
        .collect();
    assert!(replies.iter().all(|r| r.status == 200), "{replies:?}");
    let winners: Vec<_> = replies
        .iter()
        .filter(|r| r.body["acquired"] == true)
        .collect();
    assert_eq!(winners.len(), 1, "{replies:?}");
    assert_eq!(server.status("contended").body, winners[0].body["lock"]);
}

/// ATK-11: relying on a lock that has expired: it is gone for everyone, and its old holder can
/// neither renew nor release it; the next grant's token fences the old holder out.
fn atk_11_an_expired_lock_is_gone_and_fenced(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let old = server.acquire("r", "slow-worker", 1);
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    server.status("r").assert_problem(404, "not-found");
    server
        .renew("r", "slow-worker", 30)
        .assert_problem(404, "not-found");
    let new = server.acquire("r", "fast-worker", 30);
    assert!(new.token() > old.token());
    server
        .release("r", "slow-worker")
        .assert_problem(403, "forbidden");
    assert_eq!(server.status("r").body["owner"], "fast-worker");
}

/// ATK-12: oversized names (10 KB) and bodies: refused with 422/413, and the server keeps serving.
fn atk_12_a_10_kb_resource_name_is_refused(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let name = "n".repeat(10 * 1024);
    let reply = server.acquire(&name, "o", 30);
    assert_eq!(
        reply.error_codes(),
        vec![("resource".to_owned(), "too_long".to_owned())]
    );
    server
        .status(&name)
        .assert_problem(422, "validation-failed");
    server
        .release(&name, "o")
        .assert_problem(422, "validation-failed");
    let at_limit = "n".repeat(255);
    server.acquire(&at_limit, "o", 30).granted();
    let body = format!(
        r#"{{"owner": "{}", "ttl_seconds": 30}}"#,
        "o".repeat(20_000)
    );
    server
        .send_raw(
            "POST",
            "/locks/r",
            Some("application/json"),
            body.as_bytes(),
        )
        .assert_problem(413, "payload-too-large");
    assert_eq!(server.send("GET", "/healthz", None).status, 200);
}

/// Percent-encodes everything but unreserved characters.
fn percent_encode(raw: &str) -> String {
    raw.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
