//! 10,000 observers on one lockd, on both backends: they all get their first event, the server
//! keeps serving other clients while they are open, a change reaches them, they are counted in
//! `lockd_observers`, and closing them frees them. Prints the server's memory per observer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

on_both_backends!(ten_thousand_observers_do_not_stop_others_from_being_served);

const OBSERVERS: usize = 10_000;
/// Observed names: locks and elections.
const NAMES: usize = 100;

/// The two backends' runs take 10,000 sockets each: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn metric(server: &TestServer, name: &str) -> Option<u64> {
    let text = server.send("GET", "/metrics", None).body;
    text.as_str()
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.parse().ok())
}

fn path_of(i: usize) -> String {
    if i % 2 == 0 {
        format!("/locks/scale-{}/observe", i % NAMES)
    } else {
        format!("/elections/scale-{}/observe", i % NAMES)
    }
}

/// Reads from `stream` until `needle` has arrived, within `within`.
fn read_until(stream: &mut TcpStream, needle: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "no {needle:?} in {:?}",
            String::from_utf8_lossy(&seen)
        );
        stream.set_read_timeout(Some(left)).expect("timeout");
        let n = stream.read(&mut buffer).expect("the stream stays open");
        assert!(
            n > 0,
            "the stream ended: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

fn ten_thousand_observers_do_not_stop_others_from_being_served(db: TestDatabase) {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let server = TestServer::start(&db, &[]);
    let addr = server.base.trim_start_matches("http://").to_owned();
    // Warm up: one stream of each kind (closed again), so that first-use allocations are not
    // counted.
    for path in [path_of(0), path_of(1)] {
        let mut warm = TcpStream::connect(&addr).expect("connect");
        write!(warm, "GET {path} HTTP/1.1\r\nhost: lockd\r\n\r\n").expect("send");
        read_until(&mut warm, "event: ", Duration::from_secs(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = rss_kib(server.pid());

    let opened = Instant::now();
    let mut streams: Vec<TcpStream> = (0..OBSERVERS)
        .map(|i| {
            let mut stream = TcpStream::connect(&addr).expect("connect");
            write!(stream, "GET {} HTTP/1.1\r\nhost: lockd\r\n\r\n", path_of(i)).expect("send");
            stream
        })
        .collect();
    for stream in &mut streams {
        let head = read_until(stream, "event: ", Duration::from_secs(30));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    let open_s = opened.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(server.pid());
    let per_observer = (after.saturating_sub(before)) as f64 * 1024.0 / OBSERVERS as f64;
    println!(
        "{} observers opened in {open_s:.1} s; server RSS {before} KiB -> {after} KiB: {per_observer:.0} bytes per observer ({})",
        OBSERVERS,
        if db.is_postgres() { "postgres" } else { "sqlite" }
    );
    assert_eq!(metric(&server, "lockd_observers"), Some(OBSERVERS as u64));

    // Others are served meanwhile: 200 acquire + release cycles, one at a time.
    let mut slowest = Duration::ZERO;
    for i in 0..200 {
        let started = Instant::now();
        let owner = format!("worker-{i}");
        let acquired = server.acquire("busy", &owner, 30);
        assert_eq!(acquired.body["acquired"], true, "{acquired:?}");
        assert_eq!(server.release("busy", &owner).status, 204);
        slowest = slowest.max(started.elapsed());
    }
    println!("with {OBSERVERS} observers open, the slowest of 200 acquire + release cycles took {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");

    // A change reaches its observers: every 100th stream watches lock scale-0.
    let granted = server.send(
        "POST",
        "/locks/scale-0",
        Some(&json!({"owner": "o", "ttl_seconds": 30})),
    );
    assert_eq!(granted.body["acquired"], true);
    let changed = Instant::now();
    for stream in streams.iter_mut().step_by(2 * NAMES / 2).take(50) {
        read_until(stream, "event: acquired", Duration::from_secs(5));
    }
    println!(
        "50 of its observers heard the change within {:?}",
        changed.elapsed()
    );

    drop(streams);
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(&server, "lockd_observers") != Some(0) {
        assert!(Instant::now() < deadline, "observers are not freed");
        std::thread::sleep(Duration::from_millis(100));
    }
}
