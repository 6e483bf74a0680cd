//! Slow clients (slowloris): connections that stall inside their headers or in the middle of
//! their body are cut off by the header and body timeouts, and do not keep others from service.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

/// Opens a connection that sends part of a request and then stalls.
fn stalled(addr: SocketAddr, mid_body: bool) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let partial: &[u8] = if mid_body {
        b"POST /locks/slow HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{\"owner\": \"slo"
    } else {
        b"POST /locks/slow HTTP/1.1\r\nHost: lockd\r\nContent-Ty"
    };
    stream.write_all(partial).expect("send the partial request");
    stream
}

/// Reads until the server closes the connection; returns when it did, or `None` past `limit`.
fn closed_within(mut stream: TcpStream, limit: Duration) -> Option<(Duration, Vec<u8>)> {
    let start = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("read timeout");
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while start.elapsed() < limit {
        match stream.read(&mut buffer) {
            Ok(0) => return Some((start.elapsed(), answer)),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Some((start.elapsed(), answer)),
        }
    }
    None
}

#[test]
fn stalled_headers_and_bodies_are_cut_off_and_do_not_block_others() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(
        &db,
        &[
            "--header-timeout-seconds",
            "2",
            "--body-timeout-seconds",
            "3",
        ],
    );
    let addr: SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");

    let opened = Instant::now();
    let slow: Vec<TcpStream> = (0..256).map(|i| stalled(addr, i % 2 == 0)).collect();

    // A normal client is served at once, all 256 stalls notwithstanding.
    let started = Instant::now();
    let reply = server.acquire("normal", "worker-7", 30);
    let took = started.elapsed();
    reply.granted();
    assert!(
        took < Duration::from_secs(2),
        "a normal acquire took {took:?} next to 256 slow clients"
    );

    // Every stalled connection is closed well within 60 s of opening.
    let waits: Vec<_> = slow
        .into_iter()
        .map(|stream| std::thread::spawn(move || closed_within(stream, Duration::from_secs(60))))
        .collect();
    let mut slowest = Duration::ZERO;
    let mut body_answers_408 = 0;
    for (i, wait) in waits.into_iter().enumerate() {
        let (after, answer) = wait
            .join()
            .expect("reader")
            .unwrap_or_else(|| panic!("connection {i} still open after 60 s"));
        slowest = slowest.max(after);
        let text = String::from_utf8_lossy(&answer);
        if i % 2 == 0 {
            assert!(
                text.starts_with("HTTP/1.1 408"),
                "a stalled body is answered 408: {text}"
            );
            assert!(text.contains("application/problem+json"), "{text}");
            body_answers_408 += 1;
        }
    }
    eprintln!(
        "slow clients: a normal acquire took {took:?}; all 256 stalled connections closed, the last {:?} after opening",
        opened.elapsed().min(slowest + Duration::from_secs(1))
    );
    assert_eq!(body_answers_408, 128);
    assert!(
        slowest < Duration::from_secs(10),
        "the timeouts are 2 s and 3 s, the slowest took {slowest:?}"
    );
    // Nothing the slow clients sent was acted upon.
    server.status("slow").assert_problem(404, "not-found");
}
