//! Semaphores through the real binary, on both backends: the permit arithmetic, the 409s, values,
//! renew and release, listing, the namespaces, waiting in order without barging, and the limit
//! held across two instances sharing one database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::holds::contention_seconds;
use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    semaphore_permits_add_up_to_the_limit,
    semaphore_values_renewals_and_releases,
    semaphore_listing_and_namespaces,
    semaphore_input_is_validated,
    semaphore_waiters_are_served_in_order_without_barging,
    semaphore_limit_holds_across_two_instances,
    a_release_on_the_other_instance_serves_a_permit_waiter_there,
);

fn acquire(server: &TestServer, name: &str, body: Value) -> Reply {
    server.send("POST", &format!("/semaphores/{name}"), Some(&body))
}

fn permit(reply: &Reply) -> &Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    &reply.body["permit"]
}

fn semaphore_permits_add_up_to_the_limit(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = acquire(
        &server,
        "pool",
        json!({"owner": "a", "ttl_seconds": 30, "limit": 3, "permits": 2}),
    );
    let a = permit(&first).clone();
    assert_eq!(a["name"], "pool");
    assert_eq!(a["owner"], "a");
    assert_eq!(
        (a["permits"].as_i64(), a["limit"].as_i64()),
        (Some(2), Some(3))
    );
    assert_eq!(
        timestamp_ms(&a["expires_at"]) - timestamp_ms(&a["acquired_at"]),
        30_000
    );
    assert!(a.get("value").is_none(), "no value, no member: {a}");
    let refused = acquire(
        &server,
        "pool",
        json!({"owner": "b", "ttl_seconds": 30, "limit": 3, "permits": 2}),
    );
    assert_eq!(refused.status, 200);
    assert_eq!(
        refused.body,
        json!({"acquired": false, "name": "pool", "limit": 3, "available": 1})
    );
    assert!(
        refused.header("retry-after").is_none(),
        "no wait, no Retry-After"
    );
    let b = permit(&acquire(
        &server,
        "pool",
        json!({"owner": "b", "ttl_seconds": 30, "limit": 3}),
    ))
    .clone();
    assert_eq!(b["permits"], 1, "permits default to 1");
    assert!(b["fencing_token"].as_i64() > a["fencing_token"].as_i64());

    // Another limit while holders are live; other permits for an owner that holds some.
    let mismatch = acquire(
        &server,
        "pool",
        json!({"owner": "c", "ttl_seconds": 30, "limit": 4}),
    );
    mismatch.assert_problem(409, "/problems/limit-mismatch");
    assert_eq!(mismatch.body["limit"], 3);
    let permits = acquire(
        &server,
        "pool",
        json!({"owner": "a", "ttl_seconds": 30, "limit": 3, "permits": 1}),
    );
    permits.assert_problem(409, "/problems/permits-mismatch");
    assert_eq!(permits.body["permits"], 2);
    // The same owner with the same permits: re-granted, token kept.
    let again = permit(&acquire(
        &server,
        "pool",
        json!({"owner": "a", "ttl_seconds": 60, "limit": 3, "permits": 2}),
    ))
    .clone();
    assert_eq!(again["fencing_token"], a["fencing_token"]);
    assert_eq!(
        timestamp_ms(&again["expires_at"]) - timestamp_ms(&again["acquired_at"]),
        60_000
    );

    let status = server.send("GET", "/semaphores/pool", None);
    assert_eq!(status.status, 200, "{status:?}");
    assert_eq!(status.body["limit"], 3);
    assert_eq!(status.body["in_use"], 3);
    assert_eq!(status.body["available"], 0);
    assert_eq!(status.body["waiting"], 0);
    let holders: Vec<&str> = status.body["holders"]
        .as_array()
        .expect("holders")
        .iter()
        .map(|h| h["owner"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(holders, ["a", "b"], "holders in token order");
    server
        .send("GET", "/semaphores/never", None)
        .assert_problem(404, "not-found");
}

fn semaphore_values_renewals_and_releases(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let granted = acquire(
        &server,
        "leader",
        json!({"owner": "a", "ttl_seconds": 30, "limit": 1, "value": {"host": "10.0.0.7", "port": 8443}}),
    );
    let a = permit(&granted).clone();
    assert_eq!(a["value"]["host"], "10.0.0.7");
    let renew = |owner: &str, body: Value| {
        let mut body = body;
        body["owner"] = json!(owner);
        server.send("POST", "/semaphores/leader/renew", Some(&body))
    };
    let kept = renew("a", json!({"ttl_seconds": 60}));
    assert_eq!(kept.status, 200, "{kept:?}");
    assert_eq!(
        kept.body["value"], a["value"],
        "a renew without value keeps it"
    );
    assert_eq!(kept.body["fencing_token"], a["fencing_token"]);
    assert_eq!(kept.body["acquired_at"], a["acquired_at"]);
    let replaced = renew("a", json!({"ttl_seconds": 60, "value": [1, "two"]}));
    assert_eq!(replaced.body["value"], json!([1, "two"]));
    renew("b", json!({"ttl_seconds": 60})).assert_problem(404, "not-found");
    let status = server.send("GET", "/semaphores/leader", None);
    assert_eq!(status.body["holders"][0]["value"], json!([1, "two"]));

    // Release by ?owner= or by body; a second release finds nothing.
    server
        .send("DELETE", "/semaphores/leader?owner=b", None)
        .assert_problem(404, "not-found");
    let released = server.send("DELETE", "/semaphores/leader?owner=a", None);
    assert_eq!(released.status, 204, "{released:?}");
    server
        .send("DELETE", "/semaphores/leader", Some(&json!({"owner": "a"})))
        .assert_problem(404, "not-found");
    server
        .send("GET", "/semaphores/leader", None)
        .assert_problem(404, "not-found");
    // Free again: another limit is fine now, and the next grant has a larger token.
    let next = permit(&acquire(
        &server,
        "leader",
        json!({"owner": "c", "ttl_seconds": 1, "limit": 5}),
    ))
    .clone();
    assert!(next["fencing_token"].as_i64() > a["fencing_token"].as_i64());
    // A grant that runs out frees its permits.
    std::thread::sleep(Duration::from_millis(1_300));
    server
        .send("GET", "/semaphores/leader", None)
        .assert_problem(404, "not-found");
    renew("c", json!({"ttl_seconds": 60})).assert_problem(404, "not-found");
    let after = permit(&acquire(
        &server,
        "leader",
        json!({"owner": "d", "ttl_seconds": 30, "limit": 2}),
    ))
    .clone();
    assert!(after["fencing_token"].as_i64() > next["fencing_token"].as_i64());
}

fn semaphore_listing_and_namespaces(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    // Lock `x` and semaphore `x` are unrelated.
    server.acquire("x", "locker", 30).granted();
    permit(&acquire(
        &server,
        "x",
        json!({"owner": "sem", "ttl_seconds": 30, "limit": 1}),
    ));
    assert_eq!(server.status("x").body["owner"], "locker");
    for name in ["job:b", "job:a", "job:c", "other"] {
        permit(&acquire(
            &server,
            name,
            json!({"owner": "w", "ttl_seconds": 30, "limit": 2}),
        ));
    }
    let first = server.send("GET", "/semaphores?prefix=job%3A&limit=2", None);
    assert_eq!(first.status, 200, "{first:?}");
    let names = |reply: &Reply| -> Vec<String> {
        reply.body["semaphores"]
            .as_array()
            .expect("semaphores")
            .iter()
            .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(names(&first), ["job:a", "job:b"]);
    let cursor = first.body["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let second = server.send(
        "GET",
        &format!("/semaphores?prefix=job%3A&limit=2&cursor={cursor}"),
        None,
    );
    assert_eq!(names(&second), ["job:c"]);
    assert!(second.body.get("next_cursor").is_none());
    let all = server.send("GET", "/semaphores", None);
    assert_eq!(names(&all), ["job:a", "job:b", "job:c", "other", "x"]);
    assert_eq!(all.body["semaphores"][0]["holders"][0]["owner"], "w");
    server
        .send("GET", "/semaphores?prefx=job", None)
        .assert_problem(422, "validation-failed");
    // The locks' listing shows no semaphore.
    let locks = server.send("GET", "/locks", None);
    assert_eq!(locks.body["locks"].as_array().map(Vec::len), Some(1));
}

fn semaphore_input_is_validated(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let codes = |body: Value| acquire(&server, "s", body).error_codes();
    assert_eq!(
        codes(json!({"owner": "o", "ttl_seconds": 30})),
        [("limit".to_owned(), "required".to_owned())]
    );
    assert_eq!(
        codes(json!({"owner": "o", "ttl_seconds": 30, "limit": 10001})),
        [("limit".to_owned(), "out_of_range".to_owned())]
    );
    assert_eq!(
        codes(json!({"owner": "o", "ttl_seconds": 30, "limit": 2, "permits": 3})),
        [("permits".to_owned(), "out_of_range".to_owned())]
    );
    assert_eq!(
        codes(
            json!({"owner": "", "ttl_seconds": 0, "limit": "2", "permits": 0, "wait_seconds": -1})
        ),
        [
            ("owner".to_owned(), "empty".to_owned()),
            ("ttl_seconds".to_owned(), "out_of_range".to_owned()),
            ("limit".to_owned(), "invalid_type".to_owned()),
            ("permits".to_owned(), "out_of_range".to_owned()),
            ("wait_seconds".to_owned(), "out_of_range".to_owned()),
        ]
    );
    let big = "x".repeat(4_095);
    assert_eq!(
        codes(json!({"owner": "o", "ttl_seconds": 30, "limit": 2, "value": big})),
        [("value".to_owned(), "too_long".to_owned())]
    );
    let fits = "x".repeat(4_094);
    permit(&acquire(
        &server,
        "s",
        json!({"owner": "o", "ttl_seconds": 30, "limit": 2, "value": fits}),
    ));
    server
        .send_raw(
            "POST",
            "/semaphores/%00",
            Some("application/json"),
            br#"{"owner":"o","ttl_seconds":5,"limit":1}"#,
        )
        .assert_problem(422, "validation-failed");
    server
        .send_raw("POST", "/semaphores/s", Some("text/plain"), b"x")
        .assert_problem(415, "unsupported-media-type");
    server
        .send_raw("POST", "/semaphores/s", Some("application/json"), b"[]")
        .assert_problem(400, "bad-request");
    server
        .send("PUT", "/semaphores/s", None)
        .assert_problem(405, "method-not-allowed");
    // Nothing above changed the semaphore.
    let status = server.send("GET", "/semaphores/s", None);
    assert_eq!(status.body["in_use"], 1, "{status:?}");
}

fn semaphore_waiters_are_served_in_order_without_barging(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    permit(&acquire(
        &server,
        "q",
        json!({"owner": "holder", "ttl_seconds": 60, "limit": 3, "permits": 2}),
    ));
    let waiting =
        |server: &TestServer| server.send("GET", "/semaphores/q", None).body["waiting"].as_i64();
    let until_waiting = |n: i64| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while waiting(&server) != Some(n) {
            assert!(Instant::now() < deadline, "expected {n} waiting");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let spawn = |owner: &'static str, permits: i64| {
        let server = Arc::clone(&server);
        std::thread::spawn(move || {
            acquire(
                &server,
                "q",
                json!({"owner": owner, "ttl_seconds": 60, "limit": 3, "permits": permits, "wait_seconds": 20}),
            )
        })
    };
    let big = spawn("big", 3);
    until_waiting(1);
    let small = spawn("small", 1);
    until_waiting(2);
    // One permit is free, but two wait: neither a later waiter nor an acquire without a wait
    // takes it.
    let eager = acquire(
        &server,
        "q",
        json!({"owner": "eager", "ttl_seconds": 60, "limit": 3}),
    );
    assert_eq!(eager.body["acquired"], false, "{eager:?}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !small.is_finished(),
        "the 1-permit waiter overtook the 3-permit head"
    );
    assert_eq!(
        server
            .send("DELETE", "/semaphores/q?owner=holder", None)
            .status,
        204
    );
    let big = big.join().expect("big");
    assert_eq!(permit(&big)["permits"], 3);
    assert!(!small.is_finished());
    assert_eq!(
        server
            .send("DELETE", "/semaphores/q?owner=big", None)
            .status,
        204
    );
    permit(&small.join().expect("small"));
    // A wait that ends without permits says so, with Retry-After.
    permit(&acquire(
        &server,
        "full",
        json!({"owner": "h", "ttl_seconds": 30, "limit": 1}),
    ));
    let timed_out = acquire(
        &server,
        "full",
        json!({"owner": "late", "ttl_seconds": 30, "limit": 1, "wait_seconds": 1}),
    );
    assert_eq!(
        timed_out.body,
        json!({"acquired": false, "name": "full", "limit": 1, "available": 0})
    );
    let retry: u64 = timed_out
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=30).contains(&retry), "{retry}");
}

/// Clients of two instances cycle acquire/release of 1 permit of limit 3 on one semaphore. What
/// each saw of its grant (answered at `granted`, released from `releasing`) lies inside its real
/// hold, so more than 3 such intervals overlapping would prove more than 3 real holders.
fn semaphore_limit_holds_across_two_instances(db: TestDatabase) {
    let instances = [
        Arc::new(TestServer::start(&db, &[])),
        Arc::new(TestServer::start(&db, &[])),
    ];
    let seconds = contention_seconds().min(5);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..12)
        .map(|client| {
            let server = Arc::clone(&instances[client % 2]);
            std::thread::spawn(move || {
                let owner = format!("client-{client}");
                let mut holds = Vec::new();
                while Instant::now() < deadline {
                    let reply = acquire(
                        &server,
                        "shared",
                        json!({"owner": owner, "ttl_seconds": 30, "limit": 3}),
                    );
                    assert_eq!(reply.status, 200, "{reply:?}");
                    if reply.body["acquired"] != true {
                        continue;
                    }
                    let granted = Instant::now();
                    let token = reply.body["permit"]["fencing_token"]
                        .as_i64()
                        .expect("token");
                    std::thread::sleep(Duration::from_millis(2));
                    let releasing = Instant::now();
                    let released =
                        server.send("DELETE", &format!("/semaphores/shared?owner={owner}"), None);
                    assert_eq!(released.status, 204, "{released:?}");
                    holds.push((granted, releasing, token));
                }
                holds
            })
        })
        .collect();
    let holds: Vec<(Instant, Instant, i64)> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("worker"))
        .collect();
    assert!(
        holds.len() > 20,
        "only {} grants in {seconds} s",
        holds.len()
    );
    let mut tokens: Vec<i64> = holds.iter().map(|h| h.2).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(
        tokens.len(),
        holds.len(),
        "a fencing token was issued twice"
    );
    let mut events: Vec<(Instant, i32)> = holds
        .iter()
        .flat_map(|(granted, releasing, _)| [(*granted, 1), (*releasing, -1)])
        .collect();
    // At equal instants, ends first: touching intervals do not overlap.
    events.sort_by_key(|(at, change)| (*at, *change));
    let (mut now, mut most) = (0, 0);
    for (_, change) in events {
        now += change;
        most = most.max(now);
    }
    assert!(
        most <= 3,
        "{most} holders at once on a semaphore of limit 3"
    );
    eprintln!("{} grants, at most {most} held at once", holds.len());
}

