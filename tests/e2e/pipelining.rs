//! Requests pipelined behind a waiting acquire (issue #11, fault 6): one connection must not
//! keep the server busy while its first request waits.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

/// CPU seconds (user + system) the process has used, from /proc/PID/stat.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/PID/stat");
    // The command name (field 2) may hold spaces; the fields after it are plain numbers.
    let after_name = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf reads a constant of the system; it has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}

fn post(resource: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /locks/{resource} HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn pipelined_requests_behind_a_waiting_acquire_do_not_spin_the_server() {
    const WAIT_SECONDS: u64 = 4;
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &["--workers", "1"]);
    server.acquire("pipelined", "holder", 60).granted();
    let addr: SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");

    // A waiting acquire, then 16 pipelined requests, then 128 KiB of bytes.
    let mut bytes = post(
        "pipelined",
        &format!(r#"{{"owner": "waiter", "ttl_seconds": 30, "wait_seconds": {WAIT_SECONDS}}}"#),
    );
    for _ in 0..16 {
        bytes.extend_from_slice(b"GET /locks/pipelined HTTP/1.1\r\nHost: lockd\r\n\r\n");
    }
    bytes.extend(std::iter::repeat_n(b'x', 128 * 1024));
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(WAIT_SECONDS + 10)))
        .expect("read timeout");
    let mut writer = stream.try_clone().expect("clone the stream");
    let sender = std::thread::spawn(move || {
        // The server may close the connection once it has answered: not every byte must go.
        let _ = writer.write_all(&bytes);
    });

    // Measure while the acquire waits: from shortly after the bytes went out to shortly
    // before the wait ends.
    std::thread::sleep(Duration::from_millis(300));
    let (cpu_before, wall_before) = (cpu_seconds(server.pid()), Instant::now());
    std::thread::sleep(Duration::from_secs(WAIT_SECONDS) - Duration::from_millis(800));
    let (cpu_after, wall) = (cpu_seconds(server.pid()), wall_before.elapsed());
    let cpu = cpu_after - cpu_before;
    assert!(
        cpu < 0.2 * wall.as_secs_f64(),
        "the server used {cpu:.2} s of CPU in {wall:?} while one connection waited"
    );

    // The wait still ends as a wait does: held, with Retry-After.
    let mut answer = [0u8; 512];
    // A signal meant for the test process (another test's child exiting) may interrupt the
    // read: that is no answer yet, so read again.
    let read = loop {
        match stream.read(&mut answer) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other.expect("the waiting acquire's answer"),
        }
    };
    let head = String::from_utf8_lossy(&answer[..read]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("retry-after"), "{head}");
    drop(stream);
    sender.join().expect("the sender ends");

    // And the server serves others.
    assert_eq!(server.status("pipelined").status, 200);
}
