//! The embedded schema migrations of both backends (`migrations/` at the workspace root).

use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::SqliteConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::db_connection::DbConnection;

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Between two attempts to switch a SQLite file to WAL while another process holds it.
const WAL_RETRY_EVERY: Duration = Duration::from_millis(10);

type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// Brings the schema up to date. On SQLite it first switches the file to WAL, once, before the
/// pool opens its connections (the journal mode is stored in the file).
///
/// Several processes may do this at once on the same fresh SQLite file (lockd instances started
/// together, a `LockGuard` job starting with its server); each waits for the others for at most
/// `sqlite_busy_timeout`, then fails with "database is locked". See [`switch_to_wal`] and
/// [`migrate_sqlite`] for how.
pub(crate) fn run(
    conn: &mut DbConnection,
    sqlite_busy_timeout: Duration,
) -> Result<(), BoxedError> {
    match conn {
        DbConnection::Sqlite(c) => {
            switch_to_wal(c, Instant::now() + sqlite_busy_timeout)?;
            migrate_sqlite(c)?;
        }
        DbConnection::Postgres(c) => {
            // Two instances starting at once must not both run the migrations.
            c.batch_execute("SELECT pg_advisory_lock(7245981021)")?;
            let result = c.run_pending_migrations(POSTGRES).map(drop);
            c.batch_execute("SELECT pg_advisory_unlock(7245981021)")?;
            result?;
        }
    }
    Ok(())
}

/// `PRAGMA journal_mode = WAL`, retried until `deadline` while another process holds the file.
///
/// The pragma reads the file header in a read transaction, then upgrades it to a write to
/// change the header. SQLite never waits in such an upgrade (two upgrading readers would wait
/// for each other forever), so the busy timeout does not apply: when another process is
/// switching the same fresh file, or already writing it, the pragma fails at once with
/// "database is locked". Once the other process has switched the file, a retry finds it in WAL
/// and changes nothing.
fn switch_to_wal(conn: &mut SqliteConnection, deadline: Instant) -> Result<(), BoxedError> {
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL;") {
            Ok(()) => return Ok(()),
            Err(error) if is_busy(&error) && Instant::now() < deadline => {
                std::thread::sleep(WAL_RETRY_EVERY);
            }
            Err(error) => return Err(format!("cannot switch the file to WAL: {error}").into()),
        }
    }
}

/// Runs the pending migrations in one `BEGIN IMMEDIATE` transaction.
///
/// diesel creates `__diesel_schema_migrations`, reads what is applied, then runs each pending
/// migration in a transaction of its own. Two processes doing that side by side both find
/// migration 1 pending, and the second fails ("table distributed_locks already exists"), or a
/// deferred transaction that has read fails to upgrade to a write ("database is locked",
/// without waiting). `BEGIN IMMEDIATE` takes the write lock before the first read, waiting for
/// it within the busy timeout, so the second process reads what the first committed and finds
/// nothing left to do. diesel runs each migration in a savepoint inside it.
fn migrate_sqlite(conn: &mut SqliteConnection) -> Result<(), BoxedError> {
    conn.immediate_transaction(|c| {
        c.run_pending_migrations(SQLITE)
            .map(drop)
            .map_err(MigrationFailed)
    })?;
    Ok(())
}

/// SQLITE_BUSY (`database is locked`), the one failure worth retrying here.
fn is_busy(error: &diesel::result::Error) -> bool {
    matches!(error, diesel::result::Error::DatabaseError(_, info)
        if info.message().to_ascii_lowercase().contains("database is locked"))
}

/// A failed migration, carried out of diesel's transaction (whose error type must come from
/// `diesel::result::Error`, so that a failure to begin or commit can be reported too).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct MigrationFailed(BoxedError);

impl From<diesel::result::Error> for MigrationFailed {
    fn from(error: diesel::result::Error) -> Self {
        Self(Box::new(error))
    }
}

#[cfg(test)]
mod tests;
