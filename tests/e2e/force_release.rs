//! Admin keys and force-release through the real binary, on both backends: an admin key ends
//! every live lease of a lock (either mode), a semaphore or an election, with the reason in the
//! history, the next grant has a larger token, waiters get in; a plain key gets 403
//! `/problems/admin-required` and changes nothing; another tenant's names are out of reach; bad
//! requests are 422; and `GET /elections` lists leaders with their waiters.

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::TestServer;
use crate::tenants::as_key;

on_both_backends!(
    an_admin_key_force_releases_every_lease_and_a_plain_key_cannot,
    semaphores_and_elections_are_force_released_too,
    elections_are_listed_with_their_waiters,
);

const ADMIN: &str = "acme-admin-key-0123456789";
const PLAIN: &str = "acme-plain-key-0123456789";
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
    // Every reader of a shared lock.
    for reader in ["r1", "r2"] {
        let body = json!({"owner": reader, "ttl_seconds": 60, "mode": "shared"});
        let reply = as_key(&server, PLAIN, "POST", "/locks/doc", Some(&body));
        assert_eq!(reply.body["acquired"], true, "{reply:?}");
    }
    let ended = as_key(
        &server,
        ADMIN,
        "DELETE",
        "/locks/doc?force=true&reason=reindex",
        None,
    );
    assert_eq!(
        ended.body["force_released"].as_array().unwrap().len(),
        2,
        "{ended:?}"
    );
    take("doc", "writer");
    // Bad requests change nothing.
    for path in [
        "/locks/doc?force=true",
        "/locks/doc?force=yes&reason=x",
        "/locks/doc?force=true&reason=",
        "/locks/doc?force=true&reason=a%0Ab",
        "/locks/doc?force=true&reason=x&owner=writer",
        "/locks/doc?force=true&reason=x&reason=y",
        "/locks/%00?force=true&reason=x",
    ] {
        as_key(&server, ADMIN, "DELETE", path, None).assert_problem(422, "validation-failed");
    }
    let long = format!("/locks/doc?force=true&reason={}", "x".repeat(257));
    as_key(&server, ADMIN, "DELETE", &long, None).assert_problem(422, "validation-failed");
    let with_body = as_key(
        &server,
        ADMIN,
        "DELETE",
        "/locks/doc?force=true&reason=x",
        Some(&json!({"owner": "writer"})),
    );
    with_body.assert_problem(422, "validation-failed");
    assert_eq!(
        as_key(&server, PLAIN, "GET", "/locks/doc", None).status,
        200
    );
    server
        .send("DELETE", "/locks/doc?force=true&reason=x", None)
        .assert_problem(401, "unauthorized");
}

fn semaphores_and_elections_are_force_released_too(db: TestDatabase) {
    let (server, _keys) = start(&db);
    for owner in ["p1", "p2"] {
        let body = json!({"owner": owner, "ttl_seconds": 60, "limit": 2});
        let reply = as_key(&server, PLAIN, "POST", "/semaphores/pool", Some(&body));
        assert_eq!(reply.body["acquired"], true, "{reply:?}");
    }
    let path = "/semaphores/pool?force=true&reason=drain";
    as_key(&server, PLAIN, "DELETE", path, None).assert_problem(403, "admin-required");
    let ended = as_key(&server, ADMIN, "DELETE", path, None);
    assert_eq!(
        ended.body["force_released"].as_array().unwrap().len(),
        2,
        "{ended:?}"
    );
    as_key(&server, PLAIN, "GET", "/semaphores/pool", None).assert_problem(404, "not-found");
    let history = records(&server, "/semaphores/pool/history");
    assert_eq!(
        history
            .iter()
            .filter(|r| r["event"] == "force-released")
            .count(),
        2
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
    assert_eq!(history[1]["event"], "force-released");
    assert_eq!(history[1]["reason"], "stuck leader");
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
