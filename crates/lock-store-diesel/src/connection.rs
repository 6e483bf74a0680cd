//! Pooled connections to either backend, and how each is set up when it opens.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::R2D2Connection;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};

use crate::config::SqliteSynchronous;
use crate::db_connection::{ConnectError, DbConnection};
use crate::DatabaseUrl;

/// What every PostgreSQL connection of lockd sets besides its timeout and commit level.
///
/// - No parallel workers: every statement of lockd is a keyed lookup or a bounded range, but for
///   the live-lock count (a scan of the table, migration 7), which would otherwise take every
///   core of the server for its duration in a burst every 5 s.
/// - `enable_seqscan = off`: prepared statements run on generic plans, cached per connection
///   until something invalidates them (an ANALYZE, a VACUUM). A connection that plans the batch
///   statement while the table is nearly empty gets sequential scans and hash joins, and keeps
///   them as the table grows: measured, an acquire + release took 173 ms per request at 1M rows
///   with the plan made on an empty table, 27 ms on a fresh connection, and autovacuum had not
///   replanned it 60 s later. Off, the planner takes the primary key wherever it can, at any
///   size; a statement that has no index to use (the live-lock count, the semaphore and
///   shared-holder sweeps ordered by expiry) still scans, as it is its only plan.
/// - `jit = off`: a plan that must scan carries the planner's penalty for a disabled scan in its
///   cost, far above `jit_above_cost`, so PostgreSQL would compile it to machine code on every
///   run. Measured on this server: a semaphore sweep of an empty table took 26.8 ms with JIT and
///   0.1 ms without; the live count of 1M locks spent 106 ms compiling. No statement of lockd
///   runs long enough to gain from JIT.
pub const POSTGRES_SESSION: &str =
    "SET max_parallel_workers_per_gather = 0; SET enable_seqscan = off; SET jit = off";

/// Opens connections for the r2d2 pool.
#[derive(Debug)]
pub(crate) struct ConnectionManager {
    health: PoolHealth,
    url: DatabaseUrl,
    sqlite_busy_timeout: Duration,
    sqlite_synchronous: SqliteSynchronous,
    connect_timeout: Duration,
    statement_timeout: Duration,
    /// PostgreSQL: whether this process's writes record history (`lockd.history`, migration 13).
    record_history: bool,
    /// SQLite: `journal_size_limit` (see `writer::wal_limit`).
    sqlite_wal_limit: u64,
    /// PostgreSQL: whether a new connection enters the server's timeline
    /// ([`crate::postgres::timeline`]); off until the schema that defines it is migrated.
    enter_timeline: bool,
}

impl ConnectionManager {
    pub(crate) fn new(
        url: DatabaseUrl,
        sqlite_busy_timeout: Duration,
        sqlite_synchronous: SqliteSynchronous,
        connect_timeout: Duration,
        statement_timeout: Duration,
        health: PoolHealth,
    ) -> Self {
        Self {
            health,
            url,
            sqlite_busy_timeout,
            sqlite_synchronous,
            connect_timeout,
            statement_timeout,
            record_history: true,
            sqlite_wal_limit: crate::config::SQLITE_WAL_LIMIT,
            enter_timeline: false,
        }
    }

    /// PostgreSQL: every connection opened from now on enters the server's timeline before it
    /// is used (call once the schema is migrated).
    pub(crate) fn entering_timelines(mut self) -> Self {
        self.enter_timeline = true;
        self
    }

    /// SQLite: the bytes a WAL file keeps once the writer starts it over (default
    /// [`crate::config::SQLITE_WAL_LIMIT`]).
    pub(crate) fn sqlite_wal_limit(mut self, bytes: u64) -> Self {
        self.sqlite_wal_limit = bytes;
        self
    }

    /// Whether this process's writes record history (default: they do).
    pub(crate) fn recording_history(mut self, record: bool) -> Self {
        self.record_history = record;
        self
    }

    /// Opens one connection, configured for lockd.
    pub(crate) fn establish(&self) -> Result<DbConnection, ConnectError> {
        match &self.url {
            DatabaseUrl::Sqlite(path) => {
                let path = path.to_string_lossy();
                let mut conn = SqliteConnection::establish(&path)?;
                // busy_timeout first, so that even the other pragmas wait for a writer of
                // another process instead of failing with "database is locked".
                let pragmas = format!(
                    "PRAGMA busy_timeout = {}; PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; \
                     PRAGMA journal_size_limit = {};",
                    self.sqlite_busy_timeout.as_millis(),
                    self.sqlite_synchronous.pragma(),
                    self.sqlite_wal_limit
                );
                conn.batch_execute(&pragmas)?;
                crate::history::register_sqlite_functions(&mut conn)?;
                Ok(DbConnection::Sqlite(conn))
            }
            DatabaseUrl::Postgres(url) => {
                let mut conn =
                    PgConnection::establish(&with_connect_timeout(url, self.connect_timeout))
                        .map_err(|error| {
                            ConnectError::Postgres(self.url.scrub(&error.to_string()))
                        })?;
                // The server cancels any statement that runs past this (its COMMIT is not
                // covered: see `writer::postgres_batch` for a grant that commits after its caller
                // gave up), and the sweeper's grace (60 s) stays far longer than any statement can
                // run. `synchronous_commit = on` whatever the database's or role's default: a
                // grant is answered only once it is durable (and, with synchronous replication,
                // on the standby), so a crash cannot take back an acknowledged grant and issue
                // its fencing token again. The session's other settings: [`POSTGRES_SESSION`].
                conn.batch_execute(&format!(
                    "SET statement_timeout = {}; SET synchronous_commit = on; {POSTGRES_SESSION}",
                    self.statement_timeout.as_millis()
                ))?;
                if !self.record_history {
                    conn.batch_execute("SET lockd.history = 'off'")?;
                }
                if self.enter_timeline {
                    crate::postgres::timeline::enter(&mut conn)?;
                }
                Ok(DbConnection::Postgres(conn))
            }
        }
    }
}

