//! Sets that wait, on both backends: a set waiting on one instance holds nothing meanwhile and is
//! granted once its blocker releases on the other; two clients racing for overlapping sets, in
//! opposite orders on two instances, never hold a resource together and never deadlock; a set
//! whose client hung up while waiting ends holding nothing.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use super::{
    absent, acquire_all, counter, granted_all, release_all, set, token, unavailable, waiting,
};
use crate::holds::{assert_holds_never_overlap, Hold};
use crate::server::{Reply, TestServer};

on_both_backends!(
    a_waiting_set_is_granted_once_its_blocker_releases_on_the_other_instance,
    racing_overlapping_sets_never_share_a_resource_nor_deadlock,
    a_set_whose_client_hung_up_while_waiting_holds_nothing,
);

/// Waits until `n` acquires wait on `server` (its `lockd_live_waiters`).
fn until_waiting(server: &TestServer, n: u64) {
    let series = format!("lockd_live_waiters {n}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let scrape = server.send("GET", "/metrics", None);
        let text = scrape.body.as_str().unwrap_or_default();
        if text.lines().any(|line| line == series) {
            return;
        }
        assert!(Instant::now() < deadline, "never {n} waiting:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn a_waiting_set_is_granted_once_its_blocker_releases_on_the_other_instance(db: TestDatabase) {
    let a = Arc::new(TestServer::start(&db, &[]));
    let b = TestServer::start(&db, &[]);
    let names = ["w1", "w2", "w3"];
    let blocker = b.acquire("w2", "blocker", 30).granted().clone();

    // A wait that ends: the unavailable ones, Retry-After, nothing held.
    let timed_out = acquire_all(&a, &waiting(set("alice", &names), 1));
    assert_eq!(unavailable(&timed_out), ["w2"]);
    let retry: u64 = timed_out
        .header("retry-after")
        .expect("Retry-After after a wait")
        .parse()
        .expect("seconds");
    assert!((1..=31).contains(&retry), "{retry}");
    absent(&a, &["w1", "w3"]);

    let body = waiting(set("alice", &names), 20);
    let waiter = {
        let a = Arc::clone(&a);
        std::thread::spawn(move || (acquire_all(&a, &body), Instant::now()))
    };
    until_waiting(&a, 1);
    // It holds nothing while it waits: its free locks are anyone's meanwhile, on either instance.
    let passer = a.acquire("w1", "passer-by", 30).token();
    assert_eq!(a.release("w1", "passer-by").status, 204);
    b.acquire("w3", "passer-by", 30).granted();
    assert_eq!(b.release("w3", "passer-by").status, 204);
    absent(&b, &["w1", "w3"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!waiter.is_finished(), "granted while w2 is held");

    let released_at = Instant::now();
    assert_eq!(b.release("w2", "blocker").status, 204);
    let (reply, granted_at) = waiter.join().expect("waiter");
    let locks = granted_all(&reply, "alice", &names);
    eprintln!(
        "blocker's release on B -> set's grant on A: {:?}",
        granted_at - released_at
    );
    assert!(granted_at - released_at < Duration::from_secs(2));
    assert!(token(&locks[0]) > passer && token(&locks[1]) > token(&blocker));
    for (lock, name) in locks.iter().zip(names) {
        assert_eq!(b.status(name).body, *lock, "B sees A's grant");
    }
}

/// How many sets each racer takes.
const ROUNDS: usize = 25;

/// A client taking `names` together (waiting up to 5 s) `ROUNDS` times, alternating between the
/// two servers, checking with `GET` that it alone holds each lock, then releasing them together.
/// Answers its holds and how many of its waits ended without the set.
fn racer(
    servers: [Arc<TestServer>; 2],
    owner: &'static str,
    names: [&'static str; 3],
) -> JoinHandle<(Vec<Hold>, u32)> {
    std::thread::spawn(move || {
        let (mut holds, mut timeouts) = (Vec::new(), 0);
        for round in 0..ROUNDS {
            let server = &servers[round % 2];
            let locks = loop {
                let reply = acquire_all(server, &waiting(set(owner, &names), 5));
                if reply.body["acquired"] == true {
                    break granted_all(&reply, owner, &names);
                }
                assert!(reply.header("retry-after").is_some(), "{reply:?}");
                timeouts += 1;
                assert!(
                    timeouts <= 3,
                    "{owner}: {timeouts} waits of 5 s ended: {reply:?}"
                );
            };
            let granted = Instant::now();
            for (lock, name) in locks.iter().zip(names) {
                let status = server.status(name);
                assert_eq!(status.body, *lock, "{owner} holds {name} alone");
            }
            let releasing = Instant::now();
            let results = release_all(server, owner, &names);
            for (lock, (result, released)) in locks.iter().zip(results) {
                assert_eq!((result.as_str(), released), ("released", Some(token(lock))));
                holds.push(Hold {
                    resource: lock["resource"].as_str().expect("name").to_owned(),
                    token: token(lock),
                    granted,
                    releasing,
                });
            }
        }
        (holds, timeouts)
    })
}

fn racing_overlapping_sets_never_share_a_resource_nor_deadlock(db: TestDatabase) {
    let a = Arc::new(TestServer::start(&db, &[]));
    let b = Arc::new(TestServer::start(&db, &[]));
    let started = Instant::now();
    // Overlapping in r-b and r-c, named in opposite orders, each client on A and B in turn.
    let left = racer(
        [Arc::clone(&a), Arc::clone(&b)],
        "left",
        ["r-a", "r-b", "r-c"],
    );
    let right = racer(
        [Arc::clone(&b), Arc::clone(&a)],
        "right",
        ["r-c", "r-b", "r-d"],
    );
    let (mut holds, left_timeouts) = left.join().expect("left");
    let (right_holds, right_timeouts) = right.join().expect("right");
    // Each lock of a set that had to wait is counted as `waited_then_granted`.
    let waited: u64 = [&a, &b]
        .iter()
        .map(|s| counter(s, r#"lockd_acquire_total{outcome="waited_then_granted"}"#))
        .sum();
    eprintln!(
        "{ROUNDS} sets each in {:?}, {} of them after waiting; waits that ended: left \
         {left_timeouts}, right {right_timeouts}",
        started.elapsed(),
        waited / 3
    );
    holds.extend(right_holds);
    assert_eq!(holds.len(), 2 * 3 * ROUNDS);
    assert_holds_never_overlap(&holds);
    absent(&a, &["r-a", "r-b", "r-c", "r-d"]);
}

/// Sends a waiting set on a connection of its own and leaves it open.
fn send_and_keep_waiting(server: &TestServer, body: &serde_json::Value) -> TcpStream {
    let body = body.to_string();
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect to lockd");
    write!(
        stream,
        "POST /locks HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send the request");
    stream
}

fn a_set_whose_client_hung_up_while_waiting_holds_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let names = ["h1", "h2", "h3"];
    server.acquire("h2", "blocker", 30).granted();
    let hanging = send_and_keep_waiting(&server, &waiting(set("gone", &names), 20));
    until_waiting(&server, 1);
    absent(&server, &["h1", "h3"]);
    drop(hanging);
    // It leaves the wait at once, not when the set could be granted or its wait ends...
    until_waiting(&server, 0);
    // ...and is never granted: once the blocker has gone, the set is anyone's.
    assert_eq!(server.release("h2", "blocker").status, 204);
    absent(&server, &names);
    let next: Reply = acquire_all(&server, &set("next", &names));
    granted_all(&next, "next", &names);
}
