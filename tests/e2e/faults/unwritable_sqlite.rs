//! A SQLite database that stops taking writes under a running lockd answers 503 (retry later),
//! never 500, and lockd writes again once the file is writable, with nothing lost.
//!
//! Permissions cannot make the file unwritable here: the tests run as root, whom `chmod` does
//! not stop, and lockd writes through descriptors it opened at start-up, which a later `chmod`
//! does not touch for anyone. An immutable file (`chattr +i`, which root may set on ext4 and
//! similar file systems) refuses writes through descriptors already open, for root as well. Where
//! `chattr +i` fails, the test says so loudly and does nothing, except in CI (`CI` set), where it
//! fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::DatabaseUrl;
use serde_json::json;

use crate::server::TestServer;

#[test]
fn an_unwritable_sqlite_database_answers_503_not_500() {
    let db = TestDatabase::sqlite();
    let DatabaseUrl::Sqlite(path) = db.url().clone() else {
        unreachable!("a SQLite test database");
    };
    let server = TestServer::start(&db, &[]);
    let held = server.acquire("held", "owner", 120).granted().clone();

    let Some(frozen) = Immutable::set(&[path.clone(), sibling(&path, "-wal")]) else {
        return;
    };
    let writes = [
        server.acquire("new", "newcomer", 120),
        server.renew("held", "owner", 300),
        server.release("held", "owner"),
    ];
    for reply in &writes {
        reply.assert_problem(503, "service-unavailable");
        assert!(reply.header("retry-after").is_some(), "{reply:?}");
    }
    // Reading needs no write: the lock is still served.
    assert_eq!(server.status("held").body, held);
    assert_eq!(server.send("GET", "/healthz", None).status, 200);

    drop(frozen);
    let thawed = Instant::now();
    let granted = loop {
        let reply = server.acquire("after", "owner", 120);
        if reply.status == 200 {
            break reply;
        }
        reply.assert_problem(503, "service-unavailable");
        assert!(
            thawed.elapsed() < Duration::from_secs(5),
            "lockd does not write again after the file became writable: {reply:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!(
        "sqlite: writes succeed again {:?} after the file became writable",
        thawed.elapsed()
    );
    assert!(granted.token() > held["fencing_token"].as_i64().expect("token"));
    assert_eq!(
        server.status("held").body,
        held,
        "neither renewed nor released"
    );
    server.status("new").assert_problem(404, "not-found");
    assert_eq!(
        server.acquire("held", "intruder", 30).body,
        json!({"acquired": false, "resource": "held"})
    );
    assert_eq!(server.release("held", "owner").status, 204);
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `path` with `suffix` appended to its file name (SQLite's `-wal` and `-shm` files).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Files made immutable (`chattr +i`) until dropped.
struct Immutable(Vec<PathBuf>);

impl Immutable {
    /// `None`, after a loud message, when the files cannot be made immutable here; in CI (`CI`
    /// set, as `.ci/run` is run) that is a failure instead, so the test never passes silently.
    fn set(paths: &[PathBuf]) -> Option<Self> {
        let mut set = Immutable(Vec::new());
        for path in paths {
            assert!(path.exists(), "{} exists", path.display());
            let output = Command::new("chattr").arg("+i").arg(path).output();
            match output {
                Ok(output) if output.status.success() => set.0.push(path.clone()),
                other if std::env::var_os("CI").is_some() => panic!(
                    "`chattr +i {}` failed ({other:?}); in CI (CI is set) this test must run, \
                     not skip",
                    path.display()
                ),
                other => {
                    eprintln!(
                        "\n!!!!! SKIPPING the unwritable SQLite test: `chattr +i {}` failed \
                         ({other:?}); it needs root (CAP_LINUX_IMMUTABLE) and a file system with \
                         the immutable attribute (ext4, xfs, btrfs).\n",
                        path.display()
                    );
                    return None;
                }
            }
        }
        Some(set)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = Command::new("chattr").arg("-i").arg(path).status();
        }
    }
}
