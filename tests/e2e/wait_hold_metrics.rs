//! `lockd_wait_seconds`, `lockd_hold_seconds` and `lockd_contended_acquires_total` move with real
//! requests: a refusal and a wait behind a holder are contended, the wait is measured from its
//! arrival to its grant, each released hold once from its grant, each lease that ran out once
//! among every instance, for its TTL, and promtool accepts the scrape.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::scrape::{promtool_accepts, scrape, value};
use crate::server::TestServer;

on_both_backends!(
    a_contended_wait_and_its_holds_are_measured,
    a_lease_that_ran_out_is_measured_once_among_the_instances
);

const WAIT_GRANTED: &str = r#"lockd_wait_seconds_count{primitive="lock",outcome="granted"}"#;
const WAIT_GRANTED_FAST: &str =
    r#"lockd_wait_seconds_bucket{primitive="lock",outcome="granted",le="0.25"}"#;
const WAIT_GRANTED_SUM: &str = r#"lockd_wait_seconds_sum{primitive="lock",outcome="granted"}"#;
const HELD: &str = r#"lockd_hold_seconds_count{primitive="lock",outcome="released"}"#;
const HELD_SUM: &str = r#"lockd_hold_seconds_sum{primitive="lock",outcome="released"}"#;
const CONTENDED: &str = r#"lockd_contended_acquires_total{primitive="lock"}"#;

/// Waits until `series` reads `expected` in a scrape, at most 30 s; the scrape then.
fn until_value(server: &TestServer, series: &str, expected: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = scrape(server);
        if value(&text, series) == Some(expected) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{series} never {expected} in:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn a_contended_wait_and_its_holds_are_measured(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    let before = scrape(&server);
    for series in [WAIT_GRANTED, HELD, CONTENDED] {
        assert_eq!(
            value(&before, series),
            Some(0.0),
            "{series} at 0 from the start"
        );
    }

    server.acquire("measured", "first", 60).granted();
    // Refused at once: contended, but it did not ask to wait, so no wait is measured.
    let refused = server.acquire("measured", "impatient", 60);
    assert_eq!(refused.body["acquired"], false, "{refused:?}");

    let waiter = {
        let server = Arc::clone(&server);
        std::thread::spawn(move || {
            server.send(
                "POST",
                "/locks/measured",
                Some(&json!({"owner": "patient", "ttl_seconds": 60, "wait_seconds": 60})),
            )
        })
    };
    // In line (the gauge is read at each scrape), then held there a while longer.
    until_value(&server, "lockd_live_waiters", 1.0);
    let in_line = Duration::from_millis(400);
    std::thread::sleep(in_line);
    assert_eq!(server.release("measured", "first").status, 204);
    let granted = waiter.join().expect("the waiter's thread");
    assert_eq!(granted.body["acquired"], true, "{granted:?}");
    assert_eq!(server.release("measured", "patient").status, 204);

    let text = until_value(&server, HELD, 2.0);
    assert_eq!(value(&text, WAIT_GRANTED), Some(1.0), "one wait: {text}");
    // It waited at least while it was seen in line: above the 0.25 s bucket.
    assert_eq!(value(&text, WAIT_GRANTED_FAST), Some(0.0));
    let waited = value(&text, WAIT_GRANTED_SUM).expect("a sum");
    assert!(
        waited >= in_line.as_secs_f64() && waited < 60.0,
        "waited {waited} s"
    );
    // The first holder held it at least as long as the waiter stood in line.
    let held = value(&text, HELD_SUM).expect("a sum");
    assert!(held >= in_line.as_secs_f64(), "held {held} s in all");
    assert_eq!(
        value(&text, CONTENDED),
        Some(2.0),
        "the refusal and the wait"
    );
    // Nothing else was measured: no other primitive, no timeout.
    for series in [
        r#"lockd_wait_seconds_count{primitive="lock",outcome="timed_out"}"#,
        r#"lockd_wait_seconds_count{primitive="shared_lock",outcome="granted"}"#,
        r#"lockd_hold_seconds_count{primitive="lock",outcome="force-released"}"#,
        r#"lockd_contended_acquires_total{primitive="semaphore"}"#,
    ] {
        assert_eq!(value(&text, series), Some(0.0), "{series}");
    }
    promtool_accepts(&text);
}

const EXPIRED: &str = r#"lockd_hold_seconds_count{primitive="lock",outcome="expired"}"#;
const EXPIRED_SUM: &str = r#"lockd_hold_seconds_sum{primitive="lock",outcome="expired"}"#;
const PERMIT_EXPIRED: &str = r#"lockd_hold_seconds_count{primitive="semaphore",outcome="expired"}"#;

/// A series' value summed over the scrapes of `servers`.
fn total(servers: &[&TestServer], series: &str) -> f64 {
    servers
        .iter()
        .map(|server| value(&scrape(server), series).unwrap_or_default())
        .sum()
}

/// Two instances on one database: a lock whose lease ran out and was taken over through one of
/// them is counted once, by whichever instance took the store's note, held for its TTL; a lock
/// released before it ran out is `released`, through the instance that released it.
fn a_lease_that_ran_out_is_measured_once_among_the_instances(db: TestDatabase) {
    let first = TestServer::start(&db, &[]);
    let second = TestServer::start(&db, &[]);
    let servers = [&first, &second];
    assert_eq!(total(&servers, EXPIRED), 0.0, "at 0 from the start");
    first.acquire("runs-out", "alice", 1).granted();
    second.acquire("released", "bob", 1).granted();
    assert_eq!(second.release("released", "bob").status, 204);
    std::thread::sleep(Duration::from_millis(1_200));
    second.acquire("runs-out", "carol", 60).granted();
    let deadline = Instant::now() + Duration::from_secs(30);
    while total(&servers, EXPIRED) < 1.0 {
        assert!(Instant::now() < deadline, "the expiry was never counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Both count every 5 s: after another round of each, still once in all.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(total(&servers, EXPIRED), 1.0, "once among the instances");
    assert_eq!(total(&servers, EXPIRED_SUM), 1.0, "held for its TTL, 1 s");
    assert_eq!(total(&servers, PERMIT_EXPIRED), 0.0);
    assert_eq!(
        total(&servers, HELD),
        1.0,
        "the released lock, through the instance that released it"
    );
    for server in servers {
        promtool_accepts(&scrape(server));
    }
}
