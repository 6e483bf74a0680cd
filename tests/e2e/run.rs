//! `lockd run` against a real server: the command's environment and exit status, release at
//! the end (after what the command left behind), exit 75 when held, API keys, signals, default
//! owners, and stopping the command's whole process tree before the lease can run out when the
//! server goes away, the lease is lost or `lockd run` is killed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_store_diesel::testing::TestDatabase;

use crate::server::{lockd_binary, TestServer};

on_both_backends!(
    the_command_runs_under_the_lock_and_its_status_is_passed_through,
    a_lock_held_by_another_owner_exits_75_without_running_the_command,
    commands_run_while_holding_semaphore_permits,
);

/// A `lockd run` process with its stderr captured.
struct LockdRun {
    child: Child,
    started: Instant,
}

/// What a finished `lockd run` left.
struct Finished {
    status: ExitStatus,
    stderr: String,
    /// When it exited, from its start.
    after: Duration,
}

impl Finished {
    fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
}

impl LockdRun {
    fn start(server: &str, args: &[&str], command: &[&str]) -> Self {
        Self::start_with(server, args, command, &[])
    }

    fn start_with(server: &str, args: &[&str], command: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_under(&[], server, args, command, env)
    }

    /// Starts `lockd run` under `wrapper` (a program and its arguments, which then runs lockd
    /// run), or directly when it is empty.
    fn start_under(
        wrapper: &[&str],
        server: &str,
        args: &[&str],
        command: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let lockd = lockd_binary();
        let mut program = Command::new(wrapper.first().map_or(lockd.as_os_str(), |w| w.as_ref()));
        if !wrapper.is_empty() {
            program.args(&wrapper[1..]).arg(&lockd);
        }
        let child = program
            .args(["run", "--server", server])
            .args(args)
            .arg("--")
            .args(command)
            .env_remove("LOCKD_API_KEY")
            .env_remove("LOCKD_SERVER")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lockd run");
        Self {
            child,
            started: Instant::now(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the exit, at most `within`.
    fn finish(mut self, within: Duration) -> Finished {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait lockd run") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("lockd run did not exit within {within:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let after = self.started.elapsed();
        let output = self.child.wait_with_output().expect("stderr");
        Finished {
            status,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            after,
        }
    }
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos()
}

/// Waits until `path` exists (the command got going), at most 10 s.
fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

fn is_alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .stderr(Stdio::null())
        .status()
        .expect("run kill")
        .success()
}

fn in_dir(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn the_command_runs_under_the_lock_and_its_status_is_passed_through(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let before = server.acquire("nightly report", "setup", 60).token();
    assert_eq!(server.release("nightly report", "setup").status, 204);
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = in_dir(&dir, "seen");
    let script = format!(
        "printf '%s\\n%s\\n%s\\n' \"$LOCKD_RESOURCE\" \"$LOCKD_OWNER\" \"$LOCKD_FENCING_TOKEN\" > {}; exit 7",
        seen.display()
    );
    let run = LockdRun::start(
        &server.base,
        &["--resource", "nightly report", "--ttl", "30"],
        &["sh", "-c", &script],
    );
    let pid = run.pid();
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 7, "{}", finished.stderr);
    let text = read(&seen);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text:?}");
    assert_eq!(lines[0], "nightly report");
    // The default owner is <host name>:<pid of lockd run>:<16 random hex digits>.
    let mut parts = lines[1].rsplitn(3, ':');
    let (random, owner_pid, host) = (parts.next(), parts.next(), parts.next());
    assert!(!host.unwrap_or_default().is_empty(), "{text:?}");
    assert_eq!(owner_pid, Some(pid.to_string().as_str()), "{text:?}");
    assert_eq!(random.map(str::len), Some(16), "{text:?}");
    let token: i64 = lines[2].parse().expect("an integer token");
    assert!(
        token > before,
        "a new grant's token: {token} after {before}"
    );
    // Released when the command ended: the status endpoint shows no lock, and the next grant
    // is a new one.
    server
        .status("nightly report")
        .assert_problem(404, "not-found");
    assert!(server.acquire("nightly report", "after", 60).token() > token);

    // Exit 0 passes through too, and an explicit owner is used as given.
    let run = LockdRun::start(
        &server.base,
        &["--resource", "job:2", "--owner", "batch-7"],
        &["sh", "-c", "test \"$LOCKD_OWNER\" = batch-7"],
    );
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 0, "{}", finished.stderr);
    server.status("job:2").assert_problem(404, "not-found");
}

fn a_lock_held_by_another_owner_exits_75_without_running_the_command(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let token = server.acquire("held", "other", 300).token();
    let dir = tempfile::tempdir().expect("temp dir");
    let ran = in_dir(&dir, "ran");
    let run = LockdRun::start(
        &server.base,
        &["--resource", "held", "--wait", "0"],
        &["touch", &ran.display().to_string()],
    );
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 75, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("held by another owner"),
        "{}",
        finished.stderr
    );
    assert!(!ran.exists(), "the command must not run");
    let status = server.status("held");
    assert_eq!(status.body["owner"], "other");
    assert_eq!(status.body["fencing_token"], token);
}

