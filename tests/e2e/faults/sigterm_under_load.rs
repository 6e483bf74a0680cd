//! SIGTERM in the middle of a load, on both backends: every answer lockd gives is whole and
//! well-formed (no 5xx), a request in flight at the signal is finished, new connections are
//! refused soon after the signal, and lockd exits 0 within its grace period.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, Client, NoReply, Reply, TestServer};

on_both_backends!(sigterm_under_load_finishes_what_it_answers_and_exits_0);

const CLIENTS: usize = 32;
const RESOURCES: usize = 8;
const GRACE: Duration = Duration::from_secs(10);
const LOAD_BEFORE_SIGTERM: Duration = Duration::from_millis(1_500);
/// How long the request in flight at the signal goes on after it: past actix's first two
/// shutdown checks (one a second), so that a shutdown that does not wait for it cuts it.
const IN_FLIGHT_AFTER_SIGTERM: Duration = Duration::from_millis(2_500);
/// How soon after the signal new connections must be refused.
const REFUSED_WITHIN: Duration = Duration::from_secs(1);
/// Bounds on each client, should lockd never stop answering.
const MAX_ROUNDS: usize = 100_000;
const MAX_RUN: Duration = Duration::from_secs(30);

/// What one client saw.
#[derive(Default)]
struct Report {
    answered: u64,
    answered_after_sigterm: u64,
    failures: Vec<String>,
}

fn sigterm_under_load_finishes_what_it_answers_and_exits_0(db: TestDatabase) {
    let server = TestServer::start(
        &db,
        &["--shutdown-grace-seconds", &GRACE.as_secs().to_string()],
    );
    let addr: SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("lockd's address");
    let terminating = AtomicBool::new(false);
    let (reports, in_flight, refused_after, status, exit_time) = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|index| {
                let (client, terminating) = (server.client(), &terminating);
                scope.spawn(move || cycle_until_refused(&client, index, terminating))
            })
            .collect();
        let (head_sent, head_sent_rx) = mpsc::channel();
        let in_flight = scope.spawn(|| request_across_the_signal(addr, &terminating, head_sent));
        head_sent_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the slow request's head was sent");
        std::thread::sleep(LOAD_BEFORE_SIGTERM);

        terminating.store(true, Ordering::SeqCst);
        let signalled = Instant::now();
        let prober = scope.spawn(move || refused_after(addr, signalled));
        let status = server.terminate(GRACE);
        let exit_time = signalled.elapsed();
        (
            clients
                .into_iter()
                .map(|c| c.join().expect("client thread"))
                .collect::<Vec<_>>(),
            in_flight.join().expect("slow request thread"),
            prober.join().expect("prober thread"),
            status,
            exit_time,
        )
    });

    let answered: u64 = reports.iter().map(|r| r.answered).sum();
    let after: u64 = reports.iter().map(|r| r.answered_after_sigterm).sum();
    eprintln!(
        "SIGTERM under load ({}): lockd exited with {status} {exit_time:?} after the signal \
         (grace {GRACE:?}); new connections refused {refused_after:?} after it; {answered} \
         answers, {after} of them after the signal; the request in flight got {in_flight:?}",
        if db.is_postgres() {
            "postgres"
        } else {
            "sqlite"
        },
    );
    let failures: Vec<_> = reports.iter().flat_map(|r| &r.failures).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(answered > 100, "too little load: {answered} answers");
    let in_flight = in_flight.expect("the request in flight at the signal was answered whole");
    assert_eq!(in_flight.0, 200, "{in_flight:?}");
    assert_eq!(in_flight.1["acquired"], true, "{in_flight:?}");
    assert_eq!(in_flight.1["lock"]["owner"], "slow", "{in_flight:?}");
    assert!(
        refused_after.is_some_and(|t| t <= REFUSED_WITHIN),
        "new connections were refused {refused_after:?} after the signal, not within \
         {REFUSED_WITHIN:?}"
    );
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(exit_time >= IN_FLIGHT_AFTER_SIGTERM, "{exit_time:?}");
}

