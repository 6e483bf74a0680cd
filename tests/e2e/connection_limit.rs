//! Connections over the budget are shed, not left hanging: with its open files limited to 256
//! (soft and hard, so lockd cannot raise them), lockd serves 192 connections at once; one opened
//! beyond is answered 503 `/problems/too-many-connections` with `Retry-After` and closed, while
//! `/healthz` is still answered on it, and requests are served again once connections close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::server::LimitedLockd;

/// What `lockd::limits::connection_budget` leaves of 256 open files.
const BUDGET: usize = 192;

#[test]
fn connections_beyond_the_budget_are_answered_503_and_closed_and_healthz_still_answers() {
    let db = TestDatabase::sqlite();
    let lockd = LimitedLockd::start("256:256", &db.url_string());
    let (port, seen) = (lockd.port, lockd.start_up.clone());
    assert!(
        seen.iter()
            .any(|l| l.contains(&format!("max_connections={BUDGET}"))),
        "{seen:#?}"
    );

    // The budget, and a few more, held open and idle.
    let idle: Vec<TcpStream> = (0..BUDGET + 8)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect"))
        .collect();
    // Each is counted once lockd has accepted it: a request on a new one is refused once all are.
    let _ = retry(|| {
        let answer = get(port, "/locks", "close");
        if answer.starts_with("HTTP/1.1 503") {
            Ok(answer)
        } else {
            Err(answer)
        }
    });
    // Kept alive by the client, the connection is closed by the server after its answer.
    let refused = get(port, "/locks", "keep-alive");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    let lower = refused.to_ascii_lowercase();
    assert!(
        lower.contains("/problems/too-many-connections"),
        "{refused}"
    );
    assert!(lower.contains("retry-after: 1"), "{refused}");
    assert!(lower.contains("connection: close"), "{refused}");
    assert!(lower.contains("application/problem+json"), "{refused}");
    let health = get(port, "/healthz", "keep-alive");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");

    drop(idle);
    let served = retry(|| {
        let answer = get(port, "/locks", "close");
        if answer.starts_with("HTTP/1.1 200") {
            Ok(answer)
        } else {
            Err(answer)
        }
    });
    assert!(served.contains("\"locks\""), "{served}");
    drop(lockd);
}

/// `f` until it gives a value, for up to 5 s (an error is the last answer).
fn retry(mut f: impl FnMut() -> Result<String, String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let last = match f() {
            Ok(value) => return value,
            Err(last) => last,
        };
        assert!(
            Instant::now() < deadline,
            "not within 5 s; the last answer: {last}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A GET on a new connection with this `Connection` header, read until the server closes the
/// connection: within 3 s, before a kept-alive connection would time out (5 s).
fn get(port: u16, path: &str, connection: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: lockd\r\nConnection: {connection}\r\n\r\n"
    )
    .expect("send");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .expect("the answer, and the connection closed within 3 s");
    String::from_utf8_lossy(&answer).into_owned()
}