/// A waiter for permits on one instance is served when a holder releases on the other: pushed by
/// PostgreSQL's hints (each hand-over well under the 200 ms a poll would take), polled on SQLite.
fn a_release_on_the_other_instance_serves_a_permit_waiter_there(db: TestDatabase) {
    let first = TestServer::start(&db, &[]);
    let second = Arc::new(TestServer::start(&db, &[]));
    let mut handovers = Vec::new();
    for round in 0..8 {
        let name = format!("across-{round}");
        permit(&acquire(
            &first,
            &name,
            json!({"owner": "holder", "ttl_seconds": 60, "limit": 1}),
        ));
        let waiter = {
            let (second, name) = (Arc::clone(&second), name.clone());
            std::thread::spawn(move || {
                let body =
                    json!({"owner": "waiter", "ttl_seconds": 60, "limit": 1, "wait_seconds": 20});
                (acquire(&second, &name, body), Instant::now())
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while second
            .send("GET", &format!("/semaphores/{name}"), None)
            .body["waiting"]
            != 1
        {
            assert!(Instant::now() < deadline, "the waiter never queued");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Past the first look of the waiter's queue, so that only a hint (or a poll) wakes it.
        std::thread::sleep(Duration::from_millis(50));
        let released_at = Instant::now();
        let released = first.send("DELETE", &format!("/semaphores/{name}?owner=holder"), None);
        assert_eq!(released.status, 204, "{released:?}");
        let (reply, granted_at) = waiter.join().expect("waiter");
        assert_eq!(permit(&reply)["owner"], "waiter");
        handovers.push(granted_at - released_at);
    }
    handovers.sort();
    let (median, worst) = (
        handovers[handovers.len() / 2],
        handovers[handovers.len() - 1],
    );
    eprintln!(
        "release on one instance -> permit granted on the other: median {median:?}, max {worst:?}"
    );
    if db.is_postgres() {
        assert!(
            worst < Duration::from_millis(150),
            "pushed, not polled: {handovers:?}"
        );
    } else {
        assert!(worst < Duration::from_millis(500), "{handovers:?}");
    }
}
