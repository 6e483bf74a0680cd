//! `max_live_leases` counts every grant that makes a new live lease, at the moment it is made
//! (issue #33): a waiting acquire admitted on arrival whose grant would go over the limit when
//! its turn comes stays queued, in its place, and is answered 429 `/problems/quota-exceeded` if
//! its wait ends while the quota holds it back; a place freed by one of the tenant's releases
//! is given to the next waiter in queue order. On both backends, through the real binary:
//!
//! - a burst of parallel waiting acquires of free names, for each kind of lease (exclusive,
//!   shared, semaphore permits, sets of locks, campaigns), grants exactly what the limit allows;
//! - the waiters of a semaphore, and the readers waiting for a writer, that all fit once the
//!   holder releases are granted only up to the limit, first come first served;
//! - two instances on one database go over by at most one grant per other instance (the
//!   documented bound).

use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::quotas::assert_over;
use crate::server::{Client, NoReply, Reply, TestServer};
use crate::tenants::{as_key, write_keys_file};

on_both_backends!(
    a_burst_of_waiting_exclusive_acquires_is_granted_up_to_the_limit,
    a_burst_of_waiting_shared_acquires_is_granted_up_to_the_limit,
    a_burst_of_waiting_permit_acquires_is_granted_up_to_the_limit,
    a_burst_of_waiting_sets_of_locks_is_granted_up_to_the_limit,
    a_burst_of_waiting_campaigns_is_granted_up_to_the_limit,
    semaphore_waiters_replacing_one_holder_are_granted_up_to_the_limit_in_order,
    readers_replacing_a_writer_are_granted_up_to_the_limit_in_order,
    two_instances_go_over_the_limit_by_at_most_one_grant,
);

pub(crate) const ACME: &str = "acme-key-0123456789abcdef";

/// Parallel requests of a burst.
const BURST: usize = 40;

/// A lockd whose only tenant is `acme` (key [`ACME`]) with the limits file line
/// `acme <limits>`, started with `extra` arguments too. Keep the directory while it runs.
pub(crate) fn start_acme(
    db: &TestDatabase,
    limits: &str,
    extra: &[&str],
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = write_keys_file(&dir, &[("acme", ACME, false)]);
    let limits_file = dir.path().join("limits");
    std::fs::write(&limits_file, format!("acme {limits}\n")).expect("write limits file");
    let mut args = vec![
        "--api-keys-file".to_owned(),
        keys.display().to_string(),
        "--tenant-limits-file".to_owned(),
        limits_file.display().to_string(),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (TestServer::start(db, &args), dir)
}

/// A request as acme through `client`; panics when no whole answer came.
pub(crate) fn acme(client: &Client, method: &str, path: &str, body: Option<&Value>) -> Reply {
    client
        .send_with_header(
            method,
            path,
            body,
            ("authorization", &format!("Bearer {ACME}")),
        )
        .unwrap_or_else(|failure| panic!("{method} {path}: {failure}"))
}

/// acme's usage of `max_live_leases` in `/metrics` (live leases counted in the database).
pub(crate) fn live_leases(server: &TestServer) -> u64 {
    let line_start = "lockd_tenant_quota_usage{tenant=\"acme\",limit=\"max_live_leases\"} ";
    let text = server.send("GET", "/metrics", None).body;
    let value = text
        .as_str()
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(line_start))
        .unwrap_or_else(|| panic!("no {line_start:?} in /metrics: {text}"));
    value
        .trim()
        .parse::<f64>()
        .unwrap_or_else(|_| panic!("usage {value:?}")) as u64
}

