//! kill -9 in the middle of a load, on both backends. After a restart on the same database, every
//! grant whose answer a client received is still held, unchanged, unless that client had sent
//! its release; a lock nobody heard of belongs to an acquire that was in flight at the kill; and
//! every fencing token issued after the restart exceeds every token issued before it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::Value;

use crate::server::{Client, NoReply, TestServer};

on_both_backends!(acknowledged_grants_survive_kill_9_under_load);

const CLIENTS: usize = 64;
const RESOURCES: usize = 16;
const TTL_SECONDS: i64 = 60;
/// How long the clients run before the kill.
const LOAD_BEFORE_KILL: Duration = Duration::from_secs(2);
/// How long a client holds each lock it gets before releasing it.
const HOLD: Duration = Duration::from_millis(50);
/// Bounds on each client, should the server never go away.
const MAX_ROUNDS: usize = 100_000;
const MAX_RUN: Duration = Duration::from_secs(30);

/// A grant a client received, and how far its release got.
struct Grant {
    lock: Value,
    release: Release,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Release {
    NotSent,
    /// Sent, but no answer came back: it may or may not have happened.
    Sent,
    Acknowledged,
}

/// What one client saw until the server went away.
struct Journal {
    owner: String,
    grants: Vec<Grant>,
    /// The resource of an acquire that was sent but never answered.
    acquiring: Option<String>,
    failures: Vec<String>,
}

impl Journal {
    fn token(lock: &Value) -> i64 {
        lock["fencing_token"].as_i64().expect("integer token")
    }
}

fn acknowledged_grants_survive_kill_9_under_load(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let killed = AtomicBool::new(false);
    let journals: Vec<Journal> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|index| {
                let (client, killed) = (server.client(), &killed);
                scope.spawn(move || cycle_until_the_server_is_gone(&client, index, killed))
            })
            .collect();
        std::thread::sleep(LOAD_BEFORE_KILL);
        killed.store(true, Ordering::SeqCst);
        server.kill9();
        clients
            .into_iter()
            .map(|c| c.join().expect("client thread"))
            .collect()
    });
    let failures: Vec<_> = journals.iter().flat_map(|j| &j.failures).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    let grants: Vec<(&Journal, &Grant)> = journals
        .iter()
        .flat_map(|j| j.grants.iter().map(move |g| (j, g)))
        .collect();
    let count = |release| grants.iter().filter(|(_, g)| g.release == release).count();
    eprintln!(
        "kill -9 under load ({}): {} grants received before the kill; at the kill {} held, {} \
         with a release in flight, {} acquires in flight",
        backend(&db),
        grants.len(),
        count(Release::NotSent),
        count(Release::Sent),
        journals.iter().filter(|j| j.acquiring.is_some()).count()
    );
    assert!(
        grants.len() > 50 && count(Release::NotSent) > 0,
        "too little progress to prove anything: {} grants, {} held at the kill",
        grants.len(),
        count(Release::NotSent)
    );

    let restarted = TestServer::start(&db, &[]);
    let mut max_before = grants
        .iter()
        .map(|(_, g)| Journal::token(&g.lock))
        .max()
        .unwrap_or(0);
    let mut survivors = Vec::new();
    for index in 0..RESOURCES {
        let resource = format!("res-{index}");
        let on_resource: Vec<_> = grants
            .iter()
            .filter(|(_, g)| g.lock["resource"] == resource.as_str())
            .collect();
        let reply = restarted.status(&resource);
        let held = match reply.status {
            200 => Some(reply.body.clone()),
            404 => None,
            _ => panic!("{resource} after the restart: {reply:?}"),
        };
        for (journal, grant) in &on_resource {
            if grant.release == Release::NotSent {
                assert_eq!(
                    held.as_ref(),
                    Some(&grant.lock),
                    "{} received {resource} and never sent its release, yet after the restart \
                     the server says {reply:?}",
                    journal.owner
                );
            }
        }
        let Some(lock) = held else { continue };
        let token = Journal::token(&lock);
        let received = on_resource
            .iter()
            .any(|(_, g)| g.release != Release::Acknowledged && g.lock == lock);
        let in_flight = journals.iter().any(|j| {
            j.owner == lock["owner"].as_str().unwrap_or_default()
                && j.acquiring.as_deref() == Some(resource.as_str())
        }) && on_resource
            .iter()
            .all(|(_, g)| Journal::token(&g.lock) < token);
        assert!(
            received || in_flight,
            "{resource} is held after the restart by a grant no client may hold: {lock}"
        );
        max_before = max_before.max(token);
        survivors.push(lock);
    }

    // Tokens after the restart: on every resource (freed by its holder first) and a new one.
    for lock in &survivors {
        let (resource, owner) = (lock["resource"].as_str(), lock["owner"].as_str());
        let released = restarted.release(resource.expect("resource"), owner.expect("owner"));
        assert_eq!(released.status, 204, "{released:?}");
    }
    for resource in (0..RESOURCES)
        .map(|i| format!("res-{i}"))
        .chain(["brand-new".to_owned()])
    {
        let token = restarted
            .acquire(&resource, "after-restart", TTL_SECONDS)
            .token();
        assert!(
            token > max_before,
            "{resource}: token {token} after the restart does not exceed {max_before} from \
             before it"
        );
    }
    let stderr = restarted.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Acquires and releases resources in turn until the server stops answering.
