//! The process: start-up, crash (kill -9) and restart, SIGTERM, and refusing bad configuration.

use std::process::{Command, Stdio};
use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::DatabaseUrl;

use crate::server::{lockd_binary, LimitedLockd, TestServer};

on_both_backends!(
    kill_9_and_restart_keeps_held_locks_and_their_tokens,
    sigterm_exits_zero,
);

fn kill_9_and_restart_keeps_held_locks_and_their_tokens(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let held: Vec<_> = (0..8)
        .map(|i| {
            server
                .acquire(&format!("job:{i}"), &format!("worker-{i}"), 300)
                .granted()
                .clone()
        })
        .collect();
    let released = server.acquire("released", "w", 300).token();
    assert_eq!(server.release("released", "w").status, 204);
    let max_before = held
        .iter()
        .map(|l| l["fencing_token"].as_i64().expect("token"))
        .chain([released])
        .max()
        .expect("tokens");
    server.kill9();

    let restarted = TestServer::start(&db, &[]);
    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(
            &restarted.status(resource).body,
            lock,
            "{resource} survived the crash unchanged"
        );
        assert_eq!(
            restarted.acquire(resource, "thief", 30).body["acquired"],
            false
        );
    }
    restarted
        .status("released")
        .assert_problem(404, "not-found");
    let after = restarted.acquire("released", "w", 30).token();
    assert!(
        after > max_before,
        "tokens after the restart ({after}) exceed every earlier one ({max_before})"
    );
    let fresh = restarted.acquire("brand-new", "w", 30).token();
    assert!(fresh > max_before);
}

fn sigterm_exits_zero(db: TestDatabase) {
    let server = TestServer::start(&db, &["--shutdown-grace-seconds", "5"]);
    server.acquire("r", "o", 30).granted();
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A lockd that stops leaves no WAL behind (its writer empties it on the way out), and what it
/// acknowledged is in the database file.
#[test]
fn sigterm_on_sqlite_leaves_no_wal_behind() {
    let db = TestDatabase::sqlite();
    let DatabaseUrl::Sqlite(path) = db.url().clone() else {
        unreachable!("a SQLite test database")
    };
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    let server = TestServer::start(&db, &[]);
    let held: Vec<i64> = (0..20)
        .map(|i| server.acquire(&format!("job:{i}"), "w", 300).token())
        .collect();
    assert!(std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0));
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0);

    let restarted = TestServer::start(&db, &[]);
    for (i, token) in held.iter().enumerate() {
        let lock = restarted.status(&format!("job:{i}"));
        assert_eq!(lock.body["fencing_token"].as_i64(), Some(*token));
    }
}

#[test]
fn an_unsupported_database_url_is_a_start_up_error() {
    let output = Command::new(lockd_binary())
        .args([
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            "mysql://root@localhost/x",
        ])
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run lockd");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unsupported database URL scheme"),
        "{stderr}"
    );
}

#[test]
fn a_sqlite_path_in_a_missing_directory_is_refused_not_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("typo").join("locks.db");
    let output = Command::new(lockd_binary())
        .args([
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &format!("sqlite://{}", missing.display()),
        ])
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run lockd");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(!missing.exists() && !missing.parent().expect("parent").exists());
}

#[test]
fn the_default_database_is_lockd_db_in_the_working_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(lockd_binary())
        .args(["--bind", "127.0.0.1:0"])
        .env_remove("DATABASE_URL")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lockd");
    let stderr = child.stderr.take().expect("stderr");
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(stderr);
    loop {
        line.clear();
        let read = std::io::BufRead::read_line(&mut reader, &mut line).expect("read stderr");
        assert!(read > 0, "lockd exited before listening");
        if line.starts_with("listening on http://127.0.0.1:") {
            break;
        }
    }
    assert!(dir.path().join("lockd.db").exists());
    child.kill().expect("kill");
    child.wait().expect("reap");
}

/// lockd raises its soft limit of open files to the hard one, says so, and listens with a
/// backlog of 4096 (or the kernel's `somaxconn`, if lower) instead of 128.
#[test]
fn lockd_raises_its_open_files_limit_and_listens_with_a_deep_backlog() {
    let db = TestDatabase::sqlite();
    let lockd = LimitedLockd::start("256:8192", &db.url_string());
    let (port, seen) = (lockd.port, lockd.start_up.clone());
    let limits =
        std::fs::read_to_string(format!("/proc/{}/limits", lockd.child.id())).expect("limits");
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("Max open files")
        .split_whitespace()
        .skip(3)
        .take(2)
        .collect::<Vec<_>>();
    let sockets = Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2)");
    drop(lockd);
    assert_eq!(open_files, ["8192", "8192"], "{limits}");
    assert!(
        seen.iter()
            .any(|l| l.contains("raised the limit of open files") && l.contains("was=256")),
        "{seen:#?}"
    );
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .expect("somaxconn")
        .trim()
        .parse()
        .expect("a number");
    let listing = String::from_utf8_lossy(&sockets.stdout);
    // State, Recv-Q, Send-Q (a listening socket's backlog), local address, peer.
    let backlog: u32 = listing
        .split_whitespace()
        .nth(2)
        .and_then(|q| q.parse().ok())
        .unwrap_or_else(|| panic!("the listening socket in {listing:?}"));
    assert_eq!(backlog, somaxconn.min(4096), "{listing}");
}