impl r2d2::ManageConnection for ConnectionManager {
    type Connection = DbConnection;
    type Error = ConnectError;

    fn connect(&self) -> Result<DbConnection, ConnectError> {
        self.establish()
    }

    /// Free while nothing has failed: the pool tests a connection (one `SELECT 1`) only for a
    /// while after a statement failed for want of a database (see [`PoolHealth`]).
    fn is_valid(&self, conn: &mut DbConnection) -> Result<(), ConnectError> {
        if !self.health.take_check() {
            return Ok(());
        }
        match conn {
            DbConnection::Sqlite(c) => diesel::sql_query("SELECT 1").execute(c).map(drop)?,
            DbConnection::Postgres(c) => diesel::sql_query("SELECT 1").execute(c).map(drop)?,
        }
        Ok(())
    }

    fn has_broken(&self, conn: &mut DbConnection) -> bool {
        match conn {
            DbConnection::Sqlite(c) => c.is_broken(),
            DbConnection::Postgres(c) => c.is_broken(),
        }
    }
}

/// Whether pooled connections are suspect. diesel marks a connection broken only when a
/// transaction breaks, so a connection whose server went away (a restarted or unreachable
/// database) returns to the pool looking healthy and would fail one more request after the
/// database is back. After any failure for want of a database, the next checkouts (twice the
/// pool's size) test their connection first, and the pool replaces the dead ones.
#[derive(Debug, Clone)]
pub(crate) struct PoolHealth {
    left: Arc<AtomicU32>,
    checks: u32,
}

impl PoolHealth {
    /// For a pool of `pool_size` connections.
    pub(crate) fn new(pool_size: u32) -> Self {
        Self {
            left: Arc::default(),
            checks: pool_size.saturating_mul(2),
        }
    }

    /// A statement failed because the database was unavailable: test the next checkouts.
    pub(crate) fn suspect(&self) {
        self.left.fetch_max(self.checks, Ordering::Relaxed);
    }

    /// Whether this checkout should test its connection (using up one check).
    fn take_check(&self) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }
}

/// Adds libpq's `connect_timeout` (whole seconds, at least 1) unless the URL sets one: a database
/// that accepts TCP but never answers must not stall the pool's connection threads forever.
fn with_connect_timeout(url: &str, timeout: Duration) -> String {
    if url.contains("connect_timeout=") {
        return url.to_owned();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!(
        "{url}{separator}connect_timeout={}",
        timeout.as_secs().max(1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_timeout_is_added_once() {
        let two = Duration::from_secs(2);
        assert_eq!(
            with_connect_timeout("postgres://h/db", two),
            "postgres://h/db?connect_timeout=2"
        );
        assert_eq!(
            with_connect_timeout("postgres://h/db?sslmode=disable", two),
            "postgres://h/db?sslmode=disable&connect_timeout=2"
        );
        assert_eq!(
            with_connect_timeout("postgres://h/db?connect_timeout=9", two),
            "postgres://h/db?connect_timeout=9"
        );
        assert_eq!(
            with_connect_timeout("postgres://h/db", Duration::from_millis(300)),
            "postgres://h/db?connect_timeout=1"
        );
    }
}

#[cfg(all(test, feature = "testing"))]
mod postgres_settings {
    use diesel::connection::SimpleConnection;
    use diesel::sql_types::Text;
    use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};

    use super::{ConnectionManager, DbConnection};
    use crate::testing::TestDatabase;
    use crate::{DatabaseUrl, StoreConfig};

    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        synchronous_commit: String,
    }

    /// A database whose default is `synchronous_commit = off` would lose acknowledged grants in
    /// a crash; lockd's connections turn it on for themselves.
    #[test]
    fn postgres_connections_commit_synchronously_whatever_the_database_default() {
        let Some(db) = TestDatabase::postgres() else {
            return;
        };
        let DatabaseUrl::Postgres(url) = db.url().clone() else {
            unreachable!()
        };
        let mut admin = PgConnection::establish(&url).expect("connect");
        admin
            .batch_execute(&format!(
                "ALTER DATABASE \"{}\" SET synchronous_commit = off",
                url.rsplit('/').next().unwrap()
            ))
            .expect("set the database default");
        let config = StoreConfig::new(db.url().clone());
        let manager = ConnectionManager::new(
            db.url().clone(),
            config.sqlite_busy_timeout,
            crate::SqliteSynchronous::Full,
            config.connection_timeout,
            config.statement_timeout,
            super::PoolHealth::new(1),
        );
        let DbConnection::Postgres(mut conn) = manager.establish().expect("establish") else {
            unreachable!()
        };
        let setting = diesel::sql_query("SHOW synchronous_commit")
            .get_result::<Setting>(&mut conn)
            .expect("show");
        assert_eq!(setting.synchronous_commit, "on");
        // And the default really is off for other sessions (the test is not vacuous).
        let mut plain = PgConnection::establish(&url).expect("connect");
        let default = diesel::sql_query("SHOW synchronous_commit")
            .get_result::<Setting>(&mut plain)
            .expect("show");
        assert_eq!(default.synchronous_commit, "off");
    }
}