/// `lockd run --semaphore`: the command sees what it holds; two runs share a limit of 3 (2 + 1
/// permits) while a third finds too few free and exits 75 without running; permits are released
/// when the command ends; a lost grant kills the command.
fn commands_run_while_holding_semaphore_permits(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (seen, ready_a, ready_b) = (
        in_dir(&dir, "seen"),
        in_dir(&dir, "ready-a"),
        in_dir(&dir, "ready-b"),
    );
    let (stop, ran) = (in_dir(&dir, "stop"), in_dir(&dir, "ran"));
    let holder = |ready: &Path, permits: &str| {
        let script = format!(
            "printf '%s %s %s %s\n' \"$LOCKD_SEMAPHORE\" \"$LOCKD_LIMIT\" \"$LOCKD_PERMITS\" \"$LOCKD_FENCING_TOKEN\" >> {seen}; \
             touch {ready}; while [ ! -e {stop} ]; do sleep 0.05; done",
            seen = seen.display(),
            ready = ready.display(),
            stop = stop.display()
        );
        LockdRun::start(
            &server.base,
            &[
                "--semaphore",
                "exports",
                "--limit",
                "3",
                "--permits",
                permits,
                "--ttl",
                "30",
            ],
            &["sh", "-c", &script],
        )
    };
    let a = holder(&ready_a, "2");
    let b = holder(&ready_b, "1");
    wait_for_file(&ready_a);
    wait_for_file(&ready_b);
    let status = server.send("GET", "/semaphores/exports", None);
    assert_eq!(
        (
            status.body["in_use"].as_i64(),
            status.body["limit"].as_i64()
        ),
        (Some(3), Some(3))
    );
    let third = LockdRun::start(
        &server.base,
        &["--semaphore", "exports", "--limit", "3", "--wait", "0"],
        &["touch", &ran.display().to_string()],
    )
    .finish(Duration::from_secs(20));
    assert_eq!(third.code(), 75, "{}", third.stderr);
    assert!(
        third.stderr.contains("too few permits free"),
        "{}",
        third.stderr
    );
    assert!(!ran.exists(), "the command must not run");
    // Another limit than the holders' is an input error.
    let other_limit = LockdRun::start(
        &server.base,
        &["--semaphore", "exports", "--limit", "4"],
        &["true"],
    )
    .finish(Duration::from_secs(20));
    assert_eq!(other_limit.code(), 64, "{}", other_limit.stderr);
    std::fs::write(&stop, b"").expect("stop");
    assert_eq!(a.finish(Duration::from_secs(20)).code(), 0);
    assert_eq!(b.finish(Duration::from_secs(20)).code(), 0);
    let mut lines: Vec<String> = read(&seen).lines().map(str::to_owned).collect();
    lines.sort();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("exports 3 1 ") && lines[1].starts_with("exports 3 2 "),
        "{lines:?}"
    );
    server
        .send("GET", "/semaphores/exports", None)
        .assert_problem(404, "not-found");

    // A grant that is lost (released behind its back) kills the command at the next renewal.
    let ready = in_dir(&dir, "ready-c");
    let script = format!(
        "touch {ready}; while :; do sleep 0.05; done",
        ready = ready.display()
    );
    let run = LockdRun::start(
        &server.base,
        &[
            "--semaphore",
            "exports",
            "--limit",
            "3",
            "--owner",
            "job",
            "--ttl",
            "3",
        ],
        &["sh", "-c", &script],
    );
    wait_for_file(&ready);
    let released = server.send("DELETE", "/semaphores/exports?owner=job", None);
    assert_eq!(released.status, 204, "{released:?}");
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 70, "{}", finished.stderr);
    assert!(finished.stderr.contains("is gone"), "{}", finished.stderr);
}

