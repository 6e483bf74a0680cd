//! The embedded schema migrations of both backends (`migrations/` at the workspace root).

use diesel::connection::SimpleConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::connection::DbConnection;

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Brings the schema up to date. On SQLite it first switches the file to WAL, once, before the
/// pool opens its connections (the journal mode is stored in the file).
pub(crate) fn run(conn: &mut DbConnection) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    match conn {
        DbConnection::Sqlite(c) => {
            c.batch_execute("PRAGMA journal_mode = WAL;")?;
            c.run_pending_migrations(SQLITE)?;
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
