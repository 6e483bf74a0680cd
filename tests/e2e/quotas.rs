//! Tenant quotas and SIGHUP reloads through the real binary: each limit of the tenant limits
//! file answers 429 `/problems/quota-exceeded` naming it and changes nothing, other tenants are
//! not limited, `/metrics` shows usage against each limit (both backends); a SIGHUP puts new keys
//! and limits in force, and a file that does not parse keeps the old ones; a bad limits file
//! stops the start-up naming its line.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::observe::Observer;
use crate::server::{lockd_binary, Reply, TestServer};
use crate::tenants::as_key;
use crate::tenants::digest;

on_both_backends!(each_limit_refuses_what_would_go_over_it_and_changes_nothing);

const ACME: &str = "acme-key-0123456789abcdef";
const GLOBEX: &str = "globex-key-0123456789abcdef";
const NEW_ACME: &str = "acme-rotated-key-0123456789";

/// A server whose keys file holds `keys` and whose limits file is `limits`; both stay in `dir`
/// (as `keys` and `limits`) to be rewritten.
fn start(
    db: &TestDatabase,
    keys: &[(&str, &str)],
    limits: &str,
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    write_keys(&dir, keys);
    std::fs::write(dir.path().join("limits"), limits).expect("write limits file");
    let server = TestServer::start(
        db,
        &[
            "--api-keys-file",
            &dir.path().join("keys").display().to_string(),
            "--tenant-limits-file",
            &dir.path().join("limits").display().to_string(),
        ],
    );
    (server, dir)
}

fn write_keys(dir: &tempfile::TempDir, keys: &[(&str, &str)]) {
    let text: String = keys
        .iter()
        .map(|(tenant, key)| format!("{tenant} {}\n", digest(key)))
        .collect();
    std::fs::write(dir.path().join("keys"), text).expect("write keys file");
}

fn take(server: &TestServer, key: &str, resource: &str, owner: &str, ttl: i64) -> Reply {
    let body = json!({"owner": owner, "ttl_seconds": ttl});
    as_key(
        server,
        key,
        "POST",
        &format!("/locks/{resource}"),
        Some(&body),
    )
}

/// Asserts a 429 naming `limit` with `allowed`, and `Retry-After` unless it is the lease length.
fn assert_over(reply: &Reply, limit: &str, allowed: u64) {
    reply.assert_problem(429, "quota-exceeded");
    assert_eq!(reply.body["quota"], limit, "{reply:?}");
    assert_eq!(reply.body["allowed"], allowed, "{reply:?}");
    assert!(
        reply.body["detail"].as_str().unwrap().contains(limit),
        "{reply:?}"
    );
    let retry = reply.header("retry-after");
    if limit == "max_ttl_seconds" {
        assert_eq!(retry, None, "{reply:?}");
    } else {
        assert_eq!(retry, Some("1"), "{reply:?}");
    }
}

