//! An expiry that nobody saw, recorded by the sweep, on both backends: an exclusive lock, a
//! shared lock's reader, a semaphore's permit and an election's leader, each of a second, with no
//! observer and no later grant. Their history says only `granted` until the sweep deletes the
//! rows (a minute after the end; lockd runs with `--sweep-interval-seconds 1`), then `expired`,
//! once, with that holder's owner and token; the event stream carries the four expiries too.
//! About 65 seconds.

use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::history::{history, ok};
use crate::observe::Observer;
use crate::server::{timestamp_ms, TestServer};

on_both_backends!(an_expiry_nobody_saw_is_recorded_by_the_sweep_once);

/// How long after its end the sweep may delete a lease's row (`SWEEP_GRACE`).
const GRACE_MS: i64 = 60_000;

fn an_expiry_nobody_saw_is_recorded_by_the_sweep_once(db: TestDatabase) {
    let server = TestServer::start(&db, &["--sweep-interval-seconds", "1"]);
    // Every record from now on (an `/events` reader is no observer of a lock).
    let stream = Observer::open(&server, "/events", &[]);
    std::thread::sleep(Duration::from_millis(300));
    let lock = ok(
        &server,
        "POST",
        "/locks/crashed",
        json!({"owner": "x", "ttl_seconds": 1}),
    );
    let reader = ok(
        &server,
        "POST",
        "/locks/doc",
        json!({"owner": "r", "ttl_seconds": 1, "mode": "shared"}),
    );
    let permit = ok(
        &server,
        "POST",
        "/semaphores/pool",
        json!({"owner": "p", "ttl_seconds": 1, "limit": 2}),
    );
    let leader = ok(
        &server,
        "POST",
        "/elections/office/campaign",
        json!({"candidate": "c", "ttl_seconds": 1}),
    );
    let leases = [
        lease("/locks/crashed/history", "lock", "x", &lock["lock"], false),
        lease("/locks/doc/history", "lock", "r", &reader["lock"], true),
        lease(
            "/semaphores/pool/history",
            "semaphore",
            "p",
            &permit["permit"],
            false,
        ),
        lease(
            "/elections/office/history",
            "election",
            "c",
            &leader["leader"],
            false,
        ),
    ];
    // Well after every end, and many sweeps later, but before the grace: only the grants.
    std::thread::sleep(Duration::from_secs(5));
    for Lease {
        path, owner, token, ..
    } in &leases
    {
        let events = records(&server, path);
        assert_eq!(
            events.len(),
            1,
            "{path}: recorded before the sweep: {events:?}"
        );
        assert_eq!(events[0]["event"], "granted", "{path}");
        assert_eq!(events[0]["owner"], *owner, "{path}");
        assert_eq!(events[0]["fencing_token"], *token, "{path}");
    }
    let deadline = Instant::now() + Duration::from_secs(80);
    for Lease {
        path,
        kind,
        owner,
        token,
        shared,
        expires_at,
    } in &leases
    {
        let expired = loop {
            let events = records(&server, path);
            if events.len() == 2 {
                break events[0].clone();
            }
            assert_eq!(events.len(), 1, "{path}: {events:?}");
            assert!(Instant::now() < deadline, "{path}: no expiry: {events:?}");
            std::thread::sleep(Duration::from_millis(250));
        };
        assert_eq!(expired["event"], "expired", "{path}: {expired}");
        assert_eq!(expired["kind"], *kind, "{path}: {expired}");
        assert_eq!(expired["owner"], *owner, "{path}: {expired}");
        assert_eq!(expired["fencing_token"], *token, "{path}: {expired}");
        assert_eq!(expired["shared"], *shared, "{path}: {expired}");
        let at = timestamp_ms(&expired["at"]);
        assert!(
            at >= expires_at + GRACE_MS && at < expires_at + GRACE_MS + 10_000,
            "{path}: recorded {} ms after the end",
            at - expires_at
        );
    }
    // Later sweeps record nothing more.
    std::thread::sleep(Duration::from_secs(3));
    for Lease { path, .. } in &leases {
        assert_eq!(records(&server, path).len(), 2, "{path}");
    }
    // The stream gave the four grants, then the four expiries.
    let mut seen = vec![];
    while seen.len() < 8 {
        let event = stream.next(Duration::from_secs(5));
        seen.push((
            event.data["event"].as_str().unwrap().to_owned(),
            event.data["owner"].as_str().unwrap().to_owned(),
        ));
    }
    let mut expiries: Vec<&str> = seen[4..].iter().map(|(e, _)| e.as_str()).collect();
    expiries.dedup();
    assert_eq!(expiries, ["expired"], "{seen:?}");
    let mut owners: Vec<&str> = seen[4..].iter().map(|(_, o)| o.as_str()).collect();
    owners.sort_unstable();
    assert_eq!(owners, ["c", "p", "r", "x"], "{seen:?}");
}

/// A lease of a second, and where its history is.
struct Lease {
    path: &'static str,
    kind: &'static str,
    owner: &'static str,
    token: i64,
    shared: bool,
    expires_at: i64,
}

fn lease(
    path: &'static str,
    kind: &'static str,
    owner: &'static str,
    granted: &Value,
    shared: bool,
) -> Lease {
    let token = granted["fencing_token"]
        .as_i64()
        .or_else(|| granted["term"].as_i64())
        .unwrap_or_else(|| panic!("{path}: {granted}"));
    Lease {
        path,
        kind,
        owner,
        token,
        shared,
        expires_at: timestamp_ms(&granted["expires_at"]),
    }
}

fn records(server: &TestServer, path: &str) -> Vec<Value> {
    history(server, path)["records"]
        .as_array()
        .unwrap_or_else(|| panic!("{path}"))
        .clone()
}
