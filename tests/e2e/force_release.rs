//! Admin keys and force-release through the real binary, on both backends: an admin key ends
//! every live lease of a lock (the exclusive holder or every reader), a semaphore (every grant)
//! or an election (the leader), each recorded in the history with the reason, and the next grant
//! has a larger token than any before; a plain key gets 403 `/problems/admin-required` and
//! another tenant's admin key 404 (its names are its own), both changing nothing; bad requests
//! are 422; and `GET /elections` lists leaders with their waiters.

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::TestServer;
use crate::tenants::{as_key, ADMIN, PLAIN};

on_both_backends!(
    an_admin_key_force_releases_every_lease_and_a_plain_key_cannot,
    every_reader_of_a_shared_lock_is_force_released,
    semaphores_and_elections_are_force_released_too,
    elections_are_listed_with_their_waiters,
);

const OTHER_ADMIN: &str = "globex-admin-key-0123456789";

fn start(db: &TestDatabase) -> (TestServer, tempfile::TempDir) {
    crate::tenants::start_with_keys(
        db,
        &[
            ("acme", ADMIN, true),
            ("acme", PLAIN, false),
            ("globex", OTHER_ADMIN, true),
        ],
    )
}

fn records(server: &TestServer, path: &str) -> Vec<Value> {
    let reply = as_key(server, ADMIN, "GET", path, None);
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut records = reply.body["records"].as_array().unwrap().clone();
    records.reverse();
    records
}

fn an_admin_key_force_releases_every_lease_and_a_plain_key_cannot(db: TestDatabase) {
    let (server, _keys) = start(&db);
    let take = |resource: &str, owner: &str| {
        let body = json!({"owner": owner, "ttl_seconds": 60, "lock_delay_seconds": 30});
        let reply = as_key(
            &server,
            PLAIN,
            "POST",
            &format!("/locks/{resource}"),
            Some(&body),
        );
        assert_eq!(reply.body["acquired"], true, "{reply:?}");
        reply.token()
    };
    let token = take("pay", "worker-9");
    let force = "/locks/pay?force=true&reason=worker-9+is+wedged";
    as_key(&server, PLAIN, "DELETE", force, None).assert_problem(403, "admin-required");
    assert_eq!(
        as_key(&server, PLAIN, "GET", "/locks/pay", None).status,
        200
    );
    // Another tenant's admin cannot reach acme's lock: its `pay` is its own, and free.
    as_key(&server, OTHER_ADMIN, "DELETE", force, None).assert_problem(404, "not-found");
    let ended = as_key(&server, ADMIN, "DELETE", force, None);
    assert_eq!(ended.status, 200, "{ended:?}");
    assert_eq!(
        ended.body,
        json!({"force_released": [{"owner": "worker-9", "fencing_token": token}]})
    );
    // Free at once despite its lock-delay, and the next grant's token is larger.
    let next = take("pay", "worker-1");
    assert!(next > token);
    let history = records(&server, "/locks/pay/history");
    assert_eq!(history[1]["event"], "force-released");
    assert_eq!(history[1]["reason"], "worker-9 is wedged");
    assert_eq!(history[1]["owner"], "worker-9");
    // Nothing held: 404, nothing recorded.
    as_key(
        &server,
        ADMIN,
        "DELETE",
        "/locks/free?force=true&reason=x",
        None,
    )
    .assert_problem(404, "not-found");
    // Bad requests change nothing.
    let held = as_key(&server, PLAIN, "GET", "/locks/pay", None);
    assert_eq!(held.body["owner"], "worker-1", "{held:?}");
    for path in [
        "/locks/pay?force=true",
        "/locks/pay?force=yes&reason=x",
        "/locks/pay?force=true&reason=",
        "/locks/pay?force=true&reason=a%0Ab",
        "/locks/pay?force=true&reason=x&owner=worker-1",
        "/locks/pay?force=true&reason=x&reason=y",
        "/locks/%00?force=true&reason=x",
    ] {
        as_key(&server, ADMIN, "DELETE", path, None).assert_problem(422, "validation-failed");
    }
    let long = format!("/locks/pay?force=true&reason={}", "x".repeat(257));
    as_key(&server, ADMIN, "DELETE", &long, None).assert_problem(422, "validation-failed");
    let with_body = as_key(
        &server,
        ADMIN,
        "DELETE",
        "/locks/pay?force=true&reason=x",
        Some(&json!({"owner": "worker-1"})),
    );
    with_body.assert_problem(422, "validation-failed");
    server
        .send("DELETE", "/locks/pay?force=true&reason=x", None)
        .assert_problem(401, "unauthorized");
    assert_eq!(
        as_key(&server, PLAIN, "GET", "/locks/pay", None).body,
        held.body
    );
}

