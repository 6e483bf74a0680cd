//! `DELETE /elections/{name}` through the real binary, on both backends: the election's own path
//! answers as `DELETE /elections/{name}/leader` does, as a lock's and a semaphore's release are at
//! their own paths: the leader resigns; another candidate is refused; an admin key ends the
//! leadership with `force=true&reason=`, recorded with the reason, and the next term is larger; a
//! plain key's force is refused, changing nothing.

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;
use crate::tenants::as_key;

on_both_backends!(the_election_s_own_path_resigns_and_force_releases);

const ADMIN: &str = "acme-admin-key-election-01";
const PLAIN: &str = "acme-plain-key-election-01";

fn campaign(server: &TestServer, candidate: &str) -> i64 {
    let body = json!({"candidate": candidate, "ttl_seconds": 60});
    let reply = as_key(
        server,
        PLAIN,
        "POST",
        "/elections/sched/campaign",
        Some(&body),
    );
    assert_eq!(reply.body["elected"], true, "{reply:?}");
    reply.body["leader"]["term"].as_i64().unwrap()
}

fn leader(server: &TestServer) -> crate::server::Reply {
    as_key(server, PLAIN, "GET", "/elections/sched", None)
}

fn the_election_s_own_path_resigns_and_force_releases(db: TestDatabase) {
    let (server, _keys) =
        crate::tenants::start_with_keys(&db, &[("acme", ADMIN, true), ("acme", PLAIN, false)]);
    let first = campaign(&server, "node-a");
    // Another candidate cannot resign for the leader.
    let other = as_key(
        &server,
        PLAIN,
        "DELETE",
        "/elections/sched?candidate=node-b",
        None,
    );
    other.assert_problem(403, "forbidden");
    assert_eq!(leader(&server).body["candidate"], "node-a");
    let resigned = as_key(
        &server,
        PLAIN,
        "DELETE",
        "/elections/sched?candidate=node-a",
        None,
    );
    assert_eq!(resigned.status, 204, "{resigned:?}");
    assert_eq!(leader(&server).status, 404);

    let second = campaign(&server, "node-b");
    assert!(second > first);
    let force = "/elections/sched?force=true&reason=node-b+is+wedged";
    as_key(&server, PLAIN, "DELETE", force, None).assert_problem(403, "admin-required");
    assert_eq!(leader(&server).body["candidate"], "node-b");
    let ended = as_key(&server, ADMIN, "DELETE", force, None);
    assert_eq!(ended.status, 200, "{ended:?}");
    assert_eq!(
        ended.body["force_released"],
        json!([{"owner": "node-b", "fencing_token": second}])
    );
    assert_eq!(leader(&server).status, 404);
    // Nothing left to end.
    assert_eq!(as_key(&server, ADMIN, "DELETE", force, None).status, 404);
    let third = campaign(&server, "node-c");
    assert!(third > second);

    let history = as_key(&server, ADMIN, "GET", "/elections/sched/history", None);
    let steps: Vec<(String, String, Option<String>)> = history.body["records"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|r| {
            (
                r["event"].as_str().unwrap().to_owned(),
                r["owner"].as_str().unwrap().to_owned(),
                r["reason"].as_str().map(str::to_owned),
            )
        })
        .collect();
    let step = |event: &str, owner: &str, reason: Option<&str>| {
        (
            event.to_owned(),
            owner.to_owned(),
            reason.map(str::to_owned),
        )
    };
    assert_eq!(
        steps,
        vec![
            step("granted", "node-a", None),
            step("released", "node-a", None),
            step("granted", "node-b", None),
            step("force-released", "node-b", Some("node-b is wedged")),
            step("granted", "node-c", None),
        ]
    );
    // Other methods at the path say which it takes.
    let put = as_key(&server, PLAIN, "PUT", "/elections/sched", None);
    assert_eq!(put.status, 405, "{put:?}");
}
