//! API keys and tenants through the real binary: isolation between tenants, 401 without a key,
//! open operations routes, and an audit log that never contains a key.

use std::io::Write;

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

const ACME: &str = "acme-0123456789abcdef";
const ACME_SECOND: &str = "acme-second-key-42";
const GLOBEX: &str = "globex-fedcba9876543210";

/// An admin key and a plain key of tenant `acme`, for the tests that force-release.
pub(crate) const ADMIN: &str = "acme-admin-key-0123456789";
pub(crate) const PLAIN: &str = "acme-plain-key-0123456789";

pub(crate) fn digest(key: &str) -> String {
    let mut child = std::process::Command::new(crate::server::lockd_binary())
        .arg("hash-key")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run lockd hash-key");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{key}\n").as_bytes())
        .expect("write key");
    let output = child.wait_with_output().expect("hash-key output");
    assert!(output.status.success());
    let digest = String::from_utf8(output.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    assert_eq!(digest.len(), 64, "{digest}");
    digest
}

/// Sends a request as the holder of API key `key` (`Authorization: Bearer <key>`).
pub(crate) fn as_key(
    server: &TestServer,
    key: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> crate::server::Reply {
    server.send_with_header(
        method,
        path,
        body,
        ("authorization", &format!("Bearer {key}")),
    )
}

/// Starts a server on `db` with an API keys file of `keys`, each `(tenant, key, admin)`; the
/// directory returned holds the file: keep it while the server runs.
pub(crate) fn start_with_keys(
    db: &TestDatabase,
    keys: &[(&str, &str, bool)],
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_keys_file(&dir, keys);
    let server = TestServer::start(db, &["--api-keys-file", &path.display().to_string()]);
    (server, dir)
}

/// Writes (or rewrites) `dir/keys` as an API keys file of `keys`, each `(tenant, key, admin)`,
/// and returns its path.
pub(crate) fn write_keys_file(
    dir: &tempfile::TempDir,
    keys: &[(&str, &str, bool)],
) -> std::path::PathBuf {
    let path = dir.path().join("keys");
    let text: String = keys
        .iter()
        .map(|(tenant, key, admin)| {
            let role = if *admin { " admin" } else { "" };
            format!("{tenant} {}{role}\n", digest(key))
        })
        .collect();
    std::fs::write(&path, text).expect("write keys file");
    path
}

fn keys_file(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("keys");
    let text = format!(
        "# tenant  sha256(key)\nacme {}\nacme {}\n\nglobex {}\n",
        digest(ACME),
        digest(ACME_SECOND),
        digest(GLOBEX)
    );
    std::fs::write(&path, text).expect("write keys file");
    path.display().to_string()
}

fn tenants_are_isolated(db: TestDatabase) {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = keys_file(&dir);
    let server = TestServer::start(
        &db,
        &[
            "--api-keys-file",
            &keys,
            "--log",
            "info",
            "--log-format",
            "json",
        ],
    );
    let body = |owner: &str| json!({"owner": owner, "ttl_seconds": 60});
    let with = |key: &str, method: &str, path: &str, payload: Option<serde_json::Value>| {
        server.send_with_header(
            method,
            path,
            payload.as_ref(),
            ("authorization", &format!("Bearer {key}")),
        )
    };

    // No key, a wrong key: 401 with WWW-Authenticate, before any validation.
    let anonymous = server.acquire("payment:42", "worker-7", 60);
    anonymous.assert_problem(401, "unauthorized");
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    with("wrong", "POST", "/locks/payment:42", Some(body("w"))).assert_problem(401, "unauthorized");
    server
        .send_raw("POST", "/locks/%00", Some("text/plain"), b"x")
        .assert_problem(401, "unauthorized");

    // Two tenants, one name, one owner string: two independent locks.
    let a = with(ACME, "POST", "/locks/payment:42", Some(body("worker-7")));
    let a_lock = a.granted().clone();
    let g = with(GLOBEX, "POST", "/locks/payment:42", Some(body("worker-7")));
    assert_ne!(g.granted()["fencing_token"], a_lock["fencing_token"]);
    // A second key of the same tenant shares its locks.
    assert_eq!(
        with(ACME_SECOND, "GET", "/locks/payment:42", None).body,
        a_lock
    );
    // Globex can neither read, renew nor release acme's lock: it sees its own, or nothing.
    assert_eq!(
        with(GLOBEX, "DELETE", "/locks/payment:42?owner=worker-7", None).status,
        204
    );
    with(GLOBEX, "GET", "/locks/payment:42", None).assert_problem(404, "not-found");
    with(GLOBEX, "DELETE", "/locks/payment:42?owner=worker-7", None)
        .assert_problem(404, "not-found");
    with(
        GLOBEX,
        "POST",
        "/locks/payment:42/renew",
        Some(body("worker-7")),
    )
    .assert_problem(404, "not-found");
    assert_eq!(
        with(ACME, "GET", "/locks/payment:42", None).body,
        a_lock,
        "acme's lock is untouched"
    );

    // Operations routes stay open.
    for path in ["/healthz", "/readyz", "/openapi.json"] {
        assert_eq!(server.send("GET", path, None).status, 200, "{path}");
    }

    // The audit log has the events, as JSON lines, and never a key.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let log = server.drain_stderr();
    for key in [ACME, ACME_SECOND, GLOBEX, "wrong"] {
        assert!(
            !log.iter().any(|line| line.contains(key)),
            "the key {key} appears in the log"
        );
    }
    let events: Vec<serde_json::Value> = log
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let granted = events
        .iter()
        .find(|e| e["fields"]["event"] == "granted" && e["fields"]["tenant"] == "acme")
        .unwrap_or_else(|| panic!("no grant event in {log:#?}"));
    assert_eq!(granted["fields"]["resource"], "payment:42");
    assert_eq!(granted["fields"]["owner"], "worker-7");
    assert_eq!(granted["fields"]["fencing_token"], a_lock["fencing_token"]);
    assert!(events
        .iter()
        .any(|e| e["fields"]["event"] == "released" && e["fields"]["tenant"] == "globex"));
    assert!(events
        .iter()
        .any(|e| e["fields"]["event"] == "unauthorized"));
}

on_both_backends!(tenants_are_isolated, tenants_have_semaphores_of_their_own);

#[test]
fn a_bad_keys_file_stops_start_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("keys");
    std::fs::write(&path, "acme not-a-digest\n").expect("write");
    let db = TestDatabase::sqlite();
    let output = std::process::Command::new(crate::server::lockd_binary())
        .args([
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &db.url_string(),
            "--api-keys-file",
        ])
        .arg(&path)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run lockd");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 1"), "{stderr}");
}