#[test]
fn an_api_key_is_sent_when_the_server_has_keys() {
    let db = TestDatabase::sqlite();
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = in_dir(&dir, "keys");
    let key = "run-key-0123456789";
    std::fs::write(&keys, format!("acme {}\n", crate::tenants::digest(key))).expect("keys");
    let server = TestServer::start(&db, &["--api-keys-file", &keys.display().to_string()]);
    let ran = in_dir(&dir, "ran");
    let command = ["touch", &ran.display().to_string()];

    let finished = LockdRun::start(&server.base, &["--resource", "k"], &command)
        .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 77, "no key: {}", finished.stderr);
    assert!(finished.stderr.contains("401"), "{}", finished.stderr);
    assert!(!ran.exists());

    let finished = LockdRun::start(
        &server.base,
        &["--resource", "k", "--api-key", "wrong"],
        &command,
    )
    .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 77, "wrong key: {}", finished.stderr);

    // From the environment; the lock is taken in the key's tenant and released afterwards.
    let seen = in_dir(&dir, "seen");
    let script = format!("echo $LOCKD_FENCING_TOKEN > {}", seen.display());
    let finished = LockdRun::start_with(
        &server.base,
        &["--resource", "k"],
        &["sh", "-c", &script],
        &[("LOCKD_API_KEY", key)],
    )
    .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 0, "{}", finished.stderr);
    assert_eq!(read(&seen).trim(), "1");
    let status = server.send_with_header(
        "GET",
        "/locks/k",
        None,
        ("authorization", &format!("Bearer {key}")),
    );
    status.assert_problem(404, "not-found");
}

#[test]
fn an_unreachable_server_or_a_missing_command_fails_clearly() {
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let finished = LockdRun::start(
        &format!("http://127.0.0.1:{port}"),
        &["--resource", "r"],
        &["true"],
    )
    .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 69, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("no answer from the lock server"),
        "{}",
        finished.stderr
    );

    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let finished = LockdRun::start(&server.base, &["--resource", "r"], &["/no/such/command"])
        .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 127, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("cannot run"),
        "{}",
        finished.stderr
    );
    // The lock taken for it was released.
    server.status("r").assert_problem(404, "not-found");

    // A bad owner is the server's 422: exit 64, nothing runs.
    let finished = LockdRun::start(
        &server.base,
        &["--resource", "r", "--owner", " "],
        &["true"],
    )
    .finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 64, "{}", finished.stderr);
    assert!(finished.stderr.contains("422"), "{}", finished.stderr);
}

#[test]
fn sigterm_to_lockd_run_is_forwarded_and_the_lock_released() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (ready, got) = (in_dir(&dir, "ready"), in_dir(&dir, "got"));
    let script = format!(
        "trap 'echo TERM > {got}; exit 3' TERM; touch {ready}; while :; do sleep 0.05; done",
        got = got.display(),
        ready = ready.display()
    );
    let run = LockdRun::start(&server.base, &["--resource", "sig"], &["sh", "-c", &script]);
    wait_for_file(&ready);
    assert_eq!(
        server.status("sig").status,
        200,
        "held while the command runs"
    );
    signal(run.pid(), "TERM");
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(read(&got).trim(), "TERM");
    assert_eq!(
        finished.code(),
        3,
        "the command's status: {}",
        finished.stderr
    );
    server.status("sig").assert_problem(404, "not-found");
}