/// The leases a force-release answered with, as `(owner, fencing_token)` in owner order.
fn ended_leases(reply: &crate::server::Reply) -> Vec<(String, i64)> {
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut ended: Vec<(String, i64)> = reply.body["force_released"]
        .as_array()
        .unwrap_or_else(|| panic!("no force_released list: {reply:?}"))
        .iter()
        .map(|lease| {
            (
                lease["owner"].as_str().unwrap().to_owned(),
                lease["fencing_token"].as_i64().unwrap(),
            )
        })
        .collect();
    ended.sort();
    ended
}

/// The `force-released` records of a history, as `(owner, fencing_token)` in owner order, each
/// asserted to carry `reason`.
fn force_released_records(history: &[Value], reason: &str) -> Vec<(String, i64)> {
    let mut forced: Vec<(String, i64)> = history
        .iter()
        .filter(|record| record["event"] == "force-released")
        .map(|record| {
            assert_eq!(record["reason"], reason, "{record}");
            (
                record["owner"].as_str().unwrap().to_owned(),
                record["fencing_token"].as_i64().unwrap(),
            )
        })
        .collect();
    forced.sort();
    forced
}

fn every_reader_of_a_shared_lock_is_force_released(db: TestDatabase) {
    let (server, _keys) = start(&db);
    let mut readers = Vec::new();
    for reader in ["r1", "r2"] {
        let body = json!({"owner": reader, "ttl_seconds": 60, "mode": "shared"});
        let reply = as_key(&server, PLAIN, "POST", "/locks/doc", Some(&body));
        readers.push((reader.to_owned(), reply.token()));
    }
    // The live leases as listed, without the time left (it runs down).
    let listed = || {
        let reply = as_key(&server, PLAIN, "GET", "/locks", None);
        let mut leases = reply.body["locks"].as_array().expect("locks").clone();
        for lease in &mut leases {
            lease
                .as_object_mut()
                .expect("a lease")
                .remove("ttl_remaining_ms");
        }
        leases
    };
    let before = listed();
    assert_eq!(before.len(), 2, "{before:?}");
    // A plain key, and another tenant's admin key: refused, and both readers still hold.
    let path = "/locks/doc?force=true&reason=reindex";
    as_key(&server, PLAIN, "DELETE", path, None).assert_problem(403, "admin-required");
    as_key(&server, OTHER_ADMIN, "DELETE", path, None).assert_problem(404, "not-found");
    assert_eq!(listed(), before);
    // The admin ends both readers at once.
    let ended = as_key(&server, ADMIN, "DELETE", path, None);
    assert_eq!(ended_leases(&ended), readers, "{ended:?}");
    as_key(&server, PLAIN, "GET", "/locks/doc", None).assert_problem(404, "not-found");
    for (reader, _) in &readers {
        let body = json!({"owner": reader, "ttl_seconds": 60});
        as_key(&server, PLAIN, "POST", "/locks/doc/renew", Some(&body))
            .assert_problem(404, "not-found");
    }
    let history = records(&server, "/locks/doc/history");
    assert_eq!(force_released_records(&history, "reindex"), readers);
    assert!(history
        .iter()
        .filter(|record| record["event"] == "force-released")
        .all(|record| record["shared"] == true));
    // A writer gets in at once, with a token larger than every reader's.
    let body = json!({"owner": "writer", "ttl_seconds": 60});
    let writer = as_key(&server, PLAIN, "POST", "/locks/doc", Some(&body)).token();
    assert!(
        readers.iter().all(|(_, token)| writer > *token),
        "writer {writer}, readers {readers:?}"
    );
}

