//! `lockd run` and `lockd elect` under one session, on both backends: two locks and permits held
//! together while the command runs and freed after; all or nothing when a part is held by
//! someone else (nothing held afterwards, exit 75), also after a wait longer than the session's
//! TTL; the command's whole tree killed before the session can run out when the server dies;
//! and a leader whose campaign and leadership are its session's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::processes::{finish, is_running};
use crate::server::{lockd_binary, TestServer};

on_both_backends!(
    two_locks_and_permits_are_held_under_one_session_while_the_command_runs,
    nothing_is_held_when_one_part_is_held_by_someone_else,
    the_session_is_kept_alive_through_a_wait_longer_than_its_ttl,
    the_command_tree_dies_before_the_session_can_run_out_when_the_server_dies,
    lockd_elect_campaigns_and_leads_under_a_session,
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

/// Waits for `path` to hold a whole line (written through a rename), at most 30 s.
fn wait_for(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
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
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn in_dir(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// A script that writes `variables` (one `name=value` a line, then `ready`) to `out` and runs
/// until `stop` exists.
fn recording(variables: &[&str], out: &Path, stop: &Path) -> String {
    let lines: String = variables
        .iter()
        .map(|name| format!("echo \"{name}=${name}\"; "))
        .collect();
    format!(
        "{{ {lines}echo ready; }} > {out}.tmp; mv {out}.tmp {out}; \
         while [ ! -e {stop} ]; do sleep 0.05; done",
        out = out.display(),
        stop = stop.display()
    )
}

/// The value of `name` in what [`recording`] wrote.
fn variable(recorded: &str, name: &str) -> String {
    recorded
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {recorded:?}"))
        .to_owned()
}

fn token(recorded: &str, name: &str) -> i64 {
    variable(recorded, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name} is no token in {recorded:?}"))
}

/// The tenant's live sessions.
fn sessions(server: &TestServer) -> Value {
    let listed = server.send("GET", "/sessions", None);
    assert_eq!(listed.status, 200, "{listed:?}");
    listed.body["sessions"].clone()
}

/// Nothing of `locks` nor of semaphore `semaphore` is held, and no session is live.
fn nothing_held(server: &TestServer, locks: &[&str], semaphore: &str) {
    for lock in locks {
        server.status(lock).assert_problem(404, "not-found");
    }
    server
        .send("GET", &format!("/semaphores/{semaphore}"), None)
        .assert_problem(404, "not-found");
    assert_eq!(sessions(server), json!([]));
}

fn two_locks_and_permits_are_held_under_one_session_while_the_command_runs(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, stop) = (in_dir(&dir, "out"), in_dir(&dir, "stop"));
    let script = recording(
        &[
            "LOCKD_SESSION",
            "LOCKD_OWNER",
            "LOCKD_RESOURCE_1",
            "LOCKD_FENCING_TOKEN_1",
            "LOCKD_RESOURCE_2",
            "LOCKD_FENCING_TOKEN_2",
            "LOCKD_SEMAPHORE",
            "LOCKD_LIMIT",
            "LOCKD_PERMITS",
            "LOCKD_SEMAPHORE_FENCING_TOKEN",
            "LOCKD_FENCING_TOKEN",
        ],
        &out,
        &stop,
    );
    let run = spawn(
        "run",
        &server.base,
        &[
            "--resource",
            "ledger:eu",
            "--resource",
            "ledger:us",
            "--semaphore",
            "exports",
            "--limit",
            "3",
            "--permits",
            "2",
            "--owner",
            "nightly-7",
            "--ttl",
            "30",
        ],
        &["sh", "-c", &script],
    );
    let recorded = wait_for(&out);
    let id = variable(&recorded, "LOCKD_SESSION");
    assert_eq!(id.len(), 22, "{recorded}");
    assert_eq!(variable(&recorded, "LOCKD_OWNER"), "nightly-7");
    assert_eq!(variable(&recorded, "LOCKD_RESOURCE_1"), "ledger:eu");
    assert_eq!(variable(&recorded, "LOCKD_RESOURCE_2"), "ledger:us");
    assert_eq!(variable(&recorded, "LOCKD_SEMAPHORE"), "exports");
    assert_eq!(variable(&recorded, "LOCKD_LIMIT"), "3");
    assert_eq!(variable(&recorded, "LOCKD_PERMITS"), "2");
    assert_eq!(
        variable(&recorded, "LOCKD_FENCING_TOKEN"),
        "",
        "no one token for several holds"
    );

    // One session holds all three, each with the token the command was given.
    let look = server.send("GET", &format!("/sessions/{id}"), None);
    assert_eq!(look.status, 200, "{look:?}");
    assert_eq!(look.body["session"]["owner"], "nightly-7");
    assert_eq!(look.body["session"]["ttl_seconds"], 30);
    let mut holds: Vec<(String, String, i64)> = look.body["holds"]
        .as_array()
        .expect("holds")
        .iter()
        .map(|hold| {
            (
                hold["kind"].as_str().unwrap_or_default().to_owned(),
                hold["name"].as_str().unwrap_or_default().to_owned(),
                hold["fencing_token"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    holds.sort();
    assert_eq!(
        holds,
        [
            (
                "lock".to_owned(),
                "ledger:eu".to_owned(),
                token(&recorded, "LOCKD_FENCING_TOKEN_1")
            ),
            (
                "lock".to_owned(),
                "ledger:us".to_owned(),
                token(&recorded, "LOCKD_FENCING_TOKEN_2")
            ),
            (
                "semaphore".to_owned(),
                "exports".to_owned(),
                token(&recorded, "LOCKD_SEMAPHORE_FENCING_TOKEN")
            ),
        ]
    );
    let lock = server.status("ledger:eu");
    assert_eq!(lock.body["owner"], "nightly-7");
    assert_eq!(lock.body["session"], id.as_str());
    let semaphore = server.send("GET", "/semaphores/exports", None);
    assert_eq!(semaphore.body["in_use"], 2, "{semaphore:?}");
    let other = server.acquire("ledger:us", "someone else", 30);
    assert_eq!(other.body["acquired"], false, "{:?}", other.body);

    // The command ends: everything is freed at once, the session with it.
    std::fs::write(&stop, b"").expect("stop");
    let (code, stderr) = finish(run, Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    server
        .send("GET", &format!("/sessions/{id}"), None)
        .assert_problem(404, "session-not-found");
    nothing_held(&server, &["ledger:eu", "ledger:us"], "exports");

    // One resource with --session: the variables of one lock, plus the session.
    let (out, stop) = (in_dir(&dir, "out-one"), in_dir(&dir, "stop-one"));
    let script = recording(
        &["LOCKD_SESSION", "LOCKD_RESOURCE", "LOCKD_FENCING_TOKEN"],
        &out,
        &stop,
    );
    let run = spawn(
        "run",
        &server.base,
        &["--resource", "ledger:eu", "--session"],
        &["sh", "-c", &script],
    );
    let recorded = wait_for(&out);
    assert_eq!(variable(&recorded, "LOCKD_RESOURCE"), "ledger:eu");
    assert_eq!(
        server.status("ledger:eu").body["session"],
        variable(&recorded, "LOCKD_SESSION").as_str()
    );
    assert_eq!(
        server.status("ledger:eu").body["fencing_token"],
        token(&recorded, "LOCKD_FENCING_TOKEN")
    );
    std::fs::write(&stop, b"").expect("stop");
    let (code, stderr) = finish(run, Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    nothing_held(&server, &["ledger:eu"], "exports");
}

fn nothing_is_held_when_one_part_is_held_by_someone_else(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let ran = in_dir(&dir, "ran");
    let touch = ["touch", &ran.display().to_string()];

    // One lock of the set is someone else's: neither lock, nor the permits.
    let token = server.acquire("b", "other", 300).token();
    let (code, stderr) = finish(
        spawn(
            "run",
            &server.base,
            &[
                "--resource",
                "a",
                "--resource",
                "b",
                "--semaphore",
                "s",
                "--limit",
                "2",
                "--wait",
                "1",
            ],
            &touch,
        ),
        Duration::from_secs(30),
    );
    assert_eq!(code, 75, "{stderr}");
    assert!(
        stderr.contains(r#""b" is held by another owner"#),
        "{stderr}"
    );
    assert!(!ran.exists(), "the command must not run");
    nothing_held(&server, &["a"], "s");
    assert_eq!(server.status("b").body["fencing_token"], token);
    assert_eq!(server.release("b", "other").status, 204);

    // The locks are free but the semaphore is full: the locks taken first are given back.
    let full = server.send(
        "POST",
        "/semaphores/s",
        Some(&json!({"owner": "other", "ttl_seconds": 300, "limit": 2, "permits": 2})),
    );
    assert_eq!(full.body["acquired"], true, "{full:?}");
    let (code, stderr) = finish(
        spawn(
            "run",
            &server.base,
            &[
                "--resource",
                "a",
                "--resource",
                "b",
                "--semaphore",
                "s",
                "--limit",
                "2",
            ],
            &touch,
        ),
        Duration::from_secs(30),
    );
    assert_eq!(code, 75, "{stderr}");
    assert!(stderr.contains("too few permits free"), "{stderr}");
    assert!(!ran.exists(), "the command must not run");
    for lock in ["a", "b"] {
        server.status(lock).assert_problem(404, "not-found");
    }
    assert_eq!(sessions(&server), json!([]));

    // Another limit than the holders': an input error (64), and nothing held either.
    let (code, stderr) = finish(
        spawn(
            "run",
            &server.base,
            &["--resource", "a", "--semaphore", "s", "--limit", "5"],
            &touch,
        ),
        Duration::from_secs(30),
    );
    assert_eq!(code, 64, "{stderr}");
    server.status("a").assert_problem(404, "not-found");
    assert_eq!(sessions(&server), json!([]));
    assert!(!ran.exists());
}

fn the_session_is_kept_alive_through_a_wait_longer_than_its_ttl(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, stop) = (in_dir(&dir, "out"), in_dir(&dir, "stop"));
    server.acquire("b", "other", 300).token();
    let script = recording(&["LOCKD_SESSION", "LOCKD_FENCING_TOKEN_2"], &out, &stop);
    let run = spawn(
        "run",
        &server.base,
        &[
            "--resource",
            "a",
            "--resource",
            "b",
            "--ttl",
            "3",
            "--wait",
            "60",
        ],
        &["sh", "-c", &script],
    );
    // Longer than the session's TTL: only keepalives made while waiting keep it.
    std::thread::sleep(Duration::from_millis(4_500));
    assert!(!out.exists(), "the command must wait for both locks");
    server.status("a").assert_problem(404, "not-found");
    assert_eq!(sessions(&server).as_array().map(Vec::len), Some(1));
    assert_eq!(server.release("b", "other").status, 204);
    let recorded = wait_for(&out);
    let id = variable(&recorded, "LOCKD_SESSION");
    let look = server.send("GET", &format!("/sessions/{id}"), None);
    assert_eq!(
        look.body["holds"].as_array().map(Vec::len),
        Some(2),
        "{look:?}"
    );
    assert_eq!(
        server.status("b").body["fencing_token"],
        token(&recorded, "LOCKD_FENCING_TOKEN_2")
    );
    // Held past another TTL while the command runs.
    std::thread::sleep(Duration::from_millis(3_500));
    assert_eq!(server.status("a").body["session"], id.as_str());
    std::fs::write(&stop, b"").expect("stop");
    let (code, stderr) = finish(run, Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    nothing_held(&server, &["a", "b"], "s");
}

/// The server dies while the command (and a process it started) runs under the session: the
/// keepalives fail, and the whole tree gets SIGTERM and dies before the session can have run
/// out (at the latest ttl after the last keepalive, which was sent before the server died).
fn the_command_tree_dies_before_the_session_can_run_out_when_the_server_dies(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (pids, term) = (in_dir(&dir, "pids"), in_dir(&dir, "term"));
    let script = format!(
        "sleep 1000 & trap 'touch {term}; exit 0' TERM; echo $$ $! > {pids}.tmp; mv {pids}.tmp {pids}; \
         while :; do sleep 0.05; done",
        term = term.display(),
        pids = pids.display()
    );
    let ttl = Duration::from_secs(6);
    let run = spawn(
        "run",
        &server.base,
        &[
            "--resource",
            "a",
            "--resource",
            "b",
            "--semaphore",
            "s",
            "--limit",
            "1",
            "--ttl",
            "6",
            "--kill-grace",
            "1",
        ],
        &["sh", "-c", &script],
    );
    let tree: Vec<String> = wait_for(&pids)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(tree.len(), 2, "{tree:?}");
    // After at least one keepalive (due 2 s after the open).
    std::thread::sleep(Duration::from_millis(2_500));
    assert!(tree.iter().all(|pid| is_running(pid)), "{tree:?}");
    let stopped = Instant::now();
    server.kill9();
    while tree.iter().any(|pid| is_running(pid)) && stopped.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let dead_after = stopped.elapsed();
    let survivors: Vec<&String> = tree.iter().filter(|pid| is_running(pid)).collect();
    for pid in &survivors {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    let (code, stderr) = finish(run, Duration::from_secs(30));
    eprintln!("the tree was dead {dead_after:?} after the server died (ttl {ttl:?})");
    assert!(survivors.is_empty(), "survived: {survivors:?}\n{stderr}");
    assert!(term.exists(), "SIGTERM first\n{stderr}");
    assert!(
        dead_after < ttl,
        "dead {dead_after:?} after the server died\n{stderr}"
    );
    assert_eq!(code, 70, "{stderr}");
    assert!(stderr.contains("stopping the command (SIGTERM"), "{stderr}");
}

fn lockd_elect_campaigns_and_leads_under_a_session(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let variables = [
        "LOCKD_SESSION",
        "LOCKD_ELECTION",
        "LOCKD_CANDIDATE",
        "LOCKD_TERM",
    ];
    let (out_a, stop_a) = (in_dir(&dir, "out-a"), in_dir(&dir, "stop-a"));
    let (out_b, stop_b) = (in_dir(&dir, "out-b"), in_dir(&dir, "stop-b"));
    let elect = |candidate: &str, out: &Path, stop: &Path| {
        spawn(
            "elect",
            &server.base,
            &[
                "--election",
                "scheduler",
                "--candidate",
                candidate,
                "--value",
                candidate,
                "--ttl",
                "3",
                "--session",
            ],
            &["sh", "-c", &recording(&variables, out, stop)],
        )
    };
    let a = elect("node-a", &out_a, &stop_a);
    let recorded_a = wait_for(&out_a);
    let id_a = variable(&recorded_a, "LOCKD_SESSION");
    let leader = server.send("GET", "/elections/scheduler", None);
    assert_eq!(leader.status, 200, "{leader:?}");
    assert_eq!(leader.body["candidate"], "node-a");
    assert_eq!(leader.body["session"], id_a.as_str());
    assert_eq!(leader.body["value"], "node-a");
    assert_eq!(leader.body["term"], token(&recorded_a, "LOCKD_TERM"));
    assert_eq!(variable(&recorded_a, "LOCKD_CANDIDATE"), "node-a");
    let look = server.send("GET", &format!("/sessions/{id_a}"), None);
    assert_eq!(look.body["holds"][0]["kind"], "election", "{look:?}");

    // b campaigns under a session of its own for longer than that session's TTL.
    let b = elect("node-b", &out_b, &stop_b);
    std::thread::sleep(Duration::from_millis(4_500));
    assert!(!out_b.exists(), "b waits while a leads");
    assert_eq!(sessions(&server).as_array().map(Vec::len), Some(2));

    // a's command ends: its session ends with its leadership, and b is elected.
    std::fs::write(&stop_a, b"").expect("stop a");
    let (code, stderr) = finish(a, Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    let recorded_b = wait_for(&out_b);
    assert!(token(&recorded_b, "LOCKD_TERM") > token(&recorded_a, "LOCKD_TERM"));
    server
        .send("GET", &format!("/sessions/{id_a}"), None)
        .assert_problem(404, "session-not-found");
    let leader = server.send("GET", "/elections/scheduler", None);
    assert_eq!(leader.body["candidate"], "node-b");
    assert_eq!(
        leader.body["session"],
        variable(&recorded_b, "LOCKD_SESSION").as_str()
    );
    std::fs::write(&stop_b, b"").expect("stop b");
    let (code, stderr) = finish(b, Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    server
        .send("GET", "/elections/scheduler", None)
        .assert_problem(404, "not-found");
    assert_eq!(sessions(&server), json!([]));
}