/// The server dies mid-run: the command gets SIGTERM before the TTL since the last successful
/// renewal runs out, and `lockd run` fails although the command exits 0.
#[test]
fn the_command_is_stopped_before_the_lease_can_run_out_when_the_server_dies() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (ready, term) = (in_dir(&dir, "ready"), in_dir(&dir, "term"));
    let script = format!(
        "trap 'date +%s%N > {term}; exit 0' TERM; touch {ready}; while :; do sleep 0.05; done",
        term = term.display(),
        ready = ready.display()
    );
    let ttl = Duration::from_secs(3);
    let run = LockdRun::start(
        &server.base,
        &["--resource", "fragile", "--ttl", "3", "--kill-grace", "5"],
        &["sh", "-c", &script],
    );
    wait_for_file(&ready);
    // After at least one renewal (due 1 s after the grant).
    std::thread::sleep(Duration::from_millis(1_300));
    let stopped_at = now_ns();
    server.kill9();
    let finished = run.finish(Duration::from_secs(20));
    let term_at: u128 = read(&term).trim().parse().expect("the command got SIGTERM");
    let after_stop = Duration::from_nanos((term_at - stopped_at) as u64);
    eprintln!("SIGTERM {after_stop:?} after the server died (ttl {ttl:?})");
    // The last successful renewal was sent before the server died, so its lease ends at most
    // ttl after the stop: the command had to be stopped before that.
    assert!(after_stop < ttl, "SIGTERM {after_stop:?} after the stop");
    assert_eq!(finished.code(), 70, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("stopping the command (SIGTERM"),
        "{}",
        finished.stderr
    );
}

/// A command that ignores SIGTERM is killed, still inside the lease, and `lockd run` fails. The
/// server is frozen (SIGSTOP), so renewals hang rather than fail at once: their timeout matters.
#[test]
fn a_command_ignoring_sigterm_is_killed_inside_the_lease() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = in_dir(&dir, "pid");
    // It also starts a process of its own, which must die with it.
    let script = format!(
        "sleep 1000 & trap '' TERM; echo $$ $! > {pid}.tmp; mv {pid}.tmp {pid}; while :; do sleep 0.05; done",
        pid = pid_file.display()
    );
    let ttl = Duration::from_secs(4);
    let run = LockdRun::start(
        &server.base,
        &["--resource", "stubborn", "--ttl", "4"],
        &["sh", "-c", &script],
    );
    wait_for_file(&pid_file);
    let pids = read(&pid_file);
    let (command_pid, started_pid) = pids.trim().split_once(' ').expect("two pids");
    std::thread::sleep(Duration::from_millis(1_500));
    let stopped = Instant::now();
    signal(server.pid(), "STOP");
    while (is_alive(command_pid) || is_alive(started_pid))
        && stopped.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dead_after = stopped.elapsed();
    let finished = run.finish(Duration::from_secs(20));
    signal(server.pid(), "CONT");
    eprintln!(
        "the command was dead {dead_after:?} after the server froze (ttl {ttl:?}); lockd run exited {:?} after its start",
        finished.after
    );
    assert!(dead_after < ttl, "killed {dead_after:?} after the stop");
    assert_eq!(finished.code(), 70, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("did not stop after SIGTERM"),
        "{}",
        finished.stderr
    );
}

/// A renewal answered 404 (the lock was released behind lockd run's back) or 403 (and another
/// owner took it): the lease is lost, the command is killed at once (no grace: another holder may
/// already have the lock).
#[test]
fn a_lost_lease_kills_the_command_at_once() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    for (resource, thief, message) in [
        ("gone", None, "is gone (expired or released)"),
        ("taken", Some("thief"), "another owner holds the lock"),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (ready, term) = (in_dir(&dir, "ready"), in_dir(&dir, "term"));
        let script = format!(
            "trap 'touch {term}; exit 0' TERM; touch {ready}; while :; do sleep 0.05; done",
            term = term.display(),
            ready = ready.display()
        );
        let run = LockdRun::start(
            &server.base,
            &["--resource", resource, "--owner", "job", "--ttl", "3"],
            &["sh", "-c", &script],
        );
        wait_for_file(&ready);
        assert_eq!(server.release(resource, "job").status, 204);
        let taken = thief.map(|thief| server.acquire(resource, thief, 60).token());
        let lost = Instant::now();
        let finished = run.finish(Duration::from_secs(20));
        let after = lost.elapsed();
        assert_eq!(finished.code(), 70, "{}", finished.stderr);
        assert!(finished.stderr.contains(message), "{}", finished.stderr);
        assert!(!term.exists(), "SIGKILL, not SIGTERM");
        // The next renewal is due within ttl/3 = 1 s.
        assert!(
            after < Duration::from_millis(1_800),
            "killed {after:?} after the loss"
        );
        match taken {
            // The new holder's lock is untouched.
            Some(token) => assert_eq!(server.status(resource).body["fencing_token"], token),
            None => server.status(resource).assert_problem(404, "not-found"),
        }
    }
}

