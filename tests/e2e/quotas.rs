//! Tenant quotas through the real binary, on both backends: each limit of the tenant limits file
//! answers 429 `/problems/quota-exceeded` naming it and changes nothing (no lease, waiter or
//! stream added, no lease lengthened, the holder untouched), other tenants are not limited, and
//! `/metrics` shows each limit, its usage and its refusals; a bad limits file stops the start-up
//! naming its line. SIGHUP reloads are in `quotas_reload`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::observe::Observer;
use crate::server::{lockd_binary, Reply, TestServer};
use crate::tenants::{as_key, write_keys_file};

on_both_backends!(each_limit_refuses_what_would_go_over_it_and_changes_nothing);

const ACME: &str = "acme-key-0123456789abcdef";
const GLOBEX: &str = "globex-key-0123456789abcdef";

/// A server whose keys file holds `keys`, each `(tenant, key, admin)`, and whose limits file is
/// `limits`; both stay in `dir` (as `keys` and `limits`) to be rewritten.
pub(crate) fn start(
    db: &TestDatabase,
    keys: &[(&str, &str, bool)],
    limits: &str,
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    write_keys_file(&dir, keys);
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

pub(crate) fn take(server: &TestServer, key: &str, resource: &str, owner: &str, ttl: i64) -> Reply {
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
pub(crate) fn assert_over(reply: &Reply, limit: &str, allowed: u64) {
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

/// The value of the first `/metrics` line that starts with `line_start`.
fn metric(server: &TestServer, line_start: &str) -> Option<f64> {
    let text = server.send("GET", "/metrics", None).body;
    let text = text.as_str().unwrap_or_default().to_owned();
    text.lines()
        .find(|line| line.starts_with(line_start))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

/// A family of acme's quota metrics (`limit`, `usage` or `rejections_total`) for one limit.
fn acme_quota(server: &TestServer, family: &str, limit: &str) -> Option<f64> {
    metric(
        server,
        &format!("lockd_tenant_quota_{family}{{tenant=\"acme\",limit=\"{limit}\"}} "),
    )
}

fn each_limit_refuses_what_would_go_over_it_and_changes_nothing(db: TestDatabase) {
    let (server, _dir) = start(
        &db,
        &[("acme", ACME, false), ("globex", GLOBEX, false)],
        "# acme is limited, globex is not\n\
         acme max_live_leases=3 max_waiters=1 max_observers=1 max_ttl_seconds=60 # tight\n",
    );
    let get = |path: &str| as_key(&server, ACME, "GET", path, None);
    let usage = |limit: &str| acme_quota(&server, "usage", limit);
    let refused = |limit: &str| acme_quota(&server, "rejections_total", limit);
    for (limit, allowed) in [
        ("max_live_leases", 3.0),
        ("max_waiters", 1.0),
        ("max_observers", 1.0),
        ("max_ttl_seconds", 60.0),
    ] {
        assert_eq!(
            acme_quota(&server, "limit", limit),
            Some(allowed),
            "{limit}"
        );
    }

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
    assert_eq!(usage("max_live_leases"), Some(3.0));
    // The fourth is refused, and nothing changed.
    assert_over(&take(&server, ACME, "b", "w2", 30), "max_live_leases", 3);
    get("/locks/b").assert_problem(404, "not-found");
    let more = json!({"owner": "p2", "ttl_seconds": 30, "limit": 2});
    let reply = as_key(&server, ACME, "POST", "/semaphores/pool", Some(&more));
    assert_over(&reply, "max_live_leases", 3);
    let holders = get("/semaphores/pool");
    assert_eq!(
        holders.body["holders"].as_array().map(Vec::len),
        Some(1),
        "{holders:?}"
    );
    assert_eq!(usage("max_live_leases"), Some(3.0));
    assert_eq!(refused("max_live_leases"), Some(2.0));
    // A re-grant is the same lease; another tenant is not limited.
    assert_eq!(take(&server, ACME, "a", "w1", 30).body["acquired"], true);
    assert_eq!(
        take(&server, GLOBEX, "b", "w2", 3_600).body["acquired"],
        true
    );
    let reply = as_key(
        &server,
        ACME,
        "DELETE",
        "/elections/sched/leader?candidate=c1",
        None,
    );
    assert_eq!(reply.status, 204, "{reply:?}");
    assert_eq!(usage("max_live_leases"), Some(2.0));

    // Lease lengths, on acquire, re-grant and renew: no lease made, none lengthened.
    assert_over(&take(&server, ACME, "c", "w5", 61), "max_ttl_seconds", 60);
    get("/locks/c").assert_problem(404, "not-found");
    let held = get("/locks/a");
    assert_eq!(held.status, 200, "{held:?}");
    assert_over(&take(&server, ACME, "a", "w1", 61), "max_ttl_seconds", 60);
    let renew = |ttl: i64| {
        let body = json!({"owner": "w1", "ttl_seconds": ttl});
        as_key(&server, ACME, "POST", "/locks/a/renew", Some(&body))
    };
    assert_over(&renew(61), "max_ttl_seconds", 60);
    assert_eq!(
        get("/locks/a").body,
        held.body,
        "a refusal changed the lease"
    );
    assert_eq!(usage("max_live_leases"), Some(2.0));
    assert_eq!(refused("max_ttl_seconds"), Some(3.0));
    assert_eq!(
        usage("max_ttl_seconds"),
        None,
        "a bound on each request, no usage"
    );
    let renewed = renew(60);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    assert_ne!(renewed.body["expires_at"], held.body["expires_at"]);

    // Waiters: one may wait for `a`, a second is refused and neither queues nor disturbs w1.
    let client = server.client();
    let key = format!("Bearer {ACME}");
    let waiter = std::thread::spawn(move || {
        let body = json!({"owner": "w3", "ttl_seconds": 30, "wait_seconds": 10});
        client.send_with_header("POST", "/locks/a", Some(&body), ("authorization", &key))
    });
    let waiting = || get("/locks").body["locks"][0]["waiting"].clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    while waiting() != 1 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(20));
    }
    let held = get("/locks/a");
    let second = json!({"owner": "w4", "ttl_seconds": 30, "wait_seconds": 10});
    assert_over(
        &as_key(&server, ACME, "POST", "/locks/a", Some(&second)),
        "max_waiters",
        1,
    );
    assert_eq!(waiting(), 1);
    assert_eq!(usage("max_waiters"), Some(1.0));
    assert_eq!(refused("max_waiters"), Some(1.0));
    assert_eq!(get("/locks/a").body, held.body, "the holder was disturbed");
    assert_eq!(usage("max_live_leases"), Some(2.0));
    assert_eq!(usage("max_observers"), Some(0.0));
    assert!(!server
        .send("GET", "/metrics", None)
        .body
        .as_str()
        .unwrap_or_default()
        .contains("tenant=\"globex\""));
    // The one waiter gets `a`; the refused one never does.
    let released = as_key(&server, ACME, "DELETE", "/locks/a?owner=w1", None);
    assert_eq!(released.status, 204, "{released:?}");
    let granted = waiter.join().expect("waiter").expect("an answer");
    assert_eq!(granted.granted()["owner"], "w3", "{granted:?}");
    assert_eq!(waiting(), 0);
    assert_eq!(usage("max_waiters"), Some(0.0));
    let history = get("/locks/a/history");
    let records = history.body["records"].as_array().expect("records");
    assert!(
        records.iter().all(|record| record["owner"] != "w4"),
        "{history:?}"
    );

    // Observers: one stream, whichever kind; a refused one is not counted.
    let auth = format!("Bearer {ACME}");
    let stream = Observer::open(&server, "/events", &[("authorization", &auth)]);
    assert_eq!(stream.content_type, "text/event-stream");
    assert_eq!(usage("max_observers"), Some(1.0));
    assert_over(&get("/locks/a/observe"), "max_observers", 1);
    assert_over(&get("/events"), "max_observers", 1);
    assert_eq!(usage("max_observers"), Some(1.0));
    assert_eq!(refused("max_observers"), Some(2.0));
    // Every refusal above was counted once, under its own limit.
    assert_eq!(refused("max_live_leases"), Some(2.0));
    assert_eq!(refused("max_ttl_seconds"), Some(3.0));
    assert_eq!(refused("max_waiters"), Some(1.0));
}

/// Each bad limits file stops the start-up (within 10 s, rather than serving), and the error
/// names the file, the line and what is wrong on it: an unknown key, bad values.
#[test]
fn a_bad_limits_file_is_a_start_up_error_naming_its_line() {
    let db = TestDatabase::sqlite();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("limits");
    for (text, line, words) in [
        (
            "# limits\nacme max_live_leases=10\nglobex max_ttl_seconds=0\n",
            3,
            &["max_ttl_seconds", "\"0\""][..],
        ),
        (
            "acme max_live_leases=10\n\nglobex max_leases=5 # not a limit\n",
            3,
            &["unknown limit", "max_leases"][..],
        ),
        (
            "acme max_waiters=ten\n",
            1,
            &["max_waiters", "\"ten\"", "whole number"][..],
        ),
        (
            "acme max_ttl_seconds=60\nglobex max_observers=-1\n",
            2,
            &["max_observers", "\"-1\""][..],
        ),
    ] {
        std::fs::write(&path, text).expect("write limits file");
        let mut child = Command::new(lockd_binary())
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--database-url",
                &db.url_string(),
                "--tenant-limits-file",
                &path.display().to_string(),
            ])
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run lockd");
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait lockd") {
                break status;
            }
            if Instant::now() > deadline {
                child.kill().expect("kill lockd");
                child.wait().expect("reap lockd");
                panic!("lockd started with the limits file {text:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = child.wait_with_output().expect("lockd's stderr");
        assert!(!status.success(), "{text:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("tenant limits file") && stderr.contains(&format!("line {line}:")),
            "{text:?}: {stderr}"
        );
        for word in words {
            assert!(
                stderr.contains(word),
                "{text:?} should name {word}: {stderr}"
            );
        }
    }
}