/// Acquires, checks and releases resources in turn until lockd stops taking requests; every
/// answer must be whole and well-formed.
fn cycle_until_refused(client: &Client, index: usize, terminating: &AtomicBool) -> Report {
    let owner = format!("client-{index}");
    let mut report = Report::default();
    let started = Instant::now();
    for round in 0..MAX_ROUNDS {
        if started.elapsed() > MAX_RUN {
            report
                .failures
                .push(format!("{owner}: lockd never stopped"));
            break;
        }
        let resource = format!("res-{}", (index + round) % RESOURCES);
        let answer = client.acquire(&resource, &owner, 60);
        let Some(reply) = report.answer(answer, terminating) else {
            break;
        };
        let lock = match granted_lock(&reply, &resource, &owner) {
            Ok(Some(lock)) => lock,
            Ok(None) => continue,
            Err(problem) => {
                report
                    .failures
                    .push(format!("acquire {resource}: {problem}"));
                continue;
            }
        };
        let Some(reply) = report.answer(client.status(&resource), terminating) else {
            break;
        };
        if reply.status != 200 || reply.body != lock {
            report.failures.push(format!(
                "status of {lock} while {owner} holds it: {reply:?}"
            ));
        }
        let answer = client.release(&resource, &owner);
        let Some(reply) = report.answer(answer, terminating) else {
            break;
        };
        if reply.status != 204 || reply.body != Value::Null {
            report.failures.push(format!("release {lock}: {reply:?}"));
        }
    }
    report
}

impl Report {
    /// The reply, counted; `None` when there is none (a failure unless lockd is terminating).
    fn answer(
        &mut self,
        answer: Result<Reply, NoReply>,
        terminating: &AtomicBool,
    ) -> Option<Reply> {
        let after_sigterm = terminating.load(Ordering::SeqCst);
        match answer {
            Ok(reply) => {
                self.answered += 1;
                self.answered_after_sigterm += u64::from(after_sigterm);
                Some(reply)
            }
            Err(NoReply::Transport(_)) if after_sigterm => None,
            Err(failure) => {
                self.failures.push(failure.to_string());
                None
            }
        }
    }
}

/// The lock of a well-formed grant, `None` for a well-formed "held by someone else".
fn granted_lock(reply: &Reply, resource: &str, owner: &str) -> Result<Option<Value>, String> {
    if reply.status != 200 || reply.content_type != "application/json" {
        return Err(format!("{reply:?}"));
    }
    if reply.body == json!({"acquired": false, "resource": resource}) {
        return Ok(None);
    }
    let lock = &reply.body["lock"];
    let well_formed = reply.body["acquired"] == true
        && lock["resource"] == resource
        && lock["owner"] == owner
        && lock["fencing_token"].as_i64().is_some_and(|t| t > 0)
        && timestamp_ms(&lock["acquired_at"]) < timestamp_ms(&lock["expires_at"]);
    if well_formed {
        Ok(Some(lock.clone()))
    } else {
        Err(format!("{reply:?}"))
    }
}

/// Sends an acquire whose body is only half sent when lockd gets SIGTERM; the rest follows
/// [`IN_FLIGHT_AFTER_SIGTERM`] later. Returns the status and body of the whole answer.
fn request_across_the_signal(
    addr: SocketAddr,
    terminating: &AtomicBool,
    head_sent: mpsc::Sender<()>,
) -> Result<(u16, Value), String> {
    let body = json!({"owner": "slow", "ttl_seconds": 60}).to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(GRACE * 2))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "POST /locks/slow HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{first}",
        body.len()
    )
    .map_err(|e| format!("send the head: {e}"))?;
    let _ = head_sent.send(());
    while !terminating.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(IN_FLIGHT_AFTER_SIGTERM);
    stream
        .write_all(rest.as_bytes())
        .map_err(|e| format!("send the rest of the body after SIGTERM: {e}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| format!("read the answer: {e} (got {response:?})"))?;
    let response = String::from_utf8(response).map_err(|e| e.to_string())?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no end of head: {response:?}"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status: {response:?}"))?;
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .ok_or_else(|| format!("no content-length: {response:?}"))?;
    if body.len() != length {
        return Err(format!(
            "cut: {} of {length} bytes: {response:?}",
            body.len()
        ));
    }
    let json = serde_json::from_str(body).map_err(|e| format!("{e}: {response:?}"))?;
    Ok((status, json))
}

/// How long after `since` connecting to `addr` was first refused (`None` if not within 10 s).
fn refused_after(addr: SocketAddr, since: Instant) -> Option<Duration> {
    while since.elapsed() < Duration::from_secs(10) {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Err(error) if error.kind() == ErrorKind::ConnectionRefused => {
                return Some(since.elapsed())
            }
            _ => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}