/// Two containers with the same host name, each running `lockd run` as pid 1 (here: each in a
/// new PID namespace, `unshare --pid`), without `--owner`: their default owners differ, so the
/// second waits for the first instead of being re-granted its lock, and the commands never run
/// at the same time.
#[test]
fn two_runs_without_owner_as_pid_1_on_one_host_never_run_together() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let unshare = ["unshare", "--pid", "--fork", "--kill-child"];
    let in_namespaces = Command::new(unshare[0])
        .args(&unshare[1..])
        .args(["sh", "-c", "test $$ = 1"])
        .status()
        .is_ok_and(|status| status.success());
    let wrapper: &[&str] = if in_namespaces {
        &unshare
    } else {
        eprintln!("unshare --pid is not permitted here: both runs share the PID namespace");
        &[]
    };
    let (busy, overlap) = (in_dir(&dir, "busy"), in_dir(&dir, "overlap"));
    let runs: Vec<_> = (0..2)
        .map(|i| {
            let owner = in_dir(&dir, &format!("owner-{i}"));
            // mkdir fails if the other command is inside its critical section.
            let script = format!(
                "echo \"$LOCKD_OWNER\" > {owner}; if mkdir {busy}; then sleep 1.5; rmdir {busy}; else touch {overlap}; fi",
                owner = owner.display(),
                busy = busy.display(),
                overlap = overlap.display(),
            );
            LockdRun::start_under(
                wrapper,
                &server.base,
                &["--resource", "shared", "--wait", "30"],
                &["sh", "-c", &script],
                &[],
            )
        })
        .collect();
    let finished: Vec<_> = runs
        .into_iter()
        .map(|run| run.finish(Duration::from_secs(40)))
        .collect();
    assert!(!overlap.exists(), "the two commands ran at the same time");
    for finished in finished {
        assert_eq!(finished.code(), 0, "{}", finished.stderr);
    }
    let owners: Vec<String> = (0..2)
        .map(|i| read(&in_dir(&dir, &format!("owner-{i}"))).trim().to_owned())
        .collect();
    eprintln!("owners: {owners:?}");
    if in_namespaces {
        assert!(
            owners.iter().all(|owner| owner.contains(":1:")),
            "both ran as pid 1: {owners:?}"
        );
    }
    assert_ne!(owners[0], owners[1], "two invocations, two owners");
    server.status("shared").assert_problem(404, "not-found");
}

/// `--wait`: the holder releases after a second and `lockd run` gets the lock then. This works
/// against a server with or without `wait_seconds` support (a server without it ignores the
/// field and `lockd run` asks again every 250 ms until the wait is over).
#[test]
fn with_wait_the_lock_is_taken_when_the_holder_releases() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let token = server.acquire("queue", "first", 300).token();
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = in_dir(&dir, "seen");
    let script = format!("echo $LOCKD_FENCING_TOKEN > {}", seen.display());
    let run = LockdRun::start(
        &server.base,
        &["--resource", "queue", "--wait", "10"],
        &["sh", "-c", &script],
    );
    std::thread::sleep(Duration::from_millis(1_000));
    assert!(!seen.exists(), "the command must wait for the lock");
    let released = Instant::now();
    assert_eq!(server.release("queue", "first").status, 204);
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 0, "{}", finished.stderr);
    let got: i64 = read(&seen).trim().parse().expect("token");
    assert!(got > token);
    let waited = released.elapsed();
    eprintln!("lockd run finished {waited:?} after the release");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    server.status("queue").assert_problem(404, "not-found");
}

/// `--wait` runs out: exit 75 after the wait, not before, and the command never ran.
#[test]
fn with_wait_a_lock_held_throughout_exits_75_after_the_wait() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    server.acquire("busy", "holder", 300).token();
    let dir = tempfile::tempdir().expect("temp dir");
    let ran = in_dir(&dir, "ran");
    let run = LockdRun::start(
        &server.base,
        &["--resource", "busy", "--wait", "2"],
        &["touch", &ran.display().to_string()],
    );
    let finished = run.finish(Duration::from_secs(30));
    assert_eq!(finished.code(), 75, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("waited 2 s"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.after >= Duration::from_secs(2) && finished.after < Duration::from_secs(6),
        "{:?}",
        finished.after
    );
    assert!(!ran.exists());
    assert_eq!(server.status("busy").body["owner"], "holder");
}

