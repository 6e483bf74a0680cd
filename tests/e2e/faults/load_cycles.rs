//! The load of the PostgreSQL fault tests: clients that acquire and release a resource of their
//! own in a loop, recording every answer with when it was sent and answered, and each grant's
//! fencing token. And the check that the instances' hints work again after the fault.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::server::{Client, Reply, TestServer};

/// One answer of the load.
#[derive(Debug)]
pub struct Answer {
    pub sent: Instant,
    pub answered: Instant,
    /// The resource and fencing token of a grant.
    pub granted: Option<(String, i64)>,
    /// Its status (`503+retry-after` for a 503 that says when to retry), or what went wrong.
    pub what: String,
}

/// Load threads, one per client, until [`Load::stop`].
pub struct Load {
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts a thread per client, the `n`th cycling `load:n`.
    pub fn start(clients: Vec<Client>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
        let threads = clients
            .into_iter()
            .enumerate()
            .map(|(n, client)| {
                let (stop, answers) = (Arc::clone(&stop), Arc::clone(&answers));
                std::thread::spawn(move || cycle(&client, n, &stop, &answers))
            })
            .collect();
        Self {
            stop,
            answers,
            threads,
        }
    }

    /// Stops every thread and returns every answer.
    pub fn stop(self) -> Vec<Answer> {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().expect("a load thread");
        }
        std::mem::take(&mut *self.answers.lock().expect("answers"))
    }
}

/// The answers that are neither a 2xx nor a 503 with `Retry-After` (a 500, a hang past the
/// client's timeout, anything else).
pub fn unexpected(answers: &[Answer]) -> Vec<&Answer> {
    answers
        .iter()
        .filter(|a| !a.what.starts_with('2') && a.what != "503+retry-after")
        .collect()
}

/// How long after `since` the first grant asked for after it was answered (a grant sent before
/// and answered after proves nothing).
pub fn first_grant_after(answers: &[Answer], since: Instant) -> Option<Duration> {
    answers
        .iter()
        .filter(|a| a.granted.is_some() && a.sent > since)
        .map(|a| a.answered - since)
        .min()
}

fn cycle(client: &Client, n: usize, stop: &AtomicBool, answers: &Mutex<Vec<Answer>>) {
    let resource = format!("load:{n}");
    let record = |sent: Instant, granted: Option<(String, i64)>, what: String| {
        answers.lock().expect("answers").push(Answer {
            sent,
            answered: Instant::now(),
            granted,
            what,
        });
    };
    let describe = |reply: &Reply| match reply.status {
        503 if reply.header("retry-after").is_some() => "503+retry-after".to_owned(),
        status => format!("{status} {}", reply.body),
    };
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        match client.acquire(&resource, "loader", 30) {
            Ok(reply) if reply.status == 200 && reply.body["acquired"] == true => {
                let token = reply.body["lock"]["fencing_token"].as_i64().expect("token");
                record(sent, Some((resource.clone(), token)), "200".to_owned());
                let sent = Instant::now();
                match client.release(&resource, "loader") {
                    // A release answered 503 may have happened: the next acquire re-grants.
                    Ok(reply) => record(sent, None, describe(&reply)),
                    Err(error) => record(sent, None, format!("no reply: {error}")),
                }
            }
            Ok(reply) => {
                record(sent, None, describe(&reply));
                if reply.status == 503 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(error) => record(sent, None, format!("no reply: {error}")),
        }
    }
}

/// The `LISTEN` connection works: a waiter on `servers[1]` is woken by a release of `resource`
/// (held by `holder`) through `servers[0]` within 2 s, not by its 5 s safety look.
pub fn a_release_wakes_a_waiter_on_the_other(
    servers: &[TestServer; 2],
    resource: &str,
    holder: &str,
) {
    let waiter = servers[1].client();
    let path = format!("/locks/{resource}");
    let waiting = std::thread::spawn(move || {
        waiter.send(
            "POST",
            &path,
            Some(&json!({"owner": "waiter", "ttl_seconds": 30, "wait_seconds": 10})),
        )
    });
    // Released only once the waiter is queued on the other instance, so that only a hint can
    // wake it before its 5 s safety look.
    let queued = Instant::now();
    let listing = format!("/locks?prefix={resource}");
    while servers[1].send("GET", &listing, None).body["locks"][0]["waiting"] != 1 {
        assert!(
            queued.elapsed() < Duration::from_secs(5),
            "the waiter never queued"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let released = Instant::now();
    assert_eq!(servers[0].release(resource, holder).status, 204);
    let reply = waiting.join().expect("the waiter").expect("an answer");
    let woken = released.elapsed();
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    assert!(
        woken < Duration::from_secs(2),
        "the waiter was granted {woken:?} after the release: no notification, its safety look"
    );
}

/// Two instances on `url`, holding `held:0` to `held:3` (300 s leases of `holder`), alternately
/// through each: the instances, and the leases as granted.
pub fn two_instances_holding_four(url: &str) -> ([TestServer; 2], Vec<serde_json::Value>) {
    let servers = [
        TestServer::start_on(url, &[]),
        TestServer::start_on(url, &[]),
    ];
    let held = (0..4)
        .map(|i| {
            servers[i % 2]
                .acquire(&format!("held:{i}"), "holder", 300)
                .granted()
                .clone()
        })
        .collect();
    (servers, held)
}

/// Acquires `resource` for `owner` until it is granted, within `within`: the grant. Meanwhile
/// every answer must be a 503 with `Retry-After`, of type `/problems/{refusal}` when given.
pub fn grant_when_back(
    server: &TestServer,
    resource: &str,
    owner: &str,
    refusal: Option<&str>,
    within: Duration,
) -> Reply {
    let since = Instant::now();
    loop {
        let reply = server.acquire(resource, owner, 30);
        if reply.status == 200 {
            return reply;
        }
        match refusal {
            Some(slug) => reply.assert_problem(503, slug),
            None => assert_eq!(reply.status, 503, "{reply:?}"),
        }
        assert!(reply.header("retry-after").is_some(), "{reply:?}");
        assert!(
            since.elapsed() < within,
            "no grant within {within:?}: {reply:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
