//! A PostgreSQL cluster of a test's own (the PostgreSQL 15 server binaries, `initdb` and
//! `pg_ctl`, in a temporary directory on a free port), for faults that must not touch the shared
//! server: restarting it, stopping it, killing it and promoting a streaming standby of it
//! (`pg_basebackup`). Stopped (`immediate`) and removed when dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// Where Debian's PostgreSQL 15 keeps its server binaries.
const BIN: &str = "/usr/lib/postgresql/15/bin";

pub struct Cluster {
    pub data: PathBuf,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// A new cluster, started, with a database `locks`. `None`, after a loud message, where the
    /// server binaries are missing; in CI (`CI` set) that fails instead.
    pub fn start() -> Option<Self> {
        Self::start_initdb(&[])
    }

    /// [`Cluster::start`] with more `initdb` arguments (`-X DIR` to keep the WAL elsewhere).
    pub fn start_initdb(more: &[&str]) -> Option<Self> {
        if !Path::new(BIN).join("initdb").exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{BIN}/initdb is missing; in CI (CI is set) this test must run, not skip"
            );
            eprintln!("\n!!!!! SKIPPING: no PostgreSQL server binaries in {BIN}\n");
            return None;
        }
        let cluster = Self::empty();
        let data = cluster.data_text();
        let mut args = vec!["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"];
        args.extend_from_slice(more);
        cluster.as_postgres("initdb", &args);
        cluster.pg_ctl(&["start", "-w"]);
        cluster.as_postgres(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &cluster.port.to_string(),
                "-U",
                "postgres",
                "locks",
            ],
        );
        Some(cluster)
    }

    /// The database URL of `locks`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/locks", self.port)
    }

    /// `pg_ctl restart -m fast`; answers when the server accepts connections again.
    pub fn restart_fast(&self) -> Instant {
        self.pg_ctl(&["restart", "-m", "fast", "-w"]);
        Instant::now()
    }

    /// A cluster's directory and port, with no data directory yet.
    pub(crate) fn empty() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        // initdb refuses to run as root: the cluster belongs to `postgres` then.
        if is_root() {
            run(Command::new("chown").arg("postgres").arg(dir.path()));
        }
        Self {
            data,
            port: free_port(),
            _dir: dir,
        }
    }

    /// What `pg_ctl status` says (it fails when no server runs; its words are kept either way).
    pub fn pg_ctl_status(&self) -> String {
        let data = self.data_text();
        match self.as_postgres_quiet(&["status", "-D", &data]) {
            Ok(output) => String::from_utf8_lossy(&output.stdout).trim().to_owned(),
            Err(error) => format!("pg_ctl status failed: {error}"),
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        let log = self
            .data
            .parent()
            .expect("the data directory's parent")
            .join("log");
        std::fs::read_to_string(log).unwrap_or_default()
    }

    pub(crate) fn data_text(&self) -> String {
        self.data.display().to_string()
    }

    pub(crate) fn pg_ctl(&self, args: &[&str]) -> Output {
        let data = self.data_text();
        let sockets = self.data.parent().expect("the data directory's parent");
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=on",
            self.port,
            sockets.display()
        );
        // The server's output goes to a file: it must not hold this process's pipes open.
        let log = format!("{}/log", sockets.display());
        let mut all = vec![
            "-D",
            data.as_str(),
            "-o",
            options.as_str(),
            "-l",
            log.as_str(),
        ];
        all.extend_from_slice(args);
        self.as_postgres("pg_ctl", &all)
    }

    pub(crate) fn as_postgres(&self, program: &str, args: &[&str]) -> Output {
        let program = format!("{BIN}/{program}");
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--", &program]);
            command
        } else {
            Command::new(&program)
        };
        run(command.args(args))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data_text();
        let _ = self.as_postgres_quiet(&["stop", "-D", &data, "-m", "immediate"]);
    }
}

impl Cluster {
    fn as_postgres_quiet(&self, args: &[&str]) -> std::io::Result<Output> {
        let program = format!("{BIN}/pg_ctl");
        if is_root() {
            Command::new("runuser")
                .args(["-u", "postgres", "--", &program])
                .args(args)
                .output()
        } else {
            Command::new(program).args(args).output()
        }
    }
}

pub(crate) fn run(command: &mut Command) -> Output {
    let output = command.output().expect("the command starts");
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One statement's answer, unaligned and without headers, on `cluster`'s `locks`.
pub fn sql(cluster: &Cluster, statement: &str) -> String {
    let output = run(Command::new("psql").args([
        "-X",
        "-tA",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        &cluster.port.to_string(),
        "-U",
        "postgres",
        "-d",
        "locks",
        "-c",
        statement,
    ]));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
