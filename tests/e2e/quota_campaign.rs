//! A waiting campaign's answer describes one instant (issue #33): a candidate whose wait ends
//! while it is itself the sitting leader (elected meanwhile through another instance) is told
//! it leads, `elected: true` with that leader's term (the sitting leader campaigning again is a
//! re-grant), never `elected: false` naming itself as the leader. Two instances on one database
//! (one SQLite file, one PostgreSQL database); the one the candidate waits on is paused
//! (SIGSTOP) while its wait runs out and the office changes hands through the other. Run for a
//! tenant with `max_live_leases` and for one without.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::quota_grants::{acme, start_acme};
use crate::server::{Reply, TestServer};

on_both_backends!(
    a_campaign_whose_wait_ends_while_it_leads_is_elected_with_a_live_lease_quota,
    a_campaign_whose_wait_ends_while_it_leads_is_elected_without_a_lease_quota,
);

fn a_campaign_whose_wait_ends_while_it_leads_is_elected_with_a_live_lease_quota(db: TestDatabase) {
    campaign_across_a_pause(&db, "max_live_leases=5");
}

fn a_campaign_whose_wait_ends_while_it_leads_is_elected_without_a_lease_quota(db: TestDatabase) {
    campaign_across_a_pause(&db, "max_ttl_seconds=3600");
}

fn signal(server: &TestServer, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &server.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {}", server.pid());
}

/// Sends SIGCONT when dropped, so that a failing assertion never leaves the instance stopped
/// (its drop then kills it as usual).
struct Paused<'a>(&'a TestServer);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.0.pid().to_string()])
            .status();
    }
}

fn campaign(server: &TestServer, candidate: &str, extra: Value) -> Reply {
    let mut body = json!({"candidate": candidate, "ttl_seconds": 30});
    body.as_object_mut()
        .expect("object")
        .extend(extra.as_object().expect("object").clone());
    acme(
        &server.client(),
        "POST",
        "/elections/e/campaign",
        Some(&body),
    )
}

fn elected(reply: &Reply, candidate: &str) -> i64 {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["elected"], true, "{reply:?}");
    assert_eq!(reply.body["leader"]["candidate"], candidate, "{reply:?}");
    reply.body["leader"]["term"].as_i64().expect("term")
}

/// The leader of `e` as `server` reads it: candidate and term.
fn leader(server: &TestServer) -> (String, i64) {
    let reply = acme(&server.client(), "GET", "/elections/e", None);
    assert_eq!(reply.status, 200, "{reply:?}");
    (
        reply.body["candidate"]
            .as_str()
            .expect("candidate")
            .to_owned(),
        reply.body["term"].as_i64().expect("term"),
    )
}

/// Waits until `server` has `count` waiting campaigns for `e`.
fn until_waiting(server: &TestServer, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = acme(&server.client(), "GET", "/elections?prefix=e", None);
        let waiting = reply.body["elections"]
            .as_array()
            .and_then(|list| list.iter().find(|election| election["election"] == "e"))
            .and_then(|election| election["waiting"].as_u64());
        if waiting == Some(count) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never {count} waiting: {reply:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn campaign_across_a_pause(db: &TestDatabase, limits: &str) {
    // B does no writes of its own while it waits (no sweep, no history to index), so that it
    // is not stopped holding a row another write needs.
    let (a, _dir_a) = start_acme(db, limits, &[]);
    let quiet = [
        "--sweep-interval-seconds",
        "3600",
        "--history-retention-hours",
        "0",
    ];
    let (b, _dir_b) = start_acme(db, limits, &quiet);
    let b = Arc::new(b);

    // x leads, through A.
    let first = elected(&campaign(&a, "x", json!({})), "x");
    // o0 waits in line through B; its wait (2 s) runs out while B is stopped (3 s).
    let waiting = {
        let b = Arc::clone(&b);
        std::thread::spawn(move || {
            let reply = campaign(&b, "o0", json!({"wait_seconds": 2}));
            (reply, Instant::now())
        })
    };
    until_waiting(&b, 1);
    // Its queue's first look at the office is over well before this.
    std::thread::sleep(Duration::from_millis(300));
    until_waiting(&b, 1);
    signal(&b, "STOP");
    let paused = Paused(&b);
    let stopped = Instant::now();

    // Through A, while B sleeps: x resigns and o0 is elected.
    let resigned = acme(
        &a.client(),
        "DELETE",
        "/elections/e/leader?candidate=x",
        None,
    );
    assert_eq!(resigned.status, 204, "{resigned:?}");
    let reply = campaign(&a, "o0", json!({}));
    assert_eq!(
        reply.status,
        200,
        "{reply:?}\nA's stderr: {:#?}",
        a.drain_stderr()
    );
    let term = elected(&reply, "o0");
    assert!(term > first, "term {term} after {first}");

    // B wakes up past o0's wait.
    std::thread::sleep(Duration::from_secs(3).saturating_sub(stopped.elapsed()));
    let resumed = Instant::now();
    signal(&b, "CONT");
    drop(paused);
    let (reply, answered) = waiting.join().expect("o0's campaign through B");
    assert!(
        answered >= resumed,
        "B answered before it was stopped, the test proves nothing: {reply:?}"
    );
    // One instant: o0 leads, so o0 is elected (the re-grant of its lease, its term kept).
    assert!(
        !(reply.body["elected"] == false && reply.body["leader"]["candidate"] == "o0"),
        "o0 was told it is not elected, and that o0 leads: {reply:?}"
    );
    assert_eq!(elected(&reply, "o0"), term, "{reply:?}");

    // One leader, seen alike by both instances; the term never went down.
    assert_eq!(leader(&a), ("o0".to_owned(), term));
    assert_eq!(leader(&b), ("o0".to_owned(), term));
    let listing = acme(&a.client(), "GET", "/elections", None);
    let elections = listing.body["elections"].as_array().expect("elections");
    assert_eq!(elections.len(), 1, "{listing:?}");
    assert_eq!(elections[0]["candidate"], "o0", "{listing:?}");
    assert_eq!(elections[0]["term"], term, "{listing:?}");
}
