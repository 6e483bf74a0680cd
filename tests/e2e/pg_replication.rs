//! A PostgreSQL primary and a streaming standby of it (`pg_basebackup -R`), each a
//! [`Cluster`] of the test's own, for failovers: `kill -9` of the primary, `pg_ctl promote` of
//! the standby, and a standby cut off from the primary so that it falls behind.

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::pg_cluster::{run, sql, Cluster};

/// How the primary waits for its standby.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// `synchronous_standby_names = '*'`: a commit returns once the standby has it.
    Synchronous,
    /// The default: a commit returns once it is on the primary's disk.
    Asynchronous,
}

pub struct Pair {
    pub primary: Cluster,
    pub standby: Cluster,
}

impl Pair {
    /// A primary with a database `locks` and a standby streaming from it, in sync when asked.
    /// `None` where [`Cluster::start`] skips.
    pub fn start(replication: Replication) -> Option<Self> {
        let primary = Cluster::start()?;
        let standby = Cluster::empty();
        standby.as_postgres(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &primary.port.to_string(),
                "-U",
                "postgres",
                "-D",
                &standby.data_text(),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        );
        standby.pg_ctl(&["start", "-w"]);
        let pair = Self { primary, standby };
        pair.wait_for(&pair.primary, "the standby streams", |p| {
            sql(
                p,
                "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
            ) == "1"
        });
        if replication == Replication::Synchronous {
            // Only now: with no standby connected, every commit (even CREATE DATABASE) would wait.
            sql(
                &pair.primary,
                "ALTER SYSTEM SET synchronous_standby_names = '*'",
            );
            sql(&pair.primary, "SELECT pg_reload_conf()");
            pair.wait_for(&pair.primary, "the standby is synchronous", |p| {
                sql(
                    p,
                    "SELECT string_agg(sync_state, ',') FROM pg_stat_replication",
                ) == "sync"
            });
        }
        Some(pair)
    }

    /// The URL lockd is given: both hosts, the one that takes writes chosen at each connection.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/locks?target_session_attrs=read-write",
            self.primary.port, self.standby.port
        )
    }

    /// The URL of the standby alone.
    pub fn standby_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/locks", self.standby.port)
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    pub fn wait_replayed(&self) {
        let written = sql(&self.primary, "SELECT pg_current_wal_lsn()");
        let query = format!("SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn");
        self.wait_for(&self.standby, "the standby replays", |s| {
            sql(s, &query) == "t"
        });
    }

    /// Cuts the standby off the primary (its `primary_conninfo` names a closed port), so that
    /// nothing the primary commits from now on reaches it.
    pub fn cut_standby(&self) {
        sql(
            &self.standby,
            "ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1 user=postgres'",
        );
        sql(&self.standby, "SELECT pg_reload_conf()");
        self.wait_for(&self.primary, "the standby is cut off", |p| {
            sql(p, "SELECT count(*) FROM pg_stat_replication") == "0"
        });
    }

    /// `kill -9` of the primary's postmaster; answers once its port refuses connections.
    pub fn kill_primary(&self) -> Instant {
        let pid_file = std::fs::read_to_string(self.primary.data.join("postmaster.pid"))
            .expect("the primary's postmaster.pid");
        let pid = pid_file.lines().next().expect("a pid").trim().to_owned();
        let killed = Instant::now();
        run(Command::new("kill").args(["-9", &pid]));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.primary.port)).is_ok() {
            assert!(
                Instant::now() < deadline,
                "the killed primary still accepts"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        killed
    }

    /// `pg_ctl promote -w`; answers once the standby takes writes.
    pub fn promote(&self) -> Instant {
        self.standby.pg_ctl(&["promote", "-w"]);
        Instant::now()
    }

    fn wait_for(&self, cluster: &Cluster, what: &str, done: impl Fn(&Cluster) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done(cluster) {
            assert!(Instant::now() < deadline, "{what}: not within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