fn semaphores_and_elections_are_force_released_too(db: TestDatabase) {
    let (server, _keys) = start(&db);
    let mut permits = Vec::new();
    for owner in ["p1", "p2"] {
        let body = json!({"owner": owner, "ttl_seconds": 60, "limit": 2});
        let reply = as_key(&server, PLAIN, "POST", "/semaphores/pool", Some(&body));
        assert_eq!(reply.body["acquired"], true, "{reply:?}");
        let token = reply.body["permit"]["fencing_token"].as_i64().unwrap();
        permits.push((owner.to_owned(), token));
    }
    let before = as_key(&server, PLAIN, "GET", "/semaphores/pool", None);
    assert_eq!(before.status, 200, "{before:?}");
    let path = "/semaphores/pool?force=true&reason=drain";
    as_key(&server, PLAIN, "DELETE", path, None).assert_problem(403, "admin-required");
    // Another tenant's admin key reaches its own `pool`, which does not exist.
    as_key(&server, OTHER_ADMIN, "DELETE", path, None).assert_problem(404, "not-found");
    assert_eq!(
        as_key(&server, PLAIN, "GET", "/semaphores/pool", None).body,
        before.body
    );
    let ended = as_key(&server, ADMIN, "DELETE", path, None);
    assert_eq!(ended_leases(&ended), permits, "{ended:?}");
    as_key(&server, PLAIN, "GET", "/semaphores/pool", None).assert_problem(404, "not-found");
    let history = records(&server, "/semaphores/pool/history");
    assert_eq!(force_released_records(&history, "drain"), permits);
    // The next grant's token is larger than any before.
    let body = json!({"owner": "p3", "ttl_seconds": 60, "limit": 2});
    let next = as_key(&server, PLAIN, "POST", "/semaphores/pool", Some(&body));
    assert_eq!(next.body["acquired"], true, "{next:?}");
    let next = next.body["permit"]["fencing_token"].as_i64().unwrap();
    assert!(
        permits.iter().all(|(_, token)| next > *token),
        "next {next}, before {permits:?}"
    );

    let body = json!({"candidate": "n1", "ttl_seconds": 60});
    let led = as_key(
        &server,
        PLAIN,
        "POST",
        "/elections/sched/campaign",
        Some(&body),
    );
    let term = led.body["leader"]["term"].as_i64().unwrap();
    let path = "/elections/sched/leader?force=true&reason=stuck+leader";
    as_key(&server, PLAIN, "DELETE", path, None).assert_problem(403, "admin-required");
    as_key(&server, OTHER_ADMIN, "DELETE", path, None).assert_problem(404, "not-found");
    assert_eq!(
        as_key(&server, PLAIN, "GET", "/elections/sched", None).body,
        led.body["leader"]
    );
    let ended = as_key(&server, ADMIN, "DELETE", path, None);
    assert_eq!(
        ended.body,
        json!({"force_released": [{"owner": "n1", "fencing_token": term}]})
    );
    as_key(&server, PLAIN, "GET", "/elections/sched", None).assert_problem(404, "not-found");
    let body = json!({"candidate": "n2", "ttl_seconds": 60});
    let next = as_key(
        &server,
        PLAIN,
        "POST",
        "/elections/sched/campaign",
        Some(&body),
    );
    assert!(next.body["leader"]["term"].as_i64().unwrap() > term);
    let history = records(&server, "/elections/sched/history");
    assert_eq!(
        force_released_records(&history, "stuck leader"),
        [("n1".to_owned(), term)]
    );
    assert_eq!(history[1]["event"], "force-released");
}

fn elections_are_listed_with_their_waiters(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for (election, candidate) in [("b", "n1"), ("a", "n2")] {
        let body = json!({"candidate": candidate, "ttl_seconds": 30});
        let reply = server.send(
            "POST",
            &format!("/elections/{election}/campaign"),
            Some(&body),
        );
        assert_eq!(reply.body["elected"], true, "{reply:?}");
    }
    let base = server.url("");
    let waiter = std::thread::spawn(move || {
        let client = crate::server::Client::new(&base);
        let body = json!({"candidate": "n3", "ttl_seconds": 30, "wait_seconds": 3});
        client.send("POST", "/elections/a/campaign", Some(&body))
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let page = server.send("GET", "/elections?limit=1", None);
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(page.body["elections"][0]["election"], "a");
    assert_eq!(page.body["elections"][0]["candidate"], "n2");
    assert_eq!(page.body["elections"][0]["waiting"], 1);
    assert!(
        page.body["elections"][0]["ttl_remaining_ms"]
            .as_u64()
            .unwrap()
            > 25_000
    );
    let cursor = page.body["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let next = server.send("GET", &format!("/elections?limit=1&cursor={cursor}"), None);
    assert_eq!(next.body["elections"][0]["election"], "b");
    assert!(next.body.get("next_cursor").is_none());
    let locks = server.send("GET", "/locks", None);
    assert_eq!(locks.body["locks"], json!([]), "elections are not locks");
    drop(waiter.join());
}
