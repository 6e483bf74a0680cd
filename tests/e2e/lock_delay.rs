//! Lock-delay through the real binary, on both backends: a lease that runs out keeps its place
//! from other owners until `expires_at` plus its delay (acquires answer `acquired: false` with
//! `Retry-After`, a status 404 with `available_at`, a waiting acquire is granted once it is over,
//! never before); its owner may come back; a release clears it; elections and the server's
//! default alike; bad values are 422 and change nothing.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    a_lease_that_runs_out_keeps_its_place_for_its_lock_delay,
    a_waiting_acquire_is_granted_when_the_lock_delay_ends,
    a_release_clears_the_lock_delay,
    an_election_keeps_its_office_for_the_lock_delay,
    the_servers_default_lock_delay_applies_when_none_is_asked,
    a_semaphore_grant_that_runs_out_keeps_its_permits_for_its_lock_delay,
    bad_lock_delays_are_422_and_change_nothing,
);

fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn acquire(server: &TestServer, resource: &str, body: Value) -> Reply {
    let reply = server.send("POST", &format!("/locks/{resource}"), Some(&body));
    assert_eq!(reply.status, 200, "{reply:?}");
    reply
}

/// Sleeps until `at_ms` (Unix ms) has passed by `margin_ms`.
fn sleep_past(at_ms: i64, margin_ms: i64) {
    let left = at_ms + margin_ms - now_ms();
    if left > 0 {
        std::thread::sleep(Duration::from_millis(u64::try_from(left).unwrap()));
    }
}

fn retry_after(reply: &Reply) -> u64 {
    reply
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("whole seconds")
}

fn a_lease_that_runs_out_keeps_its_place_for_its_lock_delay(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let granted = acquire(
        &server,
        "export",
        json!({"owner": "paused", "ttl_seconds": 1, "lock_delay_seconds": 3}),
    );
    let lock = granted.granted().clone();
    let expires_ms = timestamp_ms(&lock["expires_at"]);
    sleep_past(expires_ms, 150);

    // The lease has ended; its place has not.
    let status = server.status("export");
    status.assert_problem(404, "not-found");
    assert_eq!(
        timestamp_ms(&status.body["available_at"]),
        expires_ms + 3_000
    );
    assert!((1..=3).contains(&retry_after(&status)), "{status:?}");
    let refused = acquire(
        &server,
        "export",
        json!({"owner": "other", "ttl_seconds": 30}),
    );
    assert_eq!(
        refused.body,
        json!({"acquired": false, "resource": "export"})
    );
    assert!((1..=3).contains(&retry_after(&refused)), "{refused:?}");
    let reader = acquire(
        &server,
        "export",
        json!({"owner": "reader", "ttl_seconds": 30, "mode": "shared"}),
    );
    assert_eq!(reader.body["acquired"], false, "a reader waits too");
    let set = server.send(
        "POST",
        "/locks",
        Some(&json!({"owner": "batch", "ttl_seconds": 30, "locks": [{"resource": "export"}]})),
    );
    assert_eq!(set.body["acquired"], false, "{set:?}");

    // Its own owner may come back at once: a new lease, a new token.
    let back = acquire(
        &server,
        "export",
        json!({"owner": "paused", "ttl_seconds": 1}),
    );
    assert!(back.token() > lock["fencing_token"].as_i64().unwrap());
    // Without a delay of its own, that lease's place is free once it runs out.
    sleep_past(timestamp_ms(&back.granted()["expires_at"]), 150);
    server.status("export").assert_problem(404, "not-found");
    assert!(server.status("export").body.get("available_at").is_none());
    assert_eq!(
        acquire(
            &server,
            "export",
            json!({"owner": "other", "ttl_seconds": 30})
        )
        .body["acquired"],
        true
    );
}