/// `lockd run` itself is killed (SIGKILL, the OOM killer): nothing renews any more, so the
/// command is killed with it (by the keeper, which sees lockd run's end).
#[test]
fn the_command_dies_with_lockd_run() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = in_dir(&dir, "pid");
    let script = format!(
        "echo $$ > {pid}.tmp; mv {pid}.tmp {pid}; while :; do sleep 0.05; done",
        pid = pid_file.display()
    );
    let run = LockdRun::start(
        &server.base,
        &["--resource", "orphan"],
        &["sh", "-c", &script],
    );
    wait_for_file(&pid_file);
    let command_pid = read(&pid_file).trim().to_owned();
    signal(run.pid(), "KILL");
    // Before reading lockd run's stderr: a surviving command would hold that pipe open.
    let started = Instant::now();
    while is_alive(&command_pid) {
        if started.elapsed() > Duration::from_secs(5) {
            signal(command_pid.parse().expect("pid"), "KILL");
            panic!("the command outlived lockd run");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let finished = run.finish(Duration::from_secs(10));
    assert_eq!(finished.status.code(), None, "killed by a signal");
}
/// The audit events (`event="..."`) the server logged for `owner`.
fn audit_events(server: &TestServer, owner: &str) -> Vec<String> {
    server
        .drain_stderr()
        .into_iter()
        .filter(|line| line.contains("lockd::audit") && line.contains(&format!("owner={owner}")))
        .filter_map(|line| {
            let start = line.find("event=\"")? + "event=\"".len();
            let end = start + line[start..].find('"')?;
            Some(line[start..end].to_owned())
        })
        .collect()
}

/// With a server that waits, `--wait 2` on a lock held throughout is ONE acquire request, held
/// by the server for the whole wait and answered "held" once (no polling).
#[test]
fn with_wait_the_server_holds_one_request_for_the_whole_wait() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &["--log", "info"]);
    server.acquire("held long", "holder", 300).token();
    let run = LockdRun::start(
        &server.base,
        &[
            "--resource",
            "held long",
            "--owner",
            "waiter",
            "--wait",
            "2",
        ],
        &["true"],
    );
    let finished = run.finish(Duration::from_secs(30));
    assert_eq!(finished.code(), 75, "{}", finished.stderr);
    assert!(
        finished.after >= Duration::from_secs(2),
        "{:?}",
        finished.after
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        audit_events(&server, "waiter"),
        ["denied"],
        "one waiting request"
    );
}

/// With a server that waits, a waiting `lockd run` is granted by the release itself (pushed, not
/// polled): one acquire request, no denial, and the command starts promptly.
#[test]
fn with_wait_the_release_grants_the_waiting_request() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &["--log", "info"]);
    server.acquire("handover", "holder", 300).token();
    let dir = tempfile::tempdir().expect("temp dir");
    let started = in_dir(&dir, "started");
    let script = format!("touch {}", started.display());
    let run = LockdRun::start(
        &server.base,
        &[
            "--resource",
            "handover",
            "--owner",
            "waiter",
            "--wait",
            "10",
        ],
        &["sh", "-c", &script],
    );
    std::thread::sleep(Duration::from_millis(1_000));
    let released = Instant::now();
    assert_eq!(server.release("handover", "holder").status, 204);
    wait_for_file(&started);
    let latency = released.elapsed();
    let finished = run.finish(Duration::from_secs(20));
    assert_eq!(finished.code(), 0, "{}", finished.stderr);
    eprintln!("the command started {latency:?} after the release");
    assert!(latency < Duration::from_millis(1_000), "{latency:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        audit_events(&server, "waiter"),
        ["granted", "released"],
        "granted by the release, without polling"
    );
}

/// Whether `pid` is a process that has not ended (a zombie has ended).
fn is_running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 1..].split_whitespace().next()?;
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

