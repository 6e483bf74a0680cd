//! Many clients hammering a few resources: zero 5xx, never two live holders, tokens in grant
//! order. `LOCKD_E2E_LOAD_SECONDS` changes the duration (default 10).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::holds::{assert_holds_never_overlap, contention_seconds, Hold};
use crate::server::TestServer;

on_both_backends!(sixty_four_clients_on_eight_resources_never_overlap);

const CLIENTS: usize = 64;
const RESOURCES: usize = 8;

fn sixty_four_clients_on_eight_resources_never_overlap(db: TestDatabase) {
    let seconds = contention_seconds();
    let server = Arc::new(TestServer::start(&db, &[]));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                let owner = format!("client-{client}");
                let mut holds = Vec::new();
                let mut requests = 0u64;
                let mut denials = 0u64;
                let mut failures = Vec::new();
                let mut round = client;
                while Instant::now() < deadline {
                    round += 1;
                    let name = format!("res-{}", round % RESOURCES);
                    let reply = server.acquire(&name, &owner, 5);
                    requests += 1;
                    if reply.status != 200 {
                        failures.push(format!("acquire: {reply:?}"));
                        continue;
                    }
                    if reply.body["acquired"] == false {
                        denials += 1;
                        continue;
                    }
                    let granted = Instant::now();
                    let token = reply.token();
                    // While we hold it, the server must say we hold it, with our token.
                    let status = server.status(&name);
                    requests += 1;
                    if status.body["owner"] != owner.as_str()
                        || status.body["fencing_token"] != token
                    {
                        failures.push(format!(
                            "while {owner} holds {name} with {token}: {status:?}"
                        ));
                    }
                    let releasing = Instant::now();
                    let released = server.release(&name, &owner);
                    requests += 1;
                    if released.status != 204 {
                        failures.push(format!("release: {released:?}"));
                    }
                    holds.push(Hold {
                        resource: name,
                        token,
                        granted,
                        releasing,
                    });
                }
                (holds, requests, denials, failures)
            })
        })
        .collect();

    let mut holds: Vec<Hold> = Vec::new();
    let (mut requests, mut denials) = (0, 0);
    let mut failures = Vec::new();
    for worker in workers {
        let (h, r, d, f) = worker.join().expect("client thread");
        holds.extend(h);
        requests += r;
        denials += d;
        failures.extend(f);
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert_holds_never_overlap(&holds);
    let grants = holds.len();
    let backend = if db.is_postgres() {
        "postgres"
    } else {
        "sqlite"
    };
    eprintln!(
        "load ({backend}): {seconds} s, {CLIENTS} clients, {RESOURCES} resources: {grants} grants, \
         {denials} denials, {requests} requests ({:.0} req/s), 0 failures",
        requests as f64 / seconds as f64
    );
    assert!(
        grants > 100,
        "too little progress to prove anything: {grants} grants"
    );
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("database is locked"), "{stderr}");
}