fn cycle_until_the_server_is_gone(client: &Client, index: usize, killed: &AtomicBool) -> Journal {
    let owner = format!("client-{index}");
    let mut journal = Journal {
        owner: owner.clone(),
        grants: Vec::new(),
        acquiring: None,
        failures: Vec::new(),
    };
    // No answer is expected to be missing before the kill.
    let gone = |failure: NoReply, journal: &mut Journal| {
        if !killed.load(Ordering::SeqCst) {
            journal
                .failures
                .push(format!("{owner} before the kill: {failure}"));
        }
    };
    let started = Instant::now();
    for round in 0..MAX_ROUNDS {
        if started.elapsed() > MAX_RUN {
            journal
                .failures
                .push(format!("{owner}: lockd never went away"));
            break;
        }
        // From the kill on, send nothing more: what a client sent is then exactly what it sent
        // before the kill.
        if killed.load(Ordering::SeqCst) {
            break;
        }
        let resource = format!("res-{}", (index + round) % RESOURCES);
        journal.acquiring = Some(resource.clone());
        let reply = match client.acquire(&resource, &owner, TTL_SECONDS) {
            Ok(reply) => reply,
            Err(failure) => {
                gone(failure, &mut journal);
                break;
            }
        };
        journal.acquiring = None;
        let lock = &reply.body["lock"];
        match (reply.status, &reply.body["acquired"]) {
            (200, Value::Bool(false)) => continue,
            (200, Value::Bool(true))
                if lock["owner"] == owner.as_str() && lock["resource"] == resource.as_str() => {}
            _ => {
                journal
                    .failures
                    .push(format!("acquire {resource}: {reply:?}"));
                continue;
            }
        }
        journal.grants.push(Grant {
            lock: lock.clone(),
            release: Release::NotSent,
        });
        // Hold it a moment, and check that the server says we hold it.
        match client.status(&resource) {
            Ok(status) if status.status == 200 && &status.body == lock => {}
            Ok(status) => journal
                .failures
                .push(format!("while {owner} holds {lock}: {status:?}")),
            Err(failure) => {
                gone(failure, &mut journal);
                break;
            }
        }
        std::thread::sleep(HOLD);
        if killed.load(Ordering::SeqCst) {
            break;
        }
        let grant = journal.grants.last_mut().expect("the grant just pushed");
        grant.release = Release::Sent;
        let released = client.release(&resource, &owner);
        match released {
            Ok(reply) if reply.status == 204 => grant.release = Release::Acknowledged,
            Ok(reply) => journal
                .failures
                .push(format!("release {resource}: {reply:?}")),
            Err(failure) => {
                gone(failure, &mut journal);
                break;
            }
        }
    }
    journal
}

fn backend(db: &TestDatabase) -> &'static str {
    if db.is_postgres() {
        "postgres"
    } else {
        "sqlite"
    }
}
