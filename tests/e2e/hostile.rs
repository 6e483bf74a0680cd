//! Hostile input beyond the seed attacks: races around expiry, raw bytes in paths, huge bodies
//! and header floods. Nothing may answer 5xx, and the server must keep serving.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

/// Sends raw bytes and returns the status code of the answer (0 when the server closed the
/// connection without one) and the raw answer.
fn raw(server: &TestServer, request: &[u8]) -> (u16, String) {
    let addr: SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    // The server may answer and close before taking every byte of a flood: that is fine.
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// An old owner's release racing a new owner's takeover of its expired lock never deletes the
/// new owner's lock.
fn release_racing_a_takeover_never_deletes_the_new_lock(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    const ROUNDS: usize = 24;
    for i in 0..ROUNDS {
        server
            .acquire(&format!("race-{i}"), "old-owner", 1)
            .granted();
    }
    std::thread::sleep(Duration::from_millis(1_100));
    let barrier = Arc::new(Barrier::new(ROUNDS * 2));
    let mut handles = Vec::new();
    for i in 0..ROUNDS {
        for taker in [true, false] {
            let (server, barrier) = (Arc::clone(&server), Arc::clone(&barrier));
            handles.push(std::thread::spawn(move || {
                barrier.wait();
                let name = format!("race-{i}");
                if taker {
                    (i, true, server.acquire(&name, "new-owner", 60))
                } else {
                    (i, false, server.release(&name, "old-owner"))
                }
            }));
        }
    }
    for handle in handles {
        let (i, taker, reply) = handle.join().expect("racer");
        if taker {
            assert_eq!(reply.granted()["owner"], "new-owner", "race-{i}");
        } else {
            assert!(
                reply.status == 404 || reply.status == 403,
                "race-{i}: the old owner's release of an expired lock answered {reply:?}"
            );
        }
    }
    for i in 0..ROUNDS {
        assert_eq!(
            server.status(&format!("race-{i}")).body["owner"],
            "new-owner",
            "race-{i}"
        );
    }
}

/// Two callers that both see one expired lock: exactly one gets it.
fn two_callers_on_one_expired_lock(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    for round in 0..5 {
        let name = format!("expired-{round}");
        let old = server.acquire(&name, "crashed", 1).token();
        std::thread::sleep(Duration::from_millis(1_050));
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|who| {
                let (server, barrier, name) =
                    (Arc::clone(&server), Arc::clone(&barrier), name.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    server.acquire(&name, who, 30)
                })
            })
            .collect();
        let replies: Vec<_> = racers
            .into_iter()
            .map(|r| r.join().expect("racer"))
            .collect();
        let winners: Vec<_> = replies
            .iter()
            .filter(|r| r.body["acquired"] == true)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {replies:?}");
        assert!(winners[0].token() > old);
    }
}

/// Bytes in the resource segment: NUL and other control characters and invalid UTF-8 are 422,
/// `%2F` is a slash inside the name, and nothing is ever a 5xx.
fn raw_bytes_in_resource_names(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let body = r#"{"owner":"o","ttl_seconds":30}"#;
    let post = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    for (path, expected) in [
        ("/locks/a%00b", 422),
        ("/locks/a%0Ab", 422),
        ("/locks/a%1Bb", 422),
        ("/locks/a%7Fb", 422),
        ("/locks/%C2%85", 422),
        ("/locks/%FF%FE", 422),
        ("/locks/%C3", 422),
        ("/locks/tenant%2Fjob", 200),
        ("/locks/%2F", 200),
        ("/locks/%2F%2F..%2F", 200),
    ] {
        let (status, answer) = raw(&server, post(path).as_bytes());
        assert_eq!(status, expected, "{path}: {answer}");
    }
    assert_eq!(server.status("%2F%2F..%2F").body["resource"], "//../");
    // Raw bytes a client should have encoded never reach the handlers as names; whatever the
    // HTTP layer answers, it is not a server error.
    for path in [&b"/locks/a\x01b"[..], b"/locks/a b", b"/locks/\xff"] {
        let mut request = b"POST ".to_vec();
        request.extend_from_slice(path);
        request.extend_from_slice(b" HTTP/1.1\r\nHost: lockd\r\nConnection: close\r\n\r\n");
        let (status, answer) = raw(&server, &request);
        assert!(
            status == 0 || (400..500).contains(&status),
            "{path:?}: {answer}"
        );
    }
    assert_eq!(server.send("GET", "/healthz", None).status, 200);
}

/// A 1 MB body, 10,000 headers, duplicate keys: refused without a 5xx, and the server goes on.
fn floods_and_duplicates(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let megabyte = vec![b'{'; 1 << 20];
    server
        .send_raw("POST", "/locks/r", Some("application/json"), &megabyte)
        .assert_problem(413, "payload-too-large");
    let mut chunked = b"POST /locks/r HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for _ in 0..64 {
        chunked.extend_from_slice(b"4000\r\n");
        chunked.extend_from_slice(&[b' '; 0x4000]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (status, answer) = raw(&server, &chunked);
    assert_eq!(status, 413, "{answer}");

    let mut flood = b"GET /locks/r HTTP/1.1\r\nHost: lockd\r\n".to_vec();
    for i in 0..10_000 {
        flood.extend_from_slice(format!("X-Flood-{i}: {i}\r\n").as_bytes());
    }
    flood.extend_from_slice(b"Connection: close\r\n\r\n");
    let (status, answer) = raw(&server, &flood);
    assert!(
        status == 0 || (400..500).contains(&status),
        "10,000 headers: {}",
        &answer[..answer.len().min(300)]
    );

    let duplicate = br#"{"owner": "a", "owner": "b", "ttl_seconds": 30}"#;
    server
        .send_raw("POST", "/locks/dup", Some("application/json"), duplicate)
        .assert_problem(400, "bad-request");
    server.status("dup").assert_problem(404, "not-found");
    let unknown = server.send(
        "POST",
        "/locks/r2",
        Some(&json!({"owner": "o", "ttl_seconds": 5, "extra": [1, {"a": null}]})),
    );
    unknown.granted();
    assert_eq!(
        server.send("GET", "/healthz", None).status,
        200,
        "still serving"
    );
}

on_both_backends!(
    release_racing_a_takeover_never_deletes_the_new_lock,
    two_callers_on_one_expired_lock,
    raw_bytes_in_resource_names,
    floods_and_duplicates,
);
