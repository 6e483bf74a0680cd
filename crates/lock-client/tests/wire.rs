//! The client against a scripted HTTP peer: what goes on the wire, how answers are typed, and
//! that every request is bounded by its timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lock_client::{Acquired, ClientConfig, ClientError, LockClient, Renewed};

/// One request as the peer saw it.
struct Seen {
    head: String,
    body: String,
}

/// Serves one connection: reads a request, waits `delay`, answers `response` (a whole HTTP
/// response). Returns the base URL and what was received.
fn peer(delay: Duration, response: String) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (seen_tx, seen) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut head = String::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("read header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().expect("length");
            }
            head.push_str(&line);
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("read body");
        let _ = seen_tx.send(Seen {
            head,
            body: String::from_utf8(body).expect("utf-8"),
        });
        std::thread::sleep(delay);
        let mut stream = stream;
        let _ = stream.write_all(response.as_bytes());
    });
    (base, seen)
}

fn answer(status: &str, content_type: &str, extra: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

const GRANTED: &str = r#"{"acquired":true,"lock":{"resource":"a/b","owner":"o","acquired_at":"2026-11-29T21:32:27.123Z","expires_at":"2026-11-29T21:32:57.123Z","fencing_token":17}}"#;

fn config(base: &str, request_timeout: Duration) -> ClientConfig {
    let mut config = ClientConfig::new(base).with_api_key("k-1");
    config.request_timeout = request_timeout;
    config
}

#[test]
fn a_waiting_acquire_sends_wait_seconds_and_may_take_longer_than_the_request_timeout() {
    let (base, seen) = peer(
        Duration::from_millis(800),
        answer("200 OK", "application/json", "", GRANTED),
    );
    let client = LockClient::new(&config(&base, Duration::from_millis(300)));
    let outcome = client.acquire_waiting("a/b", "o", 30, 2).expect("granted");
    let Acquired::Granted(lease) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(lease.fencing_token, 17);
    assert_eq!(lease.resource, "a/b");
    let seen = seen.recv().expect("request");
    assert!(
        seen.head.starts_with("POST /locks/a%2Fb HTTP/1.1"),
        "{}",
        seen.head
    );
    assert!(seen
        .head
        .to_ascii_lowercase()
        .contains("authorization: bearer k-1"));
    let body: serde_json::Value = serde_json::from_str(&seen.body).expect("json");
    assert_eq!(
        body,
        serde_json::json!({"owner": "o", "ttl_seconds": 30, "wait_seconds": 2})
    );
}

#[test]
fn an_acquire_without_wait_sends_no_wait_seconds_and_reads_held_with_retry_after() {
    let (base, seen) = peer(
        Duration::ZERO,
        answer(
            "200 OK",
            "application/json",
            "retry-after: 3\r\n",
            r#"{"acquired":false,"resource":"a/b"}"#,
        ),
    );
    let client = LockClient::new(&config(&base, Duration::from_secs(5)));
    let outcome = client.acquire("a/b", "o", 30).expect("answer");
    assert_eq!(
        outcome,
        Acquired::Held {
            retry_after_seconds: Some(3)
        }
    );
    let body: serde_json::Value =
        serde_json::from_str(&seen.recv().expect("request").body).expect("json");
    assert_eq!(body, serde_json::json!({"owner": "o", "ttl_seconds": 30}));
}

#[test]
fn a_renewal_gives_up_at_its_timeout() {
    let (base, _seen) = peer(
        Duration::from_secs(5),
        answer("200 OK", "application/json", "", GRANTED),
    );
    let client = LockClient::new(&config(&base, Duration::from_secs(30)));
    let started = Instant::now();
    let error = client
        .renew_within("a/b", "o", 30, Duration::from_millis(300))
        .unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn problem_documents_become_typed_errors_and_403_404_are_outcomes() {
    let problem = r#"{"type":"/problems/validation-failed","title":"Unprocessable Entity","status":422,"detail":"invalid input: owner","instance":"/locks/x","errors":[{"field":"owner","code":"empty","message":"owner must not be empty"}]}"#;
    let (base, _) = peer(
        Duration::ZERO,
        answer(
            "422 Unprocessable Entity",
            "application/problem+json",
            "",
            problem,
        ),
    );
    let error = LockClient::new(&config(&base, Duration::from_secs(5)))
        .acquire("x", " ", 30)
        .unwrap_err();
    let ClientError::Problem(problem) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (problem.status, problem.title.as_str()),
        (422, "Unprocessable Entity")
    );
    assert_eq!(problem.detail, "invalid input: owner");
    assert!(problem.kind.ends_with("validation-failed"));
    assert_eq!(problem.errors[0].field, "owner");
    assert_eq!(problem.errors[0].code, "empty");

    let unavailable = r#"{"type":"/problems/service-unavailable","title":"Service Unavailable","status":503,"detail":"retry later","instance":"/locks/x"}"#;
    let (base, _) = peer(
        Duration::ZERO,
        answer(
            "503 Service Unavailable",
            "application/problem+json",
            "retry-after: 1\r\n",
            unavailable,
        ),
    );
    let error = LockClient::new(&config(&base, Duration::from_secs(5)))
        .acquire("x", "o", 30)
        .unwrap_err();
    assert_eq!(error.status(), Some(503));
    assert!(matches!(&error, ClientError::Problem(p) if p.retry_after_seconds == Some(1)));

    let forbidden = r#"{"type":"/problems/forbidden","title":"Forbidden","status":403,"detail":"held by another owner","instance":"/locks/x/renew"}"#;
    let (base, _) = peer(
        Duration::ZERO,
        answer("403 Forbidden", "application/problem+json", "", forbidden),
    );
    let renewed = LockClient::new(&config(&base, Duration::from_secs(5)))
        .renew("x", "o", 30)
        .expect("an outcome");
    assert_eq!(renewed, Renewed::Forbidden);

    // Not a problem document: still an error, with the status and the body.
    let (base, _) = peer(
        Duration::ZERO,
        answer("502 Bad Gateway", "text/html", "", "<h1>bad</h1>"),
    );
    let error = LockClient::new(&config(&base, Duration::from_secs(5)))
        .status("x")
        .unwrap_err();
    assert!(
        matches!(&error, ClientError::Unexpected { status: 502, body } if body.contains("bad")),
        "{error:?}"
    );
}

#[test]
fn fence_checks_send_the_token_and_read_each_verdict() {
    let fast = Duration::from_secs(5);
    let valid = r#"{"valid":true,"lock":{"resource":"a/b","owner":"o","acquired_at":"2026-11-29T21:32:27.123Z","expires_at":"2026-11-29T21:32:57.123Z","fencing_token":17,"mode":"exclusive"}}"#;
    let (base, seen) = peer(
        Duration::ZERO,
        answer("200 OK", "application/json", "", valid),
    );
    let client = LockClient::new(&config(&base, fast));
    match client.check_fence("a/b", 17).expect("an answer") {
        lock_client::Fence::Valid(lease) => assert_eq!(lease.fencing_token, 17),
        other => panic!("{other:?}"),
    }
    let head = seen.recv().expect("request").head;
    assert!(
        head.starts_with("GET /locks/a%2Fb/fence?token=17 "),
        "{head}"
    );

    for (body, current) in [
        (r#"{"valid":false,"current":18}"#, Some(18)),
        (r#"{"valid":false,"current":null}"#, None),
    ] {
        let (base, seen) = peer(
            Duration::ZERO,
            answer("200 OK", "application/json", "", body),
        );
        let client = LockClient::new(&config(&base, fast));
        let verdict = client.check_permit_fence("exports", 3).expect("an answer");
        assert_eq!(verdict, lock_client::Fence::Stale { current });
        let head = seen.recv().expect("request").head;
        assert!(
            head.starts_with("GET /semaphores/exports/fence?token=3 "),
            "{head}"
        );
    }
}

/// A set, permits and a campaign under a session: the session in place of the holder and TTL,
/// on the same paths, the answers read as without one.
#[test]
fn acquires_under_a_session_send_the_session_in_place_of_the_holder() {
    let fast = Duration::from_secs(5);
    let granted_set = r#"{"acquired":true,"locks":[{"resource":"a/b","owner":"o","session":"S1","acquired_at":"2026-11-29T21:32:27.123Z","expires_at":"2026-11-29T21:32:57.123Z","fencing_token":17}]}"#;
    let (base, seen) = peer(
        Duration::ZERO,
        answer("200 OK", "application/json", "", granted_set),
    );
    let client = LockClient::new(&config(&base, fast));
    let locks = [
        lock_client::LockSpec::exclusive("a/b"),
        lock_client::LockSpec::shared("c"),
    ];
    match client
        .acquire_all_in_session("S1", &locks, 4, None)
        .expect("an answer")
    {
        lock_client::LocksAcquired::Granted(leases) => assert_eq!(leases[0].fencing_token, 17),
        other => panic!("{other:?}"),
    }
    let seen = seen.recv().expect("request");
    assert!(
        seen.head.starts_with("POST /locks HTTP/1.1"),
        "{}",
        seen.head
    );
    let body: serde_json::Value = serde_json::from_str(&seen.body).expect("json");
    assert_eq!(
        body,
        serde_json::json!({"session": "S1", "wait_seconds": 4,
                           "locks": [{"resource": "a/b"}, {"resource": "c", "mode": "shared"}]})
    );

    let (base, seen) = peer(
        Duration::ZERO,
        answer(
            "200 OK",
            "application/json",
            "retry-after: 2\r\n",
            r#"{"acquired":false,"name":"exports","limit":3,"available":1}"#,
        ),
    );
    let client = LockClient::new(&config(&base, fast));
    let outcome = client
        .acquire_permits_in_session("exports", "S1", 3, 2, 0)
        .expect("an answer");
    assert_eq!(
        outcome,
        lock_client::PermitsAcquired::Unavailable {
            available: 1,
            retry_after_seconds: Some(2)
        }
    );
    let seen = seen.recv().expect("request");
    assert!(
        seen.head.starts_with("POST /semaphores/exports "),
        "{}",
        seen.head
    );
    let body: serde_json::Value = serde_json::from_str(&seen.body).expect("json");
    assert_eq!(
        body,
        serde_json::json!({"session": "S1", "limit": 3, "permits": 2})
    );

    let (base, seen) = peer(
        Duration::ZERO,
        answer(
            "200 OK",
            "application/json",
            "",
            r#"{"elected":false,"leader":null}"#,
        ),
    );
    let client = LockClient::new(&config(&base, fast));
    let outcome = client
        .campaign_in_session("primary", "S1", 3, Some(&serde_json::json!("10.0.0.7")))
        .expect("an answer");
    assert!(
        matches!(
            outcome,
            lock_client::Campaigned::NotElected { leader: None, .. }
        ),
        "{outcome:?}"
    );
    let seen = seen.recv().expect("request");
    assert!(
        seen.head.starts_with("POST /elections/primary/campaign "),
        "{}",
        seen.head
    );
    let body: serde_json::Value = serde_json::from_str(&seen.body).expect("json");
    assert_eq!(
        body,
        serde_json::json!({"session": "S1", "wait_seconds": 3, "value": "10.0.0.7"})
    );
}
