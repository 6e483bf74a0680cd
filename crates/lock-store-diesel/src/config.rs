//! How to open the store: [`StoreConfig`], and the deadlines a PostgreSQL operation keeps.

use std::time::Duration;

use crate::database_url::DatabaseUrl;

/// How long after its expiry a row may be deleted, by default. Much longer than any statement may run (on
/// PostgreSQL `statement_timeout` is 1.5 s), which the fencing-token argument of the PostgreSQL
/// statements relies on.
pub const SWEEP_GRACE: Duration = Duration::from_secs(60);

/// SQLite: the bytes a WAL file keeps by default (`StoreConfig::sqlite_wal_limit`).
pub const SQLITE_WAL_LIMIT: u64 = 64 << 20;

/// How to open the store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub url: DatabaseUrl,
    /// Pooled connections; `None` picks the backend's default (SQLite 4, PostgreSQL 16).
    pub pool_size: Option<u32>,
    /// How long a request waits for a pooled connection before the database counts as
    /// unavailable.
    pub connection_timeout: Duration,
    /// How long SQLite waits for another process's write lock before giving up.
    pub sqlite_busy_timeout: Duration,
    /// SQLite durability (default [`SqliteSynchronous::Full`]).
    pub sqlite_synchronous: SqliteSynchronous,
    /// SQLite: bytes the WAL file keeps once nothing needs what it holds (default 64 MiB; see
    /// `writer::wal_limit`). While a reader holds a snapshot, the WAL grows past it.
    pub sqlite_wal_limit: u64,
    /// How long after its expiry a row may be swept (default [`SWEEP_GRACE`]). On
    /// PostgreSQL it must stay well above `statement_timeout`.
    pub sweep_grace: Duration,
    /// PostgreSQL: the server cancels statements running longer than this (default 1.5 s).
    pub statement_timeout: Duration,
    /// SQLite: the most writes committed together in one transaction (default 256).
    pub sqlite_max_batch: usize,
    /// PostgreSQL: how many connections run batched writes (see `writer::postgres_batch`); 0
    /// runs every write alone on the request's own pooled connection, as the batched statement
    /// with that one operation (default 2).
    pub postgres_batch_connections: u32,
    /// PostgreSQL: the most writes in one batched statement (default 256).
    pub postgres_max_batch: usize,
    /// Whether this process's writes record history (default true; see the `history` module).
    pub record_history: bool,
}

impl StoreConfig {
    pub fn new(url: DatabaseUrl) -> Self {
        Self {
            url,
            pool_size: None,
            connection_timeout: Duration::from_secs(2),
            sqlite_busy_timeout: Duration::from_secs(5),
            sqlite_synchronous: SqliteSynchronous::Full,
            sqlite_wal_limit: SQLITE_WAL_LIMIT,
            sweep_grace: SWEEP_GRACE,
            statement_timeout: Duration::from_millis(1_500),
            sqlite_max_batch: 256,
            postgres_batch_connections: 2,
            postgres_max_batch: 256,
            record_history: true,
        }
    }

    /// PostgreSQL: how long an operation may wait, first for a pooled connection
    /// (`connection_timeout`), then, once it has one, for its statement (`statement_timeout`
    /// plus a margin), before the store gives up and reports the database unavailable. The
    /// server cancels the statement at `statement_timeout`, so by the time the caller hears 503
    /// nothing it asked for has happened. (SQLite has no such cut-off: a local file does not
    /// vanish; its writer waits at most the busy timeout.)
    pub fn deadlines(&self) -> Deadlines {
        Deadlines {
            connection: self.connection_timeout,
            statement: self.statement_timeout + Duration::from_millis(300),
        }
    }
}

/// How long a PostgreSQL operation waits, per phase (see [`StoreConfig::deadlines`]).
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub connection: Duration,
    pub statement: Duration,
}

/// How hard SQLite works to make a commit durable (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqliteSynchronous {
    /// Every commit is on disk before it is acknowledged (fsync of the WAL per commit, which the
    /// group-commit writer shares among all the writes of a batch). A power loss loses nothing
    /// that a client was told, so no fencing token is ever issued twice. The default.
    #[default]
    Full,
    /// Commits are synced at WAL checkpoints only: faster, survives a crash of lockd, but a
    /// power loss or OS crash may lose the last acknowledged grants, after which a lock may be
    /// granted again and a fencing token issued a second time. For users who accept that.
    Normal,
}

impl SqliteSynchronous {
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            SqliteSynchronous::Full => "FULL",
            SqliteSynchronous::Normal => "NORMAL",
        }
    }
}
