//! PostgreSQL failed over to its standby (`kill -9` of the primary, `pg_ctl promote` of the
//! standby) with two lockd instances whose URL names both hosts
//! (`target_session_attrs=read-write`).
//! - Synchronous replication, under load: every answer is a 2xx or a 503 with `Retry-After`;
//!   grants succeed again within 2 s of the promotion; every lease acknowledged before the kill
//!   is still held with its token; no token is given to two grants; `/readyz` fails during the
//!   gap and passes after; a release through one instance wakes a waiter on the other (`LISTEN`).
//! - Asynchronous replication, to a standby cut off from the primary: the grants it never
//!   received are lost (documented), but the first grant on the new timeline is past the margin,
//!   so no token the old primary issued is issued again.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::load_cycles::{
    a_release_wakes_a_waiter_on_the_other, first_grant_after, grant_when_back,
    two_instances_holding_four, unexpected, Load,
};
use crate::pg_replication::{Pair, Replication};
use crate::server::TestServer;

/// Grants must succeed again this soon after the promotion.
const RECOVERY_WITHIN: Duration = Duration::from_secs(2);
/// How long the primary is gone before the standby is promoted, in the synchronous test: twice
/// the pool's wait for a connection (`--pool-timeout-seconds`, 2 s), so that a `/readyz` asked in
/// the gap has waited its 2 s out and failed before the promotion, however late its thread runs.
/// (At 2 s, one probe could span the whole gap and pass when the promotion landed.)
const DETECTION: Duration = Duration::from_secs(4);
/// Load threads per instance.
const CLIENTS: usize = 3;
/// What the first connection on a new timeline adds to the tokens.
const TOKEN_MARGIN: i64 = lock_store_diesel::POSTGRES_TIMELINE_TOKEN_MARGIN;

