//! An expiry an observer saw of a shared lock's reader or of a semaphore's grant is in the
//! history at once (not a minute later at the sweep, nor at the next grant), once, through the
//! real binary on both backends; a grant in its lock-delay keeps its permits until the delay is
//! over.

use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::history::{history, ok, step, story, SOON};
use crate::observe::Observer;
use crate::server::TestServer;

on_both_backends!(
    an_expired_reader_an_observer_saw_is_recorded_at_once,
    an_expired_permit_an_observer_saw_is_recorded_at_once,
);

/// Waits for the observer's `expired` event of `owner`.
fn expired_seen(observer: &Observer, owner: &str) {
    let deadline = Instant::now() + SOON;
    loop {
        let event = observer.next_any(SOON);
        if event.event == "expired" && event.data.to_string().contains(owner) {
            return;
        }
        assert!(Instant::now() < deadline, "no expired event of {owner}");
    }
}

/// Polls `path`'s story until it is `expected`, for [`SOON`].
fn story_becomes(server: &TestServer, path: &str, expected: &[(String, String, i64)]) {
    let deadline = Instant::now() + SOON;
    loop {
        let steps = story(&history(server, path));
        if steps == expected {
            return;
        }
        assert!(Instant::now() < deadline, "{path}: {steps:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn an_expired_reader_an_observer_saw_is_recorded_at_once(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let observer = Observer::open(&server, "/locks/doc/observe", &[]);
    let share = |owner: &str, ttl: i64| {
        ok(
            &server,
            "POST",
            "/locks/doc",
            json!({"owner": owner, "ttl_seconds": ttl, "mode": "shared"}),
        )["lock"]["fencing_token"]
            .as_i64()
            .unwrap()
    };
    let short = share("r1", 1);
    let long = share("r2", 30);
    expired_seen(&observer, "r1");
    let path = "/locks/doc/history";
    story_becomes(
        &server,
        path,
        &[
            step("granted", "r1", short),
            step("granted", "r2", long),
            step("expired", "r1", short),
        ],
    );
    // r2 still shares the lock; the next reader's grant records no second expiry of r1.
    let status = ok(&server, "GET", "/locks/doc", Value::Null);
    assert_eq!(status["mode"], "shared", "{status}");
    let holders: Vec<&str> = status["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["owner"].as_str().unwrap())
        .collect();
    assert_eq!(holders, vec!["r2"]);
    let next = share("r3", 30);
    assert_eq!(
        story(&history(&server, path)),
        vec![
            step("granted", "r1", short),
            step("granted", "r2", long),
            step("expired", "r1", short),
            step("granted", "r3", next),
        ]
    );
}

fn an_expired_permit_an_observer_saw_is_recorded_at_once(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let observer = Observer::open(&server, "/semaphores/pool/observe", &[]);
    let take = |owner: &str, ttl: i64, lock_delay: i64| {
        let body = json!({"owner": owner, "ttl_seconds": ttl, "limit": 3, "permits": 1,
                          "lock_delay_seconds": lock_delay});
        ok(&server, "POST", "/semaphores/pool", body)["permit"]["fencing_token"]
            .as_i64()
            .unwrap()
    };
    let short = take("p1", 1, 0);
    let long = take("p2", 30, 0);
    let delayed = take("p3", 1, 60);
    expired_seen(&observer, "p1");
    let path = "/semaphores/pool/history";
    story_becomes(
        &server,
        path,
        &[
            step("granted", "p1", short),
            step("granted", "p2", long),
            step("granted", "p3", delayed),
            step("expired", "p1", short),
        ],
    );
    // p3 ran out too, but its lock-delay keeps its permit taken: not ended, not recorded yet.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(
        story(&history(&server, path)).len(),
        4,
        "{:?}",
        story(&history(&server, path))
    );
    // One permit is free (p1's); p3's still delays others.
    let next = take("p4", 30, 0);
    let refused = server.send(
        "POST",
        "/semaphores/pool",
        Some(&json!({"owner": "p5", "ttl_seconds": 30, "limit": 3, "permits": 1})),
    );
    assert_eq!(refused.status, 200, "{refused:?}");
    assert_eq!(refused.body["acquired"], false, "{refused:?}");
    assert_eq!(
        story(&history(&server, path)),
        vec![
            step("granted", "p1", short),
            step("granted", "p2", long),
            step("granted", "p3", delayed),
            step("expired", "p1", short),
            step("granted", "p4", next),
        ]
    );
}
