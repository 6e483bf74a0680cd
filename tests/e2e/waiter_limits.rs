//! `--max-waiters` through the real binary: one waiting acquire beyond the limit gets a 429
//! problem with `Retry-After`, changes nothing, and is counted in `/metrics`.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

#[test]
fn a_waiter_beyond_max_waiters_gets_429_and_changes_nothing() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &["--max-waiters", "1"]);
    server.acquire("full", "holder", 60).granted();

    // One waiter takes the only place, on a connection of its own.
    let mut waiter =
        TcpStream::connect(server.base.trim_start_matches("http://")).expect("connect");
    let body = json!({"owner": "w1", "ttl_seconds": 60, "wait_seconds": 30}).to_string();
    write!(
        waiter,
        "POST /locks/full HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send the waiting acquire");
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(&server, "lockd_live_waiters ") != Some(1) {
        assert!(Instant::now() < deadline, "the first waiter never waited");
        std::thread::sleep(Duration::from_millis(20));
    }

    // The next waiter is refused, even for a free lock, and nothing is granted.
    let refused = server.send(
        "POST",
        "/locks/free",
        Some(&json!({"owner": "w2", "ttl_seconds": 60, "wait_seconds": 30})),
    );
    refused.assert_problem(429, "too-many-requests");
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    assert_eq!(server.status("free").status, 404);
    assert_eq!(
        metric(&server, "lockd_waiters_rejected_total{limit=\"total\"} "),
        Some(1)
    );

    // Acquires that do not wait are served as usual.
    server.acquire("free", "w2", 60).granted();
    drop(waiter);
}

fn metric(server: &TestServer, series: &str) -> Option<u64> {
    let reply = server.send("GET", "/metrics", None);
    let text = reply.body.as_str().expect("the exposition text").to_owned();
    text.lines()
        .find_map(|line| line.strip_prefix(series))
        .and_then(|value| value.trim().parse().ok())
}