/// Sends `BURST` requests to `server` at once (each `request(i)` is a method, path and body, as
/// acme), and returns their answers in request order.
fn burst(
    server: &TestServer,
    request: impl Fn(usize) -> (&'static str, String, Value),
) -> Vec<Reply> {
    let barrier = Arc::new(Barrier::new(BURST));
    let threads: Vec<_> = (0..BURST)
        .map(|i| {
            let (method, path, body) = request(i);
            let client = server.client();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                acme(&client, method, &path, Some(&body))
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|thread| thread.join().expect("burst request"))
        .collect()
}

/// Splits the answers of a burst into the granted ones (`field` is true: `acquired` or
/// `elected`) and checks that every other one is the 429 of `max_live_leases`, `allowed`.
fn granted_or_over(replies: &[Reply], field: &str, allowed: u64) -> Vec<Reply> {
    let (granted, refused): (Vec<_>, Vec<_>) = replies
        .iter()
        .cloned()
        .partition(|reply| reply.status == 200 && reply.body[field] == true);
    for reply in &refused {
        assert_over(reply, "max_live_leases", allowed);
    }
    granted
}

/// How many entries of acme's listing at `path` (`/locks?prefix=…`, `/elections?prefix=…`).
fn listed(server: &TestServer, path: &str, field: &str) -> usize {
    let reply = as_key(server, ACME, "GET", path, None);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body[field].as_array().expect("a listing").len()
}

/// The burst of `BURST` waiting acquires of distinct free names, exclusive or shared.
fn burst_of_lock_acquires(db: &TestDatabase, mode: &str) {
    let (server, _dir) = start_acme(db, "max_live_leases=5", &[]);
    let replies = burst(&server, |i| {
        let body = json!({
            "owner": format!("w{i}"), "ttl_seconds": 60, "wait_seconds": 1, "mode": mode,
        });
        ("POST", format!("/locks/q-{i}"), body)
    });
    let granted = granted_or_over(&replies, "acquired", 5);
    assert_eq!(
        granted.len(),
        5,
        "{mode}: {} of {BURST} waiting acquires granted with max_live_leases=5",
        granted.len()
    );
    for reply in &granted {
        assert_eq!(reply.body["lock"]["mode"], mode, "{reply:?}");
    }
    assert_eq!(live_leases(&server), 5);
    assert_eq!(listed(&server, "/locks?prefix=q-&limit=1000", "locks"), 5);
}

fn a_burst_of_waiting_exclusive_acquires_is_granted_up_to_the_limit(db: TestDatabase) {
    burst_of_lock_acquires(&db, "exclusive");
}

fn a_burst_of_waiting_shared_acquires_is_granted_up_to_the_limit(db: TestDatabase) {
    burst_of_lock_acquires(&db, "shared");
}

fn a_burst_of_waiting_permit_acquires_is_granted_up_to_the_limit(db: TestDatabase) {
    let (server, _dir) = start_acme(&db, "max_live_leases=5", &[]);
    let replies = burst(&server, |i| {
        let body = json!({
            "owner": format!("p{i}"), "ttl_seconds": 60, "limit": BURST, "permits": 1,
            "wait_seconds": 1,
        });
        ("POST", "/semaphores/pool".to_owned(), body)
    });
    let granted = granted_or_over(&replies, "acquired", 5);
    assert_eq!(
        granted.len(),
        5,
        "{} of {BURST} waiting permit acquires granted with max_live_leases=5",
        granted.len()
    );
    assert_eq!(live_leases(&server), 5);
    let status = as_key(&server, ACME, "GET", "/semaphores/pool", None);
    assert_eq!(
        status.body["holders"].as_array().map(Vec::len),
        Some(5),
        "{status:?}"
    );
    assert_eq!(status.body["in_use"], 5, "{status:?}");
}

fn a_burst_of_waiting_sets_of_locks_is_granted_up_to_the_limit(db: TestDatabase) {
    let (server, _dir) = start_acme(&db, "max_live_leases=5", &[]);
    let replies = burst(&server, |i| {
        let body = json!({
            "owner": format!("s{i}"), "ttl_seconds": 60, "wait_seconds": 1,
            "locks": [{"resource": format!("m-{i}-a")}, {"resource": format!("m-{i}-b")}],
        });
        ("POST", "/locks".to_owned(), body)
    });
    let granted = granted_or_over(&replies, "acquired", 5);
    assert_eq!(
        granted.len(),
        2,
        "{} of {BURST} waiting sets of 2 granted with max_live_leases=5 (at most 2 fit)",
        granted.len()
    );
    for reply in &granted {
        assert_eq!(
            reply.body["locks"].as_array().map(Vec::len),
            Some(2),
            "{reply:?}"
        );
    }
    assert_eq!(live_leases(&server), 4);
    assert_eq!(listed(&server, "/locks?prefix=m-&limit=1000", "locks"), 4);
}

fn a_burst_of_waiting_campaigns_is_granted_up_to_the_limit(db: TestDatabase) {
    let (server, _dir) = start_acme(&db, "max_live_leases=5", &[]);
    let replies = burst(&server, |i| {
        let body = json!({"candidate": format!("c{i}"), "ttl_seconds": 60, "wait_seconds": 1});
        ("POST", format!("/elections/e-{i}/campaign"), body)
    });
    let granted = granted_or_over(&replies, "elected", 5);
    assert_eq!(
        granted.len(),
        5,
        "{} of {BURST} waiting campaigns elected with max_live_leases=5",
        granted.len()
    );
    assert_eq!(live_leases(&server), 5);
    assert_eq!(
        listed(&server, "/elections?prefix=e-&limit=1000", "elections"),
        5
    );
}

/// How long the waiters of the replacement tests that are to be granted wait: far longer than
/// the test needs to get to their grants, however loaded the machine.
const LONG_WAIT_SECONDS: u64 = 20;

/// How long the waiters that the quota holds back wait: they are answered at the end of it, so
/// it is most of a replacement test's run time.
const WAIT_SECONDS: u64 = 8;

/// A waiting request sent in a thread: its answer (or why none came), and how long it took.
/// It does not panic: a test that fails first kills the server under it.
type Pending = JoinHandle<(Result<Reply, NoReply>, Duration)>;

fn send_waiting(server: &TestServer, path: String, body: Value) -> Pending {
    let client = server.client();
    std::thread::spawn(move || {
        let sent = Instant::now();
        let reply = client.send_with_header(
            "POST",
            &path,
            Some(&body),
            ("authorization", &format!("Bearer {ACME}")),
        );
        (reply, sent.elapsed())
    })
}

/// The answer of the `i`th (from 1) of `pending`, once it came.
fn answer(pending: &mut [Option<Pending>], i: usize) -> (Reply, Duration) {
    let (reply, took) = pending[i - 1]
        .take()
        .expect("answered once")
        .join()
        .expect("waiting request");
    (
        reply.unwrap_or_else(|failure| panic!("waiter {i}: {failure}")),
        took,
    )
}

/// Polls `count()` until it is `want` (at most 10 s).
fn until(what: &str, want: u64, count: impl Fn() -> u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = count();
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still {now}, never {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts the answer of a waiter whose wait ended while the quota held it back: the 429 of
/// `max_live_leases` (Retry-After: 1), at the end of its wait, not before.
fn assert_held_back_to_the_end(name: &str, (reply, took): &(Reply, Duration), allowed: u64) {
    assert_over(reply, "max_live_leases", allowed);
    assert!(
        *took >= Duration::from_millis(WAIT_SECONDS * 1_000 - 100),
        "{name} was answered after {took:?}, before its wait of {WAIT_SECONDS} s ended: {reply:?}"
    );
}

/// Owners of `GET /semaphores/s`'s live holders, in token order.
fn semaphore_holders(server: &TestServer) -> Vec<String> {
    let reply = as_key(server, ACME, "GET", "/semaphores/s", None);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body["holders"]
        .as_array()
        .expect("holders")
        .iter()
        .map(|holder| holder["owner"].as_str().expect("owner").to_owned())
        .collect()
}

fn semaphore_waiters_replacing_one_holder_are_granted_up_to_the_limit_in_order(db: TestDatabase) {
    let (server, _dir) = start_acme(&db, "max_live_leases=2", &[]);
    let usage = || {
        let used = live_leases(&server);
        assert!(used <= 2, "acme has {used} live leases, max_live_leases=2");
        used
    };
    let big = json!({"owner": "big", "ttl_seconds": 60, "limit": 8, "permits": 8});
    let reply = as_key(&server, ACME, "POST", "/semaphores/s", Some(&big));
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    let waiting = || {
        let reply = as_key(&server, ACME, "GET", "/semaphores/s", None);
        reply.body["waiting"].as_u64().expect("waiting")
    };
    // w1..w8 each ask for 1 permit and are admitted (1 live lease < 2); each queues before the
    // next arrives.
    let start = Instant::now();
    let mut waiters: Vec<Option<Pending>> = Vec::new();
    for i in 1..=8u64 {
        let body = json!({
            "owner": format!("w{i}"), "ttl_seconds": 60, "limit": 8, "permits": 1,
            "wait_seconds": if i <= 3 { LONG_WAIT_SECONDS } else { WAIT_SECONDS },
        });
        waiters.push(Some(send_waiting(
            &server,
            "/semaphores/s".to_owned(),
            body,
        )));
        until(&format!("waiters after w{i} arrived"), i, waiting);
    }
    assert_eq!(usage(), 1);

    // big leaves 8 free permits: the first two waiters take the 2 leases the tenant may have.
    let released = as_key(&server, ACME, "DELETE", "/semaphores/s?owner=big", None);
    assert_eq!(released.status, 204, "{released:?}");
    for i in [1, 2] {
        let (reply, _) = answer(&mut waiters, i);
        assert_eq!(reply.body["acquired"], true, "w{i}: {reply:?}");
        assert_eq!(reply.body["permit"]["owner"], format!("w{i}"), "{reply:?}");
    }
    // The others stay queued (the head, w3, is held back by the quota, not by the permits), for
    // as long as we look.
    for _ in 0..10 {
        assert_eq!(
            semaphore_holders(&server),
            ["w1", "w2"],
            "FIFO, up to 2 leases"
        );
        assert_eq!(usage(), 2);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        waiting(),
        6,
        "w3..w8 keep their places ({:?} in)",
        start.elapsed()
    );

    // w1 leaves: its place goes to w3, the head, and to no one else.
    let released = as_key(&server, ACME, "DELETE", "/semaphores/s?owner=w1", None);
    assert_eq!(released.status, 204, "{released:?}");
    let (reply, _) = answer(&mut waiters, 3);
    assert_eq!(reply.body["acquired"], true, "w3: {reply:?}");
    assert_eq!(reply.body["permit"]["owner"], "w3", "{reply:?}");
    for _ in 0..10 {
        assert_eq!(semaphore_holders(&server), ["w2", "w3"]);
        assert_eq!(usage(), 2);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        waiting(),
        5,
        "w4..w8 keep their places ({:?} in)",
        start.elapsed()
    );

    // The rest are held back by the quota until their waits end.
    for i in 4..=8 {
        assert_held_back_to_the_end(&format!("w{i}"), &answer(&mut waiters, i), 2);
    }
    assert_eq!(semaphore_holders(&server), ["w2", "w3"]);
    assert_eq!(usage(), 2);
    assert_eq!(waiting(), 0);
}

fn readers_replacing_a_writer_are_granted_up_to_the_limit_in_order(db: TestDatabase) {
    let (server, _dir) = start_acme(&db, "max_live_leases=2", &[]);
    let usage = || {
        let used = live_leases(&server);
        assert!(used <= 2, "acme has {used} live leases, max_live_leases=2");
        used
    };
    let writer = json!({"owner": "writer", "ttl_seconds": 60});
    let reply = as_key(&server, ACME, "POST", "/locks/r", Some(&writer));
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    let waiting = || {
        let reply = as_key(&server, ACME, "GET", "/locks?prefix=r&limit=10", None);
        let locks = reply.body["locks"].as_array().expect("locks").clone();
        locks
            .iter()
            .filter(|lock| lock["resource"] == "r")
            .map(|lock| lock["waiting"].as_u64().expect("waiting"))
            .max()
            .unwrap_or(0)
    };
    let start = Instant::now();
    let mut waiters: Vec<Option<Pending>> = Vec::new();
    for i in 1..=8u64 {
        let body = json!({
            "owner": format!("rd{i}"), "ttl_seconds": 60, "mode": "shared",
            "wait_seconds": if i <= 2 { LONG_WAIT_SECONDS } else { WAIT_SECONDS },
        });
        waiters.push(Some(send_waiting(&server, "/locks/r".to_owned(), body)));
        until(&format!("waiters after rd{i} arrived"), i, waiting);
    }
    assert_eq!(usage(), 1);

    let released = as_key(&server, ACME, "DELETE", "/locks/r?owner=writer", None);
    assert_eq!(released.status, 204, "{released:?}");
    for i in [1, 2] {
        let (reply, _) = answer(&mut waiters, i);
        assert_eq!(reply.body["acquired"], true, "rd{i}: {reply:?}");
        assert_eq!(reply.body["lock"]["owner"], format!("rd{i}"), "{reply:?}");
        assert_eq!(reply.body["lock"]["mode"], "shared", "{reply:?}");
    }
    let holders = || {
        let reply = as_key(&server, ACME, "GET", "/locks/r", None);
        assert_eq!(reply.body["mode"], "shared", "{reply:?}");
        reply.body["holders"]
            .as_array()
            .expect("holders")
            .iter()
            .map(|holder| holder["owner"].as_str().expect("owner").to_owned())
            .collect::<Vec<_>>()
    };
    for _ in 0..10 {
        assert_eq!(holders(), ["rd1", "rd2"], "FIFO, up to 2 leases");
        assert_eq!(usage(), 2);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        waiting(),
        6,
        "rd3..rd8 keep their places ({:?} in)",
        start.elapsed()
    );
    for i in 3..=8 {
        assert_held_back_to_the_end(&format!("rd{i}"), &answer(&mut waiters, i), 2);
    }
    assert_eq!(holders(), ["rd1", "rd2"]);
    assert_eq!(usage(), 2);
}

fn two_instances_go_over_the_limit_by_at_most_one_grant(db: TestDatabase) {
    const LIMIT: usize = 5;
    const PER_INSTANCE: usize = 20;
    let (a, _dir_a) = start_acme(&db, &format!("max_live_leases={LIMIT}"), &[]);
    let (b, _dir_b) = start_acme(&db, &format!("max_live_leases={LIMIT}"), &[]);
    let mut seen = Vec::new();
    for round in 0..4 {
        let barrier = Arc::new(Barrier::new(2 * PER_INSTANCE));
        let threads: Vec<_> = (0..2 * PER_INSTANCE)
            .map(|i| {
                let client = if i % 2 == 0 { a.client() } else { b.client() };
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let (path, owner) = (format!("/locks/d{round}-{i}"), format!("o{i}"));
                    let body = json!({"owner": owner, "ttl_seconds": 60});
                    barrier.wait();
                    let reply = acme(&client, "POST", &path, Some(&body));
                    (path, owner, reply)
                })
            })
            .collect();
        let replies: Vec<_> = threads
            .into_iter()
            .map(|thread| thread.join().expect("acquire"))
            .collect();
        let mut granted = Vec::new();
        for (path, owner, reply) in replies {
            if reply.status == 200 && reply.body["acquired"] == true {
                granted.push((path, owner));
            } else {
                assert_over(&reply, "max_live_leases", LIMIT as u64);
            }
        }
        let live = live_leases(&a);
        assert_eq!(live as usize, granted.len(), "round {round}");
        assert_eq!(
            listed(&b, &format!("/locks?prefix=d{round}-&limit=1000"), "locks"),
            granted.len()
        );
        assert!(
            (LIMIT..=LIMIT + 1).contains(&granted.len()),
            "round {round}: {} grants by two instances with max_live_leases={LIMIT}",
            granted.len()
        );
        seen.push(granted.len());
        for (path, owner) in granted {
            let reply = as_key(&a, ACME, "DELETE", &format!("{path}?owner={owner}"), None);
            assert_eq!(reply.status, 204, "{reply:?}");
        }
        assert_eq!(live_leases(&b), 0);
    }
    eprintln!("two instances, max_live_leases={LIMIT}: grants per round {seen:?}");
}
