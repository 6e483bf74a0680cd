//! SIGHUP reloads of the API keys file and the tenant limits file through the real binary, on
//! both backends: the new keys, roles and limits are in force for later requests (a removed key
//! gets 401, a key made admin may force-release, a key made plain gets 403
//! `/problems/admin-required`), and a file that does not parse keeps the one in force, with an
//! ERROR line naming the file and its bad line.

use std::process::Command;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;

use crate::quotas::{assert_over, start, take};
use crate::server::{Reply, TestServer};
use crate::tenants::{as_key, write_keys_file};

on_both_backends!(a_hangup_reloads_both_files_and_a_file_that_does_not_parse_keeps_the_old_one);

/// Removed by the reload.
const ACME: &str = "acme-key-0123456789abcdef";
/// Added by the reload.
const NEW_ACME: &str = "acme-rotated-key-0123456789";
/// Plain, made admin by the reload.
const PROMOTED: &str = "acme-promoted-key-0123456789";
/// Admin, made plain by the reload.
const DEMOTED: &str = "acme-demoted-key-0123456789";

fn hang_up(server: &TestServer) {
    let status = Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

/// Waits until stderr has shown, for each of `wanted`, a line holding every one of its words,
/// and returns those lines in the same order.
fn logged(server: &TestServer, wanted: &[&[&str]]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut found: Vec<Option<String>> = vec![None; wanted.len()];
    loop {
        for line in server.drain_stderr() {
            for (words, slot) in wanted.iter().zip(found.iter_mut()) {
                if slot.is_none() && words.iter().all(|word| line.contains(word)) {
                    *slot = Some(line.clone());
                }
            }
        }
        if found.iter().all(Option::is_some) {
            return found.into_iter().flatten().collect();
        }
        assert!(Instant::now() < deadline, "no log lines with {wanted:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn force_release(server: &TestServer, key: &str, resource: &str) -> Reply {
    let path = format!("/locks/{resource}?force=true&reason=reload+check");
    as_key(server, key, "DELETE", &path, None)
}

/// Takes `resource` for `owner` with `key`, asserts `plain` cannot force-release it (403, the
/// lease unchanged) and `admin` can (the lease ended, recorded with the reason).
fn only_the_admin_force_releases(
    server: &TestServer,
    key: &str,
    resource: &str,
    owner: &str,
    plain: &str,
    admin: &str,
) {
    let held = take(server, key, resource, owner, 60);
    let token = held.token();
    let path = format!("/locks/{resource}");
    force_release(server, plain, resource).assert_problem(403, "admin-required");
    assert_eq!(
        as_key(server, key, "GET", &path, None).body,
        held.body["lock"]
    );
    let ended = force_release(server, admin, resource);
    assert_eq!(ended.status, 200, "{ended:?}");
    assert_eq!(
        ended.body["force_released"],
        serde_json::json!([{"owner": owner, "fencing_token": token}])
    );
    as_key(server, key, "GET", &path, None).assert_problem(404, "not-found");
    let history = as_key(server, key, "GET", &format!("{path}/history?limit=1"), None);
    let last = &history.body["records"][0];
    assert_eq!(last["event"], "force-released", "{history:?}");
    assert_eq!(last["owner"], owner, "{history:?}");
    assert_eq!(last["reason"], "reload check", "{history:?}");
}

fn a_hangup_reloads_both_files_and_a_file_that_does_not_parse_keeps_the_old_one(db: TestDatabase) {
    let (server, dir) = start(
        &db,
        &[
            ("acme", ACME, false),
            ("acme", PROMOTED, false),
            ("acme", DEMOTED, true),
        ],
        "acme max_ttl_seconds=60\n",
    );
    assert_over(&take(&server, ACME, "r", "o", 61), "max_ttl_seconds", 60);
    take(&server, NEW_ACME, "r", "o", 30).assert_problem(401, "unauthorized");
    only_the_admin_force_releases(&server, ACME, "held", "h1", PROMOTED, DEMOTED);

    // New files: ACME removed, NEW_ACME added, the two roles swapped, the limit raised.
    write_keys_file(
        &dir,
        &[
            ("acme", NEW_ACME, false),
            ("acme", PROMOTED, true),
            ("acme", DEMOTED, false),
        ],
    );
    std::fs::write(dir.path().join("limits"), "acme max_ttl_seconds=120\n").unwrap();
    hang_up(&server);
    // The keys are put in force before the limits: wait for both.
    let deadline = Instant::now() + Duration::from_secs(10);
    while take(&server, NEW_ACME, "probe", "o", 61).status != 200 {
        assert!(
            Instant::now() < deadline,
            "the new key and limit never took effect"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    take(&server, ACME, "r", "o", 30).assert_problem(401, "unauthorized");
    as_key(&server, ACME, "GET", "/locks", None).assert_problem(401, "unauthorized");
    force_release(&server, ACME, "probe").assert_problem(401, "unauthorized");
    assert_eq!(take(&server, NEW_ACME, "r", "o", 61).body["acquired"], true);
    assert_over(
        &take(&server, NEW_ACME, "r", "o", 121),
        "max_ttl_seconds",
        120,
    );
    only_the_admin_force_releases(&server, NEW_ACME, "held", "h2", DEMOTED, PROMOTED);

    // Files that do not parse: both kept, and the log says why.
    std::fs::write(dir.path().join("keys"), "acme not-a-digest\n").unwrap();
    std::fs::write(
        dir.path().join("limits"),
        "acme max_ttl_seconds=30\nacme max_leases=1\n",
    )
    .unwrap();
    hang_up(&server);
    let why = logged(
        &server,
        &[
            &["tenant limits file not reloaded"],
            &["API keys file not reloaded"],
        ],
    );
    assert!(
        why[0].contains("line 2") && why[0].contains("max_leases"),
        "{why:?}"
    );
    assert!(why[1].contains("line 1"), "{why:?}");
    assert_eq!(
        take(&server, NEW_ACME, "r", "o", 120).body["acquired"],
        true
    );
    take(&server, ACME, "r", "o", 30).assert_problem(401, "unauthorized");
    only_the_admin_force_releases(&server, NEW_ACME, "held", "h3", DEMOTED, PROMOTED);
}
