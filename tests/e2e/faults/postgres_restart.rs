//! PostgreSQL restarted (`pg_ctl restart -m fast`) under load, with two lockd instances on it:
//! every answer is a 2xx, a 409 of the workload or a 503 with `Retry-After`, never a 500; grants
//! succeed again within 2 s of PostgreSQL accepting connections; every lease acknowledged
//! before the restart is still held, with its token; and the `LISTEN` connection comes back: a
//! release through one instance wakes a waiter on the other at once, not at its 5 s safety look.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::pg_cluster::Cluster;
use crate::server::{Client, TestServer};

/// Grants must succeed again this soon after PostgreSQL accepts connections.
const RECOVERY_WITHIN: Duration = Duration::from_secs(2);
/// Load threads per instance.
const CLIENTS: usize = 3;

#[test]
fn a_postgres_restart_under_load_breaks_no_promise_and_recovers_within_2_s() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let servers = [
        TestServer::start_on(&cluster.url(), &[]),
        TestServer::start_on(&cluster.url(), &[]),
    ];
    let held: Vec<Value> = (0..4)
        .map(|i| {
            servers[i % 2]
                .acquire(&format!("held:{i}"), "holder", 300)
                .granted()
                .clone()
        })
        .collect();

    let stop = Arc::new(AtomicBool::new(false));
    let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let load: Vec<_> = (0..CLIENTS * 2)
        .map(|n| {
            let client = servers[n % 2].client();
            let (stop, answers) = (Arc::clone(&stop), Arc::clone(&answers));
            std::thread::spawn(move || cycle(&client, n, &stop, &answers))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));

    let accepting = cluster.restart_fast();
    std::thread::sleep(RECOVERY_WITHIN + Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for thread in load {
        thread.join().expect("a load thread");
    }
    let answers = answers.lock().expect("answers");
    let bad: Vec<_> = answers
        .iter()
        .filter(|a| !a.what.starts_with('2') && a.what != "503+retry-after")
        .collect();
    assert!(bad.is_empty(), "answers that are not 2xx or 503: {bad:?}");
    // The first grant asked for after PostgreSQL accepted connections, counted to its answer
    // (a grant sent before the restart and answered after proves nothing).
    let first_grant = answers
        .iter()
        .filter(|a| a.granted && a.sent > accepting)
        .map(|a| a.answered - accepting)
        .min()
        .expect("a grant after the restart");
    let refused = answers.iter().filter(|a| a.what.starts_with('5')).count();
    eprintln!(
        "postgres restart: first grant {first_grant:?} after PostgreSQL accepted connections; \
         {refused} answers 503 of {}",
        answers.len()
    );
    assert!(first_grant <= RECOVERY_WITHIN, "{first_grant:?}");

    for (i, lock) in held.iter().enumerate() {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&servers[i % 2].status(resource).body, lock, "{resource}");
        assert_eq!(
            &servers[1 - i % 2].status(resource).body,
            lock,
            "{resource}"
        );
    }

    // The LISTEN connection is back: a waiter on one instance hears a release on the other.
    let waiter = servers[1].client();
    let waiting = std::thread::spawn(move || {
        waiter.send(
            "POST",
            "/locks/held:0",
            Some(&json!({"owner": "waiter", "ttl_seconds": 30, "wait_seconds": 10})),
        )
    });
    // Released only once the waiter is queued on the other instance, so that only a hint can
    // wake it before its 5 s safety look.
    let queued = Instant::now();
    while servers[1].send("GET", "/locks?prefix=held:0", None).body["locks"][0]["waiting"] != 1 {
        assert!(
            queued.elapsed() < Duration::from_secs(5),
            "the waiter never queued"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let released = Instant::now();
    assert_eq!(servers[0].release("held:0", "holder").status, 204);
    let reply = waiting.join().expect("the waiter").expect("an answer");
    let woken = released.elapsed();
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    assert!(
        woken < Duration::from_secs(2),
        "the waiter was granted {woken:?} after the release: no notification, its safety look"
    );
    for server in &servers {
        let stderr = server.drain_stderr().join("\n");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// One answer of the load.
#[derive(Debug)]
struct Answer {
    sent: Instant,
    answered: Instant,
    /// A grant.
    granted: bool,
    /// Its status, or what went wrong.
    what: String,
}

/// Acquire and release one resource of this client's until told to stop, recording every
/// answer.
fn cycle(client: &Client, n: usize, stop: &AtomicBool, answers: &Mutex<Vec<Answer>>) {
    let resource = format!("load:{n}");
    let record = |sent: Instant, granted: bool, what: String| {
        answers.lock().expect("answers").push(Answer {
            sent,
            answered: Instant::now(),
            granted,
            what,
        });
    };
    let describe = |reply: &crate::server::Reply| match reply.status {
        503 if reply.header("retry-after").is_some() => "503+retry-after".to_owned(),
        status => format!("{status} {}", reply.body),
    };
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        match client.acquire(&resource, "loader", 30) {
            Ok(reply) if reply.status == 200 && reply.body["acquired"] == true => {
                record(sent, true, "200".to_owned());
                let sent = Instant::now();
                match client.release(&resource, "loader") {
                    // A release answered 503 may have happened: the next acquire re-grants.
                    Ok(reply) => record(sent, false, describe(&reply)),
                    Err(error) => record(sent, false, format!("no reply: {error}")),
                }
            }
            Ok(reply) => {
                record(sent, false, describe(&reply));
                if reply.status == 503 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(error) => record(sent, false, format!("no reply: {error}")),
        }
    }
}
