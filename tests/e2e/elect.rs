//! `lockd elect` against a real server, on both backends: the command runs while leading, with
//! its term; the office is resigned at the end; a second candidate waits and takes over; and a
//! leader frozen (SIGSTOP) past its lease has its command killed before the other takes over.
//! Also `lockd run` frozen the same way: the keeper kills the command by its own deadline.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::processes::{finish, is_running};
use crate::server::{lockd_binary, TestServer};

on_both_backends!(
    the_command_runs_while_leading_with_its_term_and_the_office_is_resigned,
    a_frozen_leaders_command_is_dead_before_the_other_candidate_takes_over,
    a_frozen_lockd_runs_command_is_killed_before_its_lease_ends,
);

fn spawn(subcommand: &str, server: &str, args: &[&str], command: &[&str]) -> Child {
    Command::new(lockd_binary())
        .args([subcommand, "--server", server])
        .args(args)
        .arg("--")
        .args(command)
        .env_remove("LOCKD_API_KEY")
        .env_remove("LOCKD_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lockd")
}

fn wait_for(path: &Path, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

/// A command that records its pid and environment in `dir/name` and then runs until killed.
fn forever(dir: &Path, name: &str) -> String {
    format!(
        "echo \"$$ $LOCKD_TERM $LOCKD_CANDIDATE\" > {f}.tmp; mv {f}.tmp {f}; while :; do sleep 0.05; done",
        f = dir.join(name).display()
    )
}

fn the_command_runs_while_leading_with_its_term_and_the_office_is_resigned(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = dir.path().join("seen");
    let script = format!(
        "echo \"$LOCKD_ELECTION $LOCKD_TERM $LOCKD_CANDIDATE $LOCKD_FENCING_TOKEN\" > {f}.tmp; mv {f}.tmp {f}; sleep 0.3; exit 3",
        f = seen.display()
    );
    let elect = spawn(
        "elect",
        &server.base,
        &[
            "--election",
            "scheduler",
            "--candidate",
            "node-a",
            "--value",
            "10.0.0.7:8080",
        ],
        &["sh", "-c", &script],
    );
    let line = wait_for(&seen, Duration::from_secs(10));
    let leader = server.send("GET", "/elections/scheduler", None);
    assert_eq!(leader.status, 200, "{leader:?}");
    assert_eq!(leader.body["value"], json!("10.0.0.7:8080"));
    let term = leader.body["term"].as_i64().unwrap();
    assert_eq!(line.trim(), format!("scheduler {term} node-a {term}"));
    let (code, stderr) = finish(elect, Duration::from_secs(10));
    assert_eq!(code, 3, "the command's status: {stderr}");
    server
        .send("GET", "/elections/scheduler", None)
        .assert_problem(404, "not-found");
    // Led by another: with --wait 1, exit 75 without running anything.
    let other = server.send(
        "POST",
        "/elections/scheduler/campaign",
        Some(&json!({"candidate": "other", "ttl_seconds": 30})),
    );
    assert_eq!(other.body["elected"], true);
    let never = dir.path().join("never");
    let elect = spawn(
        "elect",
        &server.base,
        &["--election", "scheduler", "--wait", "1"],
        &["touch", &never.display().to_string()],
    );
    let (code, stderr) = finish(elect, Duration::from_secs(10));
    assert_eq!(code, 75, "{stderr}");
    assert!(stderr.contains("is led by another candidate"), "{stderr}");
    assert!(!never.exists());
}

fn a_frozen_leaders_command_is_dead_before_the_other_candidate_takes_over(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let args = |candidate: &'static str| {
        [
            "--election",
            "primary",
            "--ttl",
            "3",
            "--candidate",
            candidate,
        ]
    };
    let a = spawn(
        "elect",
        &server.base,
        &args("a"),
        &["sh", "-c", &forever(dir.path(), "a")],
    );
    let a_line = wait_for(&dir.path().join("a"), Duration::from_secs(10));
    let mut a_fields = a_line.split_whitespace();
    let (a_pid, a_term) = (
        a_fields.next().unwrap().to_owned(),
        a_fields.next().unwrap().to_owned(),
    );
    let b = spawn(
        "elect",
        &server.base,
        &args("b"),
        &["sh", "-c", &forever(dir.path(), "b")],
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!dir.path().join("b").exists(), "b waits while a leads");

    // a's lockd elect freezes: no more renewals. Its keeper kills a's command before the lease
    // can run out, and only then can b be elected.
    signal(a.id(), "STOP");
    let frozen = Instant::now();
    let b_line = wait_for(&dir.path().join("b"), Duration::from_secs(10));
    let took_over = frozen.elapsed();
    assert!(
        !is_running(&a_pid),
        "a's command still ran when b took over"
    );
    let b_term: i64 = b_line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        b_term > a_term.parse().unwrap(),
        "a new term: {a_term} then {b_term}"
    );
    assert!(
        took_over >= Duration::from_secs(2),
        "b took over after {took_over:?}"
    );
    println!("b took over {took_over:?} after a froze");

    // a wakes up: it finds it lost the office, and fails.
    signal(a.id(), "CONT");
    let (code, stderr) = finish(a, Duration::from_secs(10));
    assert_eq!(code, 70, "{stderr}");
    let leader = server.send("GET", "/elections/primary", None);
    assert_eq!(leader.body["candidate"], "b");
    let b_pid: u32 = b_line.split_whitespace().next().unwrap().parse().unwrap();
    signal(b_pid, "TERM");
    let (code, _) = finish(b, Duration::from_secs(10));
    assert_eq!(code, 128 + 15, "b's command ended by SIGTERM");
}

fn a_frozen_lockd_runs_command_is_killed_before_its_lease_ends(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let run = spawn(
        "run",
        &server.base,
        &["--resource", "frozen", "--ttl", "3", "--owner", "runner"],
        &["sh", "-c", &forever(dir.path(), "cmd")],
    );
    let pid = wait_for(&dir.path().join("cmd"), Duration::from_secs(10))
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let lock = server.status("frozen");
    let expires_ms = crate::server::timestamp_ms(&lock.body["expires_at"]);
    signal(run.id(), "STOP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while is_running(&pid) {
        assert!(Instant::now() < deadline, "the command outlived its lease");
        std::thread::sleep(Duration::from_millis(5));
    }
    let died_ms = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    assert!(
        died_ms < expires_ms,
        "killed {} ms after expires_at",
        died_ms - expires_ms
    );
    signal(run.id(), "CONT");
    let (code, stderr) = finish(run, Duration::from_secs(10));
    assert_eq!(code, 70, "{stderr}");
}
