//! A log collector that stops reading (issue #12): lockd's standard error goes to a pipe that
//! the test never reads after start-up, so the pipe's buffer (64 KiB, about 460 audit lines)
//! and then lockd's log queue fill up. Every request and `/healthz` must still be answered, and
//! the lines that found no room are counted in `lockd_log_lines_dropped_total` and, once the
//! reader is back, reported in the log itself.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::server::{lockd_binary, Client};

/// Clients, each acquiring and releasing its own lock this many times: 4,800 requests, each
/// with an audit line (about 700 KB of lines, against 64 KiB of pipe and 256 KiB of queue).
const CLIENTS: usize = 4;
const CYCLES: usize = 600;

/// Kills and reaps the child when dropped, whatever the test's outcome.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn requests_and_healthz_are_answered_while_nobody_reads_stderr() {
    let db = TestDatabase::sqlite();
    let mut child = Command::new(lockd_binary())
        .args(["serve", "--bind", "127.0.0.1:0", "--database-url"])
        .arg(db.url_string())
        // The default level: an audit line for every grant and release.
        .args(["--log", "info", "--sqlite-synchronous", "normal"])
        .env_remove("RUST_LOG")
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lockd");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let child = Killed(child);
    let mut line = String::new();
    let base = loop {
        line.clear();
        let read = stderr.read_line(&mut line).expect("read lockd's stderr");
        assert!(read > 0, "lockd exited before listening");
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.trim().to_owned();
        }
    };
    // From here on the pipe is never read again: `stderr` stays open, unread, until the end.

    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let http = Client::new(&base);
            std::thread::spawn(move || {
                let resource = format!("stalled-{client}");
                for cycle in 0..CYCLES {
                    let acquired = http
                        .acquire(&resource, "w", 30)
                        .unwrap_or_else(|e| panic!("acquire {cycle} of {resource}: {e}"));
                    assert_eq!(acquired.status, 200, "{acquired:?}");
                    assert_eq!(acquired.body["acquired"], true, "{acquired:?}");
                    let released = http
                        .release(&resource, "w")
                        .unwrap_or_else(|e| panic!("release {cycle} of {resource}: {e}"));
                    assert_eq!(released.status, 204, "{released:?}");
                }
            })
        })
        .collect();
    for client in clients {
        client.join().expect("every request answered");
    }
    eprintln!(
        "stalled stderr: {} requests answered in {:?}",
        CLIENTS * CYCLES * 2,
        started.elapsed()
    );

    let http = Client::new(&base);
    let health = http
        .send("GET", "/healthz", None)
        .expect("/healthz answers");
    assert_eq!(health.status, 200, "{health:?}");
    let scrape = http
        .send("GET", "/metrics", None)
        .expect("/metrics answers");
    assert_eq!(scrape.status, 200, "{scrape:?}");
    let text = scrape.body.as_str().expect("exposition text");
    let dropped: f64 = text
        .lines()
        .find_map(|line| line.strip_prefix("lockd_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no lockd_log_lines_dropped_total in\n{text}"))
        .parse()
        .expect("a number");
    assert!(
        dropped > 0.0,
        "the pipe and the queue hold less than {} audit lines, yet none was dropped",
        CLIENTS * CYCLES * 2
    );
    eprintln!("stalled stderr: {dropped} log lines dropped");

    // The reader comes back: what was queued arrives, then a warning that lines are missing.
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .expect("a WARN line saying that log lines were dropped");
        if line.contains("WARN") && line.contains("log lines were dropped") {
            break;
        }
    }
    drop(child);
}