/// `lockd run` killed with SIGKILL: nothing renews the lease any more, so the command's whole
/// tree must be dead before the lease can run out — not only the command (which PDEATHSIG
/// reaches), but what it started: a background job in its group, a `setsid` job out of the
/// group, and a double-forked `setsid` daemon whose parent has already exited.
#[test]
fn the_whole_command_tree_dies_when_lockd_run_is_killed() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let pids = in_dir(&dir, "pids");
    let daemon = in_dir(&dir, "daemon");
    let script = format!(
        "sleep 1000 & a=$!; setsid sleep 1000 & b=$!; \
         setsid sh -c 'sleep 1000 & echo $! > {daemon}.tmp; mv {daemon}.tmp {daemon}' & \
         echo $$ $a $b > {pids}.tmp; mv {pids}.tmp {pids}; wait",
        daemon = daemon.display(),
        pids = pids.display()
    );
    let ttl = Duration::from_secs(5);
    let run = LockdRun::start(
        &server.base,
        &["--resource", "tree", "--ttl", "5"],
        &["sh", "-c", &script],
    );
    wait_for_file(&pids);
    wait_for_file(&daemon);
    let mut tree: Vec<String> = read(&pids).split_whitespace().map(str::to_owned).collect();
    tree.push(read(&daemon).trim().to_owned());
    assert_eq!(tree.len(), 4, "{tree:?}");
    assert!(tree.iter().all(|pid| is_running(pid)), "{tree:?}");
    let killed = Instant::now();
    signal(run.pid(), "KILL");
    while tree.iter().any(|pid| is_running(pid)) && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let dead_after = killed.elapsed();
    let survivors: Vec<&String> = tree.iter().filter(|pid| is_running(pid)).collect();
    for pid in &survivors {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    eprintln!("the tree was dead {dead_after:?} after lockd run was killed (ttl {ttl:?})");
    assert!(
        survivors.is_empty(),
        "survived lockd run: {survivors:?} of {tree:?}"
    );
    assert!(dead_after < ttl, "dead {dead_after:?} after the kill");
    let finished = run.finish(Duration::from_secs(10));
    assert_eq!(finished.status.code(), None, "killed by a signal");
}

/// The command exits and leaves a background job behind: the lock stays held (another owner
/// is refused) until that job has ended, then it is released, and `lockd run` exits with the
/// command's status, not the job's.
#[test]
fn the_lock_is_held_until_what_the_command_left_behind_has_ended() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let (exited, marker) = (in_dir(&dir, "exited"), in_dir(&dir, "marker"));
    let script = format!(
        "(sleep 2; touch {marker}) & touch {exited}; exit 3",
        marker = marker.display(),
        exited = exited.display()
    );
    let run = LockdRun::start(
        &server.base,
        &["--resource", "leftover", "--ttl", "30"],
        &["sh", "-c", &script],
    );
    wait_for_file(&exited);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!marker.exists(), "the background job still runs");
    let held = server.status("leftover");
    assert_eq!(held.status, 200, "held while the background job runs");
    let other = server.acquire("leftover", "someone else", 30);
    assert_eq!(other.body["acquired"], false, "{:?}", other.body);
    let finished = run.finish(Duration::from_secs(20));
    assert!(marker.exists(), "lockd run ended before the background job");
    assert_eq!(
        finished.code(),
        3,
        "the command's status: {}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("left behind"),
        "{}",
        finished.stderr
    );
    server.status("leftover").assert_problem(404, "not-found");
}

/// The command has exited but left a job behind (out of its group, with `setsid`) and the
/// server dies: the deadlines still apply, so the job is stopped before the lease can run out,
/// and `lockd run` fails.
#[test]
fn what_the_command_left_behind_is_stopped_before_the_lease_can_run_out() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = in_dir(&dir, "pid");
    let script = format!(
        "setsid sleep 1000 & echo $! > {pid}.tmp; mv {pid}.tmp {pid}; exit 0",
        pid = pid_file.display()
    );
    let ttl = Duration::from_secs(3);
    let run = LockdRun::start(
        &server.base,
        &["--resource", "left", "--ttl", "3", "--kill-grace", "1"],
        &["sh", "-c", &script],
    );
    wait_for_file(&pid_file);
    let job = read(&pid_file).trim().to_owned();
    std::thread::sleep(Duration::from_millis(1_300));
    assert!(is_running(&job), "the job runs on after the command");
    let stopped = Instant::now();
    server.kill9();
    while is_running(&job) && stopped.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let dead_after = stopped.elapsed();
    if is_running(&job) {
        let _ = Command::new("kill").args(["-KILL", &job]).status();
    }
    let finished = run.finish(Duration::from_secs(20));
    eprintln!("the job was dead {dead_after:?} after the server died (ttl {ttl:?})");
    assert!(dead_after < ttl, "dead {dead_after:?} after the stop");
    assert_eq!(finished.code(), 70, "{}", finished.stderr);
}