fn metric(server: &TestServer, line_start: &str) -> Option<f64> {
    let text = server.send("GET", "/metrics", None).body;
    let text = text.as_str().unwrap_or_default().to_owned();
    text.lines()
        .find(|line| line.starts_with(line_start))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

fn each_limit_refuses_what_would_go_over_it_and_changes_nothing(db: TestDatabase) {
    let (server, _dir) = start(
        &db,
        &[("acme", ACME), ("globex", GLOBEX)],
        "# acme is limited, globex is not\n\
         acme max_live_leases=3 max_waiters=1 max_observers=1 max_ttl_seconds=60 # tight\n",
    );
    // Three leases of three kinds.
    assert_eq!(take(&server, ACME, "a", "w1", 30).body["acquired"], true);
    let permits = json!({"owner": "p1", "ttl_seconds": 30, "limit": 2});
    let reply = as_key(&server, ACME, "POST", "/semaphores/pool", Some(&permits));
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    let campaign = json!({"candidate": "c1", "ttl_seconds": 30});
    let reply = as_key(
        &server,
        ACME,
        "POST",
        "/elections/sched/campaign",
        Some(&campaign),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    // The fourth is refused, and nothing changed.
    assert_over(&take(&server, ACME, "b", "w2", 30), "max_live_leases", 3);
    as_key(&server, ACME, "GET", "/locks/b", None).assert_problem(404, "not-found");
    let more = json!({"owner": "p2", "ttl_seconds": 30, "limit": 2});
    let reply = as_key(&server, ACME, "POST", "/semaphores/pool", Some(&more));
    assert_over(&reply, "max_live_leases", 3);
    let holders = as_key(&server, ACME, "GET", "/semaphores/pool", None);
    assert_eq!(
        holders.body["holders"].as_array().map(Vec::len),
        Some(1),
        "{holders:?}"
    );
    // A re-grant is the same lease; another tenant is not limited.
    assert_eq!(take(&server, ACME, "a", "w1", 30).body["acquired"], true);
    assert_eq!(
        take(&server, GLOBEX, "b", "w2", 3_600).body["acquired"],
        true
    );
    // Lease lengths, on acquire and renew.
    assert_over(&take(&server, ACME, "a", "w1", 61), "max_ttl_seconds", 60);
    let renew = |ttl: i64| {
        let body = json!({"owner": "w1", "ttl_seconds": ttl});
        as_key(&server, ACME, "POST", "/locks/a/renew", Some(&body))
    };
    assert_over(&renew(61), "max_ttl_seconds", 60);
    assert_eq!(renew(60).status, 200);
    // Waiters: with a lease ended there is room for one waiting acquire, not two.
    let reply = as_key(
        &server,
        ACME,
        "DELETE",
        "/elections/sched/leader?candidate=c1",
        None,
    );
    assert_eq!(reply.status, 204, "{reply:?}");
    let client = server.client();
    let key = format!("Bearer {ACME}");
    let waiter = std::thread::spawn(move || {
        let body = json!({"owner": "w3", "ttl_seconds": 30, "wait_seconds": 10});
        client.send_with_header("POST", "/locks/a", Some(&body), ("authorization", &key))
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while as_key(&server, ACME, "GET", "/locks", None).body["locks"][0]["waiting"] != 1 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = json!({"owner": "w4", "ttl_seconds": 30, "wait_seconds": 10});
    assert_over(
        &as_key(&server, ACME, "POST", "/locks/a", Some(&second)),
        "max_waiters",
        1,
    );
    // Usage against each limit.
    let usage = |limit: &str| {
        metric(
            &server,
            &format!("lockd_tenant_quota_usage{{tenant=\"acme\",limit=\"{limit}\"}}"),
        )
    };
    assert_eq!(usage("max_live_leases"), Some(2.0));
    assert_eq!(usage("max_waiters"), Some(1.0));
    assert_eq!(usage("max_observers"), Some(0.0));
    assert_eq!(
        metric(
            &server,
            "lockd_tenant_quota_limit{tenant=\"acme\",limit=\"max_ttl_seconds\"}"
        ),
        Some(60.0)
    );
    let refused = metric(
        &server,
        "lockd_tenant_quota_rejections_total{tenant=\"acme\",limit=\"max_live_leases\"}",
    );
    assert_eq!(refused, Some(2.0));
    assert!(!server
        .send("GET", "/metrics", None)
        .body
        .as_str()
        .unwrap_or_default()
        .contains("tenant=\"globex\""));
    let released = as_key(&server, ACME, "DELETE", "/locks/a?owner=w1", None);
    assert_eq!(released.status, 204, "{released:?}");
    let granted = waiter.join().expect("waiter").expect("an answer");
    assert_eq!(granted.body["acquired"], true, "{granted:?}");
    // Observers: one stream, whichever kind.
    let auth = format!("Bearer {ACME}");
    let stream = Observer::open(&server, "/events", &[("authorization", &auth)]);
    assert_eq!(stream.content_type, "text/event-stream");
    assert_over(
        &as_key(&server, ACME, "GET", "/locks/a/observe", None),
        "max_observers",
        1,
    );
    assert_over(
        &as_key(&server, ACME, "GET", "/events", None),
        "max_observers",
        1,
    );
    assert_eq!(usage("max_observers"), Some(1.0));
}

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

#[test]
fn a_hangup_reloads_both_files_and_a_file_that_does_not_parse_keeps_the_old_one() {
    let db = TestDatabase::sqlite();
    let (server, dir) = start(&db, &[("acme", ACME)], "acme max_ttl_seconds=60\n");
    assert_over(&take(&server, ACME, "r", "o", 61), "max_ttl_seconds", 60);
    // New files: the key rotated, the limit raised.
    write_keys(&dir, &[("acme", NEW_ACME)]);
    std::fs::write(dir.path().join("limits"), "acme max_ttl_seconds=120\n").unwrap();
    hang_up(&server);
    let deadline = Instant::now() + Duration::from_secs(10);
    while take(&server, NEW_ACME, "r", "o", 30).status == 401 {
        assert!(Instant::now() < deadline, "the new key never took effect");
        std::thread::sleep(Duration::from_millis(20));
    }
    take(&server, ACME, "r", "o", 30).assert_problem(401, "unauthorized");
    assert_eq!(take(&server, NEW_ACME, "r", "o", 61).body["acquired"], true);
    assert_over(
        &take(&server, NEW_ACME, "r", "o", 121),
        "max_ttl_seconds",
        120,
    );
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
}

#[test]
fn a_bad_limits_file_is_a_start_up_error_naming_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("limits");
    std::fs::write(
        &path,
        "# limits\nacme max_live_leases=10\nglobex max_ttl_seconds=0\n",
    )
    .unwrap();
    let output = Command::new(lockd_binary())
        .args([
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &format!("sqlite://{}", dir.path().join("locks.db").display()),
            "--tenant-limits-file",
            &path.display().to_string(),
        ])
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run lockd");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("tenant limits file") && stderr.contains("line 3"),
        "{stderr}"
    );
}
