//! Two lockd processes on one database (the same SQLite file, or the same PostgreSQL database):
//! together they must behave as one lock service. Holds never overlap across instances, a race
//! for an expired lock has one winner, an instance killed while holding locks leaves them,
//! unchanged until they expire, to the other, and a waiter on one is served when the other
//! releases.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::holds::{assert_holds_never_overlap, contention_seconds, Hold};
use crate::server::{timestamp_ms, TestServer};

on_both_backends!(
    clients_of_two_instances_never_hold_a_resource_at_once,
    a_race_for_an_expired_lock_across_two_instances_has_one_winner,
    locks_of_an_instance_killed_with_9_stay_held_until_they_expire,
    a_waiter_on_one_instance_is_served_when_the_other_releases,
);

const CLIENTS: usize = 32;
const RESOURCES: usize = 4;

/// Starts two instances on the database.
fn two_instances(db: &TestDatabase) -> [Arc<TestServer>; 2] {
    [
        Arc::new(TestServer::start(db, &[])),
        Arc::new(TestServer::start(db, &[])),
    ]
}

fn backend(db: &TestDatabase) -> &'static str {
    if db.is_postgres() {
        "postgres"
    } else {
        "sqlite"
    }
}

/// What one client did: its grants, how many requests it sent and were denied, what went wrong.
#[derive(Default)]
struct ClientReport {
    holds: Vec<Hold>,
    requests: u64,
    denials: u64,
    failures: Vec<String>,
}

fn clients_of_two_instances_never_hold_a_resource_at_once(db: TestDatabase) {
    let seconds = contention_seconds();
    let instances = two_instances(&db);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let home = Arc::clone(&instances[client % 2]);
            let other = Arc::clone(&instances[(client + 1) % 2]);
            std::thread::spawn(move || {
                let owner = format!("client-{client}");
                let mut report = ClientReport::default();
                let mut round = client;
                while Instant::now() < deadline {
                    round += 1;
                    let name = format!("res-{}", round % RESOURCES);
                    let reply = home.acquire(&name, &owner, 30);
                    report.requests += 1;
                    if reply.status == 200
                        && reply.body == json!({"acquired": false, "resource": name})
                    {
                        report.denials += 1;
                        continue;
                    }
                    let lock = &reply.body["lock"];
                    let token = lock["fencing_token"].as_i64().filter(|_| {
                        reply.status == 200
                            && reply.body["acquired"] == true
                            && lock["owner"] == owner.as_str()
                            && lock["resource"] == name.as_str()
                    });
                    let Some(token) = token else {
                        report.failures.push(format!("acquire {name}: {reply:?}"));
                        continue;
                    };
                    let granted = Instant::now();
                    // While we hold it, the other instance must say we hold it, with our token.
                    let status = other.status(&name);
                    report.requests += 1;
                    if status.status != 200
                        || status.body["owner"] != owner.as_str()
                        || status.body["fencing_token"] != token
                    {
                        report.failures.push(format!(
                            "while {owner} holds {name} with {token}, the other instance says: \
                             {status:?}"
                        ));
                    }
                    // Release through either instance, turn about.
                    let releaser = if report.holds.len() % 2 == 0 {
                        &home
                    } else {
                        &other
                    };
                    let releasing = Instant::now();
                    let released = releaser.release(&name, &owner);
                    report.requests += 1;
                    if released.status != 204 {
                        report
                            .failures
                            .push(format!("release {name} with {token}: {released:?}"));
                    }
                    report.holds.push(Hold {
                        resource: name,
                        token,
                        granted,
                        releasing,
                    });
                }
                report
            })
        })
        .collect();

    let mut holds: Vec<Hold> = Vec::new();
    let mut grants_per_instance = [0usize; 2];
    let (mut requests, mut denials) = (0, 0);
    let mut failures = Vec::new();
    for (client, worker) in workers.into_iter().enumerate() {
        let report = worker.join().expect("client thread");
        grants_per_instance[client % 2] += report.holds.len();
        holds.extend(report.holds);
        requests += report.requests;
        denials += report.denials;
        failures.extend(report.failures);
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}\nstderr of instance A: {:#?}\nstderr of instance B: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)],
        instances[0].drain_stderr(),
        instances[1].drain_stderr(),
    );
    assert_holds_never_overlap(&holds);
    let grants = holds.len();
    eprintln!(
        "multi-instance ({}): {seconds} s, {CLIENTS} clients over 2 instances, {RESOURCES} \
         resources: {grants} grants ({} through A, {} through B), {denials} denials, {requests} \
         requests ({:.0} req/s), 0 failures",
        backend(&db),
        grants_per_instance[0],
        grants_per_instance[1],
        requests as f64 / seconds as f64
    );
    assert!(
        grants > 50,
        "too little progress to prove anything: {grants} grants"
    );
    assert!(
        grants_per_instance.iter().all(|&g| g > 0),
        "both instances granted locks: {grants_per_instance:?}"
    );
    for (name, instance) in ["A", "B"].into_iter().zip(&instances) {
        let stderr = instance.drain_stderr().join("\n");
        assert!(
            !stderr.contains("database is locked"),
            "instance {name}: {stderr}"
        );
    }
}