#[test]
fn a_synchronous_failover_under_load_loses_no_grant_and_gives_no_token_twice() {
    let Some(pair) = Pair::start(Replication::Synchronous) else {
        return;
    };
    let (servers, held) = two_instances_holding_four(&pair.url());
    let readiness = Readiness::watch(&servers[0]);
    let load = Load::start((0..CLIENTS * 2).map(|n| servers[n % 2].client()).collect());
    std::thread::sleep(Duration::from_millis(500));

    let killed = pair.kill_primary();
    // A failover manager takes a while to decide the primary is gone (Patroni: its TTL).
    std::thread::sleep(DETECTION);
    let promoted = pair.promote();
    std::thread::sleep(RECOVERY_WITHIN + Duration::from_millis(500));
    let answers = load.stop();
    let ready = readiness.stop();

    let bad = unexpected(&answers);
    assert!(bad.is_empty(), "answers that are not 2xx or 503: {bad:?}");
    let first_grant = first_grant_after(&answers, promoted).expect("a grant after the promotion");
    let refused = answers.iter().filter(|a| a.what.starts_with('5')).count();
    let slowest = answers.iter().map(|a| a.answered - a.sent).max();
    let unready = ready.iter().filter(|(at, ok)| *at > killed && !ok).count();
    // When /readyz, asked after the promotion, first passed.
    let ready_again = ready
        .iter()
        .filter(|(at, ok)| *at > promoted && *ok)
        .map(|(at, _)| *at - promoted)
        .next();
    eprintln!(
        "synchronous failover: promoted {:?} after the kill; first grant {first_grant:?} after \
         the promotion; {refused} answers 503 of {}; slowest answer {slowest:?}; /readyz failed \
         {unready} times, and passed again {ready_again:?} after the promotion",
        promoted - killed,
        answers.len()
    );
    assert!(first_grant <= RECOVERY_WITHIN, "{first_grant:?}");

    // No acknowledged grant was lost: each held lease is still held, with its token.
    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        for server in &servers {
            assert_eq!(&status_when_back(server, resource).body, lock, "{resource}");
        }
    }
    // No token was given to two grants (the same token twice is the same owner's re-grant of
    // the same resource, after a release answered 503 that had not happened).
    let mut tokens: BTreeMap<i64, &str> = BTreeMap::new();
    for (resource, token) in answers.iter().filter_map(|a| a.granted.as_ref()) {
        let first = *tokens.entry(*token).or_insert(resource);
        assert_eq!(first, resource, "token {token} given to two resources");
    }
    // The LISTEN connection followed the failover too.
    a_release_wakes_a_waiter_on_the_other(&servers, "held:0", "holder");
    // /readyz reported the outage, and the recovery.
    assert!(
        unready > 0,
        "/readyz never failed during the failover: {ready:?}"
    );
    assert!(
        ready.last().is_some_and(|(_, ok)| *ok),
        "/readyz still fails after the promotion"
    );
    for server in &servers {
        let stderr = server.drain_stderr().join("\n");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_failover_to_a_standby_behind_may_lose_grants_but_gives_no_token_twice() {
    let Some(pair) = Pair::start(Replication::Asynchronous) else {
        return;
    };
    let servers = [
        TestServer::start_on(&pair.url(), &[]),
        TestServer::start_on(&pair.url(), &[]),
    ];
    let kept: Vec<Value> = (0..2)
        .map(|i| {
            servers[i]
                .acquire(&format!("kept:{i}"), "holder", 300)
                .granted()
                .clone()
        })
        .collect();
    pair.wait_replayed();
    refuses_to_start_on(&pair.standby_url());
    pair.cut_standby();
    // Acknowledged by the primary, never sent: far more tokens than the 32 a sequence logs
    // ahead, so that the standby's sequence is behind the last token issued.
    let lost: Vec<Value> = (0..2)
        .map(|i| {
            servers[i]
                .acquire(&format!("lost:{i}"), "holder", 300)
                .granted()
                .clone()
        })
        .collect();
    let mut issued = 0;
    for _ in 0..100 {
        issued = issued.max(servers[0].acquire("lost:cycled", "cycler", 30).token());
        assert_eq!(servers[0].release("lost:cycled", "cycler").status, 204);
    }

    let killed = pair.kill_primary();
    let promoted = pair.promote();
    let first = grant_when_back(
        &servers[1],
        "after:0",
        "after",
        None,
        Duration::from_secs(10),
    )
    .token();
    let granted_at = Instant::now();
    eprintln!(
        "failover to a standby behind: promoted {:?} after the kill; first grant {:?} after the \
         promotion, token {first} (the old primary's last: {issued})",
        promoted - killed,
        granted_at - promoted
    );
    assert!(
        first > issued + TOKEN_MARGIN - 1_000,
        "{first} after {issued}"
    );

    for (i, lock) in kept.iter().enumerate() {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(
            &status_when_back(&servers[i], resource).body,
            lock,
            "{resource}"
        );
    }
    // The lost leases are gone: another owner is granted them, with a larger token than any
    // the old primary gave.
    for (i, lock) in lost.iter().enumerate() {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(
            status_when_back(&servers[i], resource).status,
            404,
            "{resource} survived"
        );
        let again = servers[1 - i].acquire(resource, "second", 30).token();
        assert!(again > issued, "{resource}: {again} after {issued}");
    }
    let log = servers
        .iter()
        .flat_map(TestServer::drain_stderr)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        log.contains("new PostgreSQL timeline"),
        "the move of the tokens is logged: {log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

/// lockd started on a standby alone exits non-zero, saying why: it writes only on a primary.
fn refuses_to_start_on(url: &str) {
    let output = std::process::Command::new(crate::server::lockd_binary())
        .args(["--bind", "127.0.0.1:0", "--startup-timeout-seconds", "1"])
        .args(["--database-url", url])
        .env_remove("RUST_LOG")
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run lockd");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "lockd started on a standby: {stderr}"
    );
    assert!(
        stderr.contains("read-only") || stderr.contains("standby"),
        "{stderr}"
    );
}

/// The status of `resource`, asked again while the instance answers 503 (its connections to
/// the old primary are found broken one by one).
fn status_when_back(server: &TestServer, resource: &str) -> crate::server::Reply {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = server.status(resource);
        if reply.status != 503 {
            return reply;
        }
        assert!(reply.header("retry-after").is_some(), "{reply:?}");
        assert!(
            Instant::now() < deadline,
            "still 503 10 s after the failover"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `GET /readyz` every 50 ms: when it was sent, and whether it passed.
struct Readiness {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<(Instant, bool)>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Readiness {
    fn watch(server: &TestServer) -> Self {
        let client = server.client();
        let stop = Arc::new(AtomicBool::new(false));
        let seen: Arc<Mutex<Vec<(Instant, bool)>>> = Arc::default();
        let thread = {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    let ok = client
                        .send("GET", "/readyz", None)
                        .is_ok_and(|r| r.status == 200);
                    seen.lock().expect("seen").push((sent, ok));
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        Self { stop, seen, thread }
    }

    fn stop(self) -> Vec<(Instant, bool)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the readiness thread");
        std::mem::take(&mut *self.seen.lock().expect("seen"))
    }
}