#[test]
fn a_non_loopback_bind_without_keys_is_warned_about() {
    let db = TestDatabase::sqlite();
    let mut child = std::process::Command::new(crate::server::lockd_binary())
        .args([
            "--bind",
            "0.0.0.0:0",
            "--database-url",
            &db.url_string(),
            "--log",
            "warn",
        ])
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn lockd");
    let stderr = child.stderr.take().expect("stderr");
    let mut seen = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
        let listening = line.starts_with("listening on ");
        seen.push(line);
        if listening {
            break;
        }
    }
    child.kill().expect("kill");
    child.wait().expect("reap");
    assert!(
        seen.iter()
            .any(|l| l.contains("non-loopback") && l.contains("--api-keys-file")),
        "{seen:#?}"
    );
}

/// Semaphores are per tenant like locks: the same name in two tenants is two semaphores (each
/// with its own limit), a key sees and changes only its tenant's, and the audit log names the
/// tenant and never a key.
fn tenants_have_semaphores_of_their_own(db: TestDatabase) {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = keys_file(&dir);
    let server = TestServer::start(
        &db,
        &[
            "--api-keys-file",
            &keys,
            "--log",
            "info",
            "--log-format",
            "json",
        ],
    );
    let with = |key: &str, method: &str, path: &str, payload: Option<serde_json::Value>| {
        server.send_with_header(
            method,
            path,
            payload.as_ref(),
            ("authorization", &format!("Bearer {key}")),
        )
    };
    let acquire = |key: &str, limit: u32| {
        with(
            key,
            "POST",
            "/semaphores/exports",
            Some(json!({"owner": "worker-7", "ttl_seconds": 60, "limit": limit})),
        )
    };
    server
        .send("GET", "/semaphores/exports", None)
        .assert_problem(401, "unauthorized");
    server
        .send("GET", "/semaphores", None)
        .assert_problem(401, "unauthorized");
    let a = acquire(ACME, 1);
    assert_eq!(a.body["acquired"], true, "{a:?}");
    // Another tenant: the same name with another limit is another semaphore.
    let g = acquire(GLOBEX, 5);
    assert_eq!(g.body["acquired"], true, "{g:?}");
    assert_ne!(
        g.body["permit"]["fencing_token"],
        a.body["permit"]["fencing_token"]
    );
    assert_eq!(
        with(ACME_SECOND, "GET", "/semaphores/exports", None).body["limit"],
        1
    );
    assert_eq!(
        with(GLOBEX, "GET", "/semaphores/exports", None).body["limit"],
        5
    );
    let listed = with(GLOBEX, "GET", "/semaphores", None);
    assert_eq!(listed.body["semaphores"].as_array().map(Vec::len), Some(1));
    // Globex releases its own grant; acme's stays.
    assert_eq!(
        with(GLOBEX, "DELETE", "/semaphores/exports?owner=worker-7", None).status,
        204
    );
    with(GLOBEX, "GET", "/semaphores/exports", None).assert_problem(404, "not-found");
    with(GLOBEX, "DELETE", "/semaphores/exports?owner=worker-7", None)
        .assert_problem(404, "not-found");
    let kept = with(ACME, "GET", "/semaphores/exports", None);
    assert_eq!(
        kept.body["holders"][0]["fencing_token"],
        a.body["permit"]["fencing_token"]
    );

    std::thread::sleep(std::time::Duration::from_millis(200));
    let log = server.drain_stderr();
    for key in [ACME, ACME_SECOND, GLOBEX] {
        assert!(
            !log.iter().any(|line| line.contains(key)),
            "the key {key} appears in the log"
        );
    }
    let granted = log
        .iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|e| {
            e["fields"]["event"] == "granted"
                && e["fields"]["primitive"] == "semaphore"
                && e["fields"]["tenant"] == "globex"
        })
        .unwrap_or_else(|| panic!("no semaphore grant event in {log:#?}"));
    assert_eq!(granted["fields"]["semaphore"], "exports");
    assert_eq!(granted["fields"]["limit"], 5);
}
