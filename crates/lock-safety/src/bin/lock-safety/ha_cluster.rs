//! A PostgreSQL primary and its synchronous streaming standby, both on this machine, which the
//! fault injector fails over: `kill -9` of the primary, promotion of the standby, then the old
//! primary rebuilt as the new one's standby. lockd reaches them by a multi-host URL, so it finds
//! the primary itself.

mod node;

use std::sync::Mutex;

use crate::cluster::free_port;
pub use node::PgNode;

/// The statement that answers `sync` once the primary has a synchronous standby streaming.
const SYNC_STATE: &str = "SELECT string_agg(sync_state, ',') FROM pg_stat_replication \
                          WHERE state = 'streaming'";

/// One failover's instants (microseconds, the history's clock) and what it did.
#[derive(Debug, Clone)]
pub struct Failover {
    /// The node that was primary (0 or 1), and the one promoted.
    pub from: usize,
    pub to: usize,
    /// How many processes the kill ended (the postmaster and its children).
    pub processes: usize,
    pub killed: i64,
    /// The old primary's port refused connections.
    pub down: i64,
    /// `pg_ctl promote -w` returned: the new primary accepts writes.
    pub promoted: i64,
    /// The old primary, rebuilt, streams to the new one as its synchronous standby (none while
    /// it does not yet, or when the rebuild failed).
    pub in_sync: Option<i64>,
}

/// The two servers; `primary` says which one is the primary now.
pub struct PgPair {
    nodes: [PgNode; 2],
    primary: Mutex<usize>,
    failovers: Mutex<Vec<Failover>>,
    _dir: tempfile::TempDir,
}

impl PgPair {
    /// Makes a primary with initdb, a standby of it with pg_basebackup, and makes the standby
    /// synchronous once it streams (before that, naming it would leave every commit waiting).
    ///
    /// # Errors
    /// The tool or statement that failed, and its output.
    pub fn start(bin: &std::path::Path) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("lock-safety-pg-ha")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        // The servers refuse to run as root: they run as the postgres user then, in a directory
        // it owns (pg_basebackup makes the standby's data directory there itself).
        let as_postgres = unsafe { libc::geteuid() } == 0;
        if as_postgres {
            crate::cluster::run(std::process::Command::new("chown").args([
                "-R",
                "postgres:",
                &dir.path().to_string_lossy(),
            ]))?;
        }
        let (a, b) = (free_port(), free_port());
        let pair = Self {
            nodes: [
                PgNode::new(dir.path(), "node-0", a, bin, as_postgres),
                PgNode::new(dir.path(), "node-1", b, bin, as_postgres),
            ],
            primary: Mutex::new(0),
            failovers: Mutex::new(Vec::new()),
            _dir: dir,
        };
        pair.nodes[0].initdb()?;
        pair.nodes[0].start()?;
        pair.nodes[0].query("ALTER SYSTEM SET synchronous_commit = on")?;
        pair.follow(0)?;
        Ok(pair)
    }

    /// lockd's URL: both servers, so that libpq tries them in turn and keeps the one that takes
    /// writes.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
            self.nodes[0].port, self.nodes[1].port
        )
    }

    fn primary(&self) -> usize {
        *self.primary.lock().expect("primary")
    }

    /// Builds the node that is not `primary` afresh as its standby, starts it, waits until it
    /// streams, then names it the primary's synchronous standby and waits until it is.
    fn follow(&self, primary: usize) -> Result<(), String> {
        let (leader, standby) = (&self.nodes[primary], &self.nodes[1 - primary]);
        standby.clone_from(leader.port)?;
        standby.start()?;
        leader.wait_for(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
            "1",
        )?;
        leader.query("ALTER SYSTEM SET synchronous_standby_names = '*'")?;
        leader.query("SELECT pg_reload_conf()")?;
        leader.wait_for(SYNC_STATE, "sync")
    }

    /// Waits until the primary has its synchronous standby streaming (after a restart of the
    /// primary the standby reconnects within a moment): only then is a failover one that keeps
    /// every acknowledged commit.
    ///
    /// # Errors
    /// When it does not within a minute.
    pub fn await_sync(&self) -> Result<(), String> {
        self.nodes[self.primary()].wait_for(SYNC_STATE, "sync")
    }

    /// The failover: `kill -9` of the primary and everything it forked, then, once its port
    /// refuses connections, `pg_ctl promote -w` of the standby. Returns what happened, for the
    /// fault's line. The caller has made sure the standby was synchronous ([`PgPair::await_sync`])
    /// and rebuilds the old primary afterwards ([`PgPair::rebuild`]).
    ///
    /// # Errors
    /// A kill that left the port open, or a promotion that failed.
    pub fn failover(&self, now: &dyn Fn() -> i64) -> Result<String, String> {
        let from = self.primary();
        let to = 1 - from;
        let killed = now();
        let processes = self.nodes[from].kill9()?;
        let down = now();
        self.nodes[to].promote()?;
        let promoted = now();
        *self.primary.lock().expect("primary") = to;
        self.failovers.lock().expect("failovers").push(Failover {
            from,
            to,
            processes,
            killed,
            down,
            promoted,
            in_sync: None,
        });
        Ok(format!(
            "port {} killed ({processes} processes, refused after {} ms), port {} promoted {} ms later",
            self.nodes[from].port,
            (down - killed) / 1000,
            self.nodes[to].port,
            (promoted - down) / 1000
        ))
    }

    /// Rebuilds the old primary as the new primary's synchronous standby, and notes when it is
    /// in sync in the last failover.
    ///
    /// # Errors
    /// The step that failed (the primary then goes on alone, committing without a standby).
    pub fn rebuild(&self, now: &dyn Fn() -> i64) -> Result<(), String> {
        self.follow(self.primary())?;
        if let Some(last) = self.failovers.lock().expect("failovers").last_mut() {
            last.in_sync = Some(now());
        }
        Ok(())
    }

    /// Restarts the primary (fast shutdown); its standby reconnects by itself.
    ///
    /// # Errors
    /// pg_ctl's output when the restart failed.
    pub fn restart_primary(&self) -> Result<(), String> {
        self.nodes[self.primary()].restart()
    }

    /// Leaves a primary that takes writes and its synchronous standby streaming. When the
    /// standby cannot be brought back, the primary is told to commit without it, so that the
    /// run can still read lockd's history, and the failure is reported.
    ///
    /// # Errors
    /// The primary does not take writes, or the standby could not be brought back.
    pub fn heal(&self) -> Result<(), String> {
        let primary = &self.nodes[self.primary()];
        if primary.query("SELECT pg_is_in_recovery()")? != "f" {
            return Err(format!("port {} is not a primary", primary.port));
        }
        if self.await_sync().is_ok() {
            return Ok(());
        }
        match self.follow(self.primary()) {
            Ok(()) => Ok(()),
            Err(error) => {
                primary.query("ALTER SYSTEM RESET synchronous_standby_names")?;
                primary.query("SELECT pg_reload_conf()")?;
                Err(format!("the standby could not be rebuilt: {error}"))
            }
        }
    }

    /// Every failover so far.
    pub fn failovers(&self) -> Vec<Failover> {
        self.failovers.lock().expect("failovers").clone()
    }

    /// Copies both servers' logs into `out` (`postgres-PORT.log`), to be read beside lockd's.
    pub fn keep_logs(&self, out: &std::path::Path) {
        for node in &self.nodes {
            let _ = std::fs::copy(node.log(), out.join(format!("postgres-{}.log", node.port)));
        }
    }
}

impl Drop for PgPair {
    fn drop(&mut self) {
        for node in &self.nodes {
            node.stop();
        }
    }
}