fn a_waiting_acquire_is_granted_when_the_lock_delay_ends(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = acquire(
        &server,
        "job",
        json!({"owner": "paused", "ttl_seconds": 1, "lock_delay_seconds": 2}),
    );
    let available_ms = timestamp_ms(&lock.granted()["expires_at"]) + 2_000;
    let started = Instant::now();
    let waited = acquire(
        &server,
        "job",
        json!({"owner": "next", "ttl_seconds": 30, "wait_seconds": 10}),
    );
    let granted_ms = now_ms();
    assert_eq!(waited.body["acquired"], true, "{waited:?}");
    assert!(
        granted_ms >= available_ms,
        "granted {} ms before the delay ended",
        available_ms - granted_ms
    );
    assert!(
        granted_ms < available_ms + 1_500,
        "granted {} ms after the delay ended",
        granted_ms - available_ms
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

fn a_release_clears_the_lock_delay(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    acquire(
        &server,
        "r",
        json!({"owner": "a", "ttl_seconds": 30, "lock_delay_seconds": 60}),
    );
    assert_eq!(server.release("r", "a").status, 204);
    server.status("r").assert_problem(404, "not-found");
    assert!(server.status("r").body.get("available_at").is_none());
    assert_eq!(
        acquire(&server, "r", json!({"owner": "b", "ttl_seconds": 30})).body["acquired"],
        true
    );
}

fn an_election_keeps_its_office_for_the_lock_delay(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let campaign = |candidate: &str, extra: Value| {
        let mut body = json!({"candidate": candidate, "ttl_seconds": 1});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        server.send("POST", "/elections/primary/campaign", Some(&body))
    };
    let leader = campaign("a", json!({"lock_delay_seconds": 2}));
    assert_eq!(leader.body["elected"], true);
    let expires_ms = timestamp_ms(&leader.body["leader"]["expires_at"]);
    sleep_past(expires_ms, 150);
    let vacant = server.send("GET", "/elections/primary", None);
    vacant.assert_problem(404, "not-found");
    assert_eq!(
        timestamp_ms(&vacant.body["available_at"]),
        expires_ms + 2_000
    );
    let refused = campaign("b", json!({}));
    assert_eq!(refused.body, json!({"elected": false, "leader": null}));
    assert!((1..=2).contains(&retry_after(&refused)));
    let waited = campaign("b", json!({"wait_seconds": 10}));
    assert_eq!(waited.body["elected"], true, "{waited:?}");
    assert!(now_ms() >= expires_ms + 2_000);
    assert!(waited.body["leader"]["term"].as_i64() > leader.body["leader"]["term"].as_i64());
}

fn the_servers_default_lock_delay_applies_when_none_is_asked(db: TestDatabase) {
    let server = TestServer::start(&db, &["--default-lock-delay-seconds", "2"]);
    let lock = acquire(&server, "d", json!({"owner": "a", "ttl_seconds": 1}));
    sleep_past(timestamp_ms(&lock.granted()["expires_at"]), 150);
    assert_eq!(
        acquire(&server, "d", json!({"owner": "b", "ttl_seconds": 30})).body["acquired"],
        false
    );
    // Asking for none overrides the default; a shared lease never has one.
    let none = acquire(
        &server,
        "e",
        json!({"owner": "a", "ttl_seconds": 1, "lock_delay_seconds": 0}),
    );
    let reader = acquire(
        &server,
        "f",
        json!({"owner": "a", "ttl_seconds": 1, "mode": "shared"}),
    );
    sleep_past(
        timestamp_ms(&none.granted()["expires_at"])
            .max(timestamp_ms(&reader.granted()["expires_at"])),
        150,
    );
    assert_eq!(
        acquire(&server, "e", json!({"owner": "b", "ttl_seconds": 30})).body["acquired"],
        true
    );
    assert_eq!(
        acquire(&server, "f", json!({"owner": "b", "ttl_seconds": 30})).body["acquired"],
        true
    );
}

fn bad_lock_delays_are_422_and_change_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for (path, body, expected) in [
        (
            "/locks/x",
            json!({"owner": "a", "ttl_seconds": 30, "lock_delay_seconds": 61}),
            "out_of_range",
        ),
        (
            "/locks/x",
            json!({"owner": "a", "ttl_seconds": 30, "lock_delay_seconds": -1}),
            "out_of_range",
        ),
        (
            "/locks/x",
            json!({"owner": "a", "ttl_seconds": 30, "lock_delay_seconds": "5"}),
            "invalid_type",
        ),
        (
            "/locks/x",
            json!({"owner": "a", "ttl_seconds": 30, "lock_delay_seconds": null}),
            "invalid_type",
        ),
        (
            "/locks/x",
            json!({"owner": "a", "ttl_seconds": 30, "mode": "shared", "lock_delay_seconds": 5}),
            "invalid_value",
        ),
        (
            "/elections/x/campaign",
            json!({"candidate": "a", "ttl_seconds": 30, "lock_delay_seconds": 1.5}),
            "invalid_type",
        ),
    ] {
        let reply = server.send("POST", path, Some(&body));
        assert_eq!(
            reply.error_codes(),
            [("lock_delay_seconds".to_owned(), expected.to_owned())],
            "{body}"
        );
    }
    let set = server.send(
        "POST",
        "/locks",
        Some(&json!({"owner": "a", "ttl_seconds": 30, "locks": [{"resource": "x"}], "lock_delay_seconds": 5})),
    );
    assert_eq!(
        set.error_codes(),
        [("lock_delay_seconds".to_owned(), "invalid_value".to_owned())]
    );
    server.status("x").assert_problem(404, "not-found");
    assert!(server
        .send(
            "POST",
            "/locks/x",
            Some(
                &json!({"owner": "a", "ttl_seconds": 30, "mode": "shared", "lock_delay_seconds": 0})
            )
        )
        .body["acquired"]
        .as_bool()
        .unwrap());
}

fn a_semaphore_grant_that_runs_out_keeps_its_permits_for_its_lock_delay(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let take = |owner: &str, extra: Value| {
        let mut body = json!({"owner": owner, "ttl_seconds": 1, "limit": 1});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        let reply = server.send("POST", "/semaphores/exports", Some(&body));
        assert_eq!(reply.status, 200, "{reply:?}");
        reply
    };
    let paused = take("paused", json!({"lock_delay_seconds": 2}));
    let expires_ms = timestamp_ms(&paused.body["permit"]["expires_at"]);
    sleep_past(expires_ms, 150);
    let status = server.send("GET", "/semaphores/exports", None);
    status.assert_problem(404, "not-found");
    assert_eq!(
        timestamp_ms(&status.body["available_at"]),
        expires_ms + 2_000
    );
    let refused = take("other", json!({"ttl_seconds": 30}));
    assert_eq!(refused.body["acquired"], false, "{refused:?}");
    assert!((1..=2).contains(&retry_after(&refused)), "{refused:?}");
    let waited = take("other", json!({"ttl_seconds": 30, "wait_seconds": 10}));
    let granted_ms = now_ms();
    assert_eq!(waited.body["acquired"], true, "{waited:?}");
    assert!(granted_ms >= expires_ms + 2_000, "granted inside the delay");
    assert!(
        granted_ms < expires_ms + 3_000,
        "granted {} ms late",
        granted_ms - expires_ms - 2_000
    );
    // A release frees the permits at once, whatever the delay.
    let released = server.send("DELETE", "/semaphores/exports?owner=other", None);
    assert_eq!(released.status, 204);
    let next = take("third", json!({"lock_delay_seconds": 60}));
    assert_eq!(next.body["acquired"], true);
    assert_eq!(
        server
            .send("DELETE", "/semaphores/exports?owner=third", None)
            .status,
        204
    );
    assert_eq!(take("fourth", json!({})).body["acquired"], true);
}