fn a_race_for_an_expired_lock_across_two_instances_has_one_winner(db: TestDatabase) {
    let [a, b] = two_instances(&db);
    let expired_token = a.acquire("contended", "first-holder", 1).token();
    std::thread::sleep(Duration::from_millis(1_100));
    a.status("contended").assert_problem(404, "not-found");
    b.status("contended").assert_problem(404, "not-found");

    let barrier = Arc::new(Barrier::new(CLIENTS));
    let racers: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let server = Arc::clone(if i % 2 == 0 { &a } else { &b });
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                server.acquire("contended", &format!("racer-{i}"), 30)
            })
        })
        .collect();
    let replies: Vec<_> = racers
        .into_iter()
        .map(|r| r.join().expect("racer"))
        .collect();
    assert!(replies.iter().all(|r| r.status == 200), "{replies:#?}");
    let (winners, losers): (Vec<_>, Vec<_>) =
        replies.iter().partition(|r| r.body["acquired"] == true);
    assert_eq!(winners.len(), 1, "exactly one winner: {replies:#?}");
    for loser in &losers {
        assert_eq!(
            loser.body,
            json!({"acquired": false, "resource": "contended"})
        );
    }
    let winner = winners[0].granted();
    let token = winners[0].token();
    assert!(
        token > expired_token,
        "the winner's token {token} exceeds the expired lock's {expired_token}"
    );
    assert!(winner["owner"]
        .as_str()
        .is_some_and(|o| o.starts_with("racer-")));
    assert_eq!(&a.status("contended").body, winner, "instance A");
    assert_eq!(&b.status("contended").body, winner, "instance B");
}

/// How long the waiters of [`a_waiter_on_one_instance_is_served_when_the_other_releases`] wait:
/// less than the 5 s after which an instance looks at its waiting locks by itself even with
/// hints, so a grant within it shows that the other instance's release was heard (PostgreSQL:
/// its `NOTIFY`; SQLite: its commit, seen by the waiter's instance within about 5 ms, or 1 s
/// for the first wait of an instance), and far more than hearing it takes on a loaded machine.
const HANDOFF_WAIT_SECONDS: i64 = 4;

/// The lock goes back and forth between the instances three times: each time its holder
/// releases on one while a waiter stands in line on the other, and the waiter is granted the
/// lock, with a larger token, within its wait.
fn a_waiter_on_one_instance_is_served_when_the_other_releases(db: TestDatabase) {
    let [a, b] = two_instances(&db);
    let mut holder = (Arc::clone(&a), "holder-0".to_owned());
    let mut token = a.acquire("handoff", "holder-0", 60).token();
    for round in 1..=3 {
        let waiter = if round % 2 == 1 { &b } else { &a };
        let owner = format!("holder-{round}");
        let waiting = {
            let waiter = Arc::clone(waiter);
            let owner = owner.clone();
            std::thread::spawn(move || {
                waiter.send(
                    "POST",
                    "/locks/handoff",
                    Some(&json!({
                        "owner": owner,
                        "ttl_seconds": 60,
                        "wait_seconds": HANDOFF_WAIT_SECONDS,
                    })),
                )
            })
        };
        // The waiter stands in line (its instance has looked at the lock and found it held).
        std::thread::sleep(Duration::from_millis(300));
        let released = holder.0.release("handoff", &holder.1);
        assert_eq!(released.status, 204, "round {round}: {released:?}");
        let granted = waiting.join().expect("waiter");
        assert_eq!(
            granted.body["acquired"], true,
            "round {round}: the waiter on the other instance was not served within \
             {HANDOFF_WAIT_SECONDS} s of the release: {granted:?}"
        );
        assert_eq!(granted.granted()["owner"], owner.as_str());
        let next = granted.token();
        assert!(next > token, "round {round}: token {next} after {token}");
        token = next;
        holder = (Arc::clone(waiter), owner);
    }
}

fn locks_of_an_instance_killed_with_9_stay_held_until_they_expire(db: TestDatabase) {
    let [a, b] = two_instances(&db);
    let held: Vec<Value> = (0..4)
        .map(|i| {
            a.acquire(&format!("job:{i}"), &format!("worker-{i}"), 2)
                .granted()
                .clone()
        })
        .collect();
    Arc::into_inner(a)
        .expect("no other handle to instance A")
        .kill9();

    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(
            &b.status(resource).body,
            lock,
            "{resource}: B serves the lock of the killed instance unchanged"
        );
        assert_eq!(
            b.acquire(resource, "another-owner", 30).body,
            json!({"acquired": false, "resource": resource}),
            "{resource} is still held"
        );
    }

    let last_expiry = held
        .iter()
        .map(|l| timestamp_ms(&l["expires_at"]))
        .max()
        .expect("expiries");
    let now_ms = i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_millis(),
    )
    .expect("milliseconds fit i64");
    let wait_ms = u64::try_from(last_expiry + 200 - now_ms).unwrap_or(0);
    std::thread::sleep(Duration::from_millis(wait_ms));

    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        b.status(resource).assert_problem(404, "not-found");
        let again = b.acquire(resource, "successor", 30);
        assert_eq!(again.granted()["owner"], "successor");
        let old = lock["fencing_token"].as_i64().expect("token");
        assert!(
            again.token() > old,
            "{resource}: the new grant's token {} exceeds the expired one's {old}",
            again.token()
        );
    }
}
