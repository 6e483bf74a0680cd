//! The leases that ran out, noted in `expired_holds` by the write that records each end
//! `expired` (SQLite migration 19, PostgreSQL migration 20), and taken from there for metrics
//! (`StoreHealth::take_expired_holds`).
//!
//! Noted in the write's own transaction, by triggers that keep the rule of the history's
//! (the SQL copy of the domain's `name_change`): a write rolled back notes nothing, and the
//! taking `DELETE … RETURNING` hands each note to one process only, whichever takes it first.
//! On PostgreSQL the triggers are the schema's; on SQLite they are TEMP triggers of the writer's
//! connection ([`install_sqlite`]), since they read the transaction's clock from its TEMP table.
//! A session's hold has no end of its own in its row: it is noted with its session's end, read
//! from the session's row, when its place is taken over or the write ending it says `expired`.

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{ExpiredHold, LeaseKind};

use crate::prepared::{portable_statement, Param};
use crate::row::CorruptRow;

/// The writer connection's TEMP triggers (SQLite), for one table of leases.
const SQLITE_TRIGGERS: &str = include_str!("expired_holds/sqlite_triggers.sql");

/// Each table of leases (SQLite), as [`SQLITE_TRIGGERS`] names it: the table, its triggers'
/// names, the kind they note (an expression of the old row) and whether it is a reader's.
const SQLITE_TABLES: [[&str; 4]; 3] = [
    [
        "distributed_locks",
        "lock",
        "CASE WHEN substr(OLD.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END",
        "0",
    ],
    ["semaphore_holders", "permit", "'semaphore'", "0"],
    ["shared_holders", "reader", "'lock'", "1"],
];

const TAKE_SQLITE: &str = "\
DELETE FROM expired_holds
WHERE id IN (SELECT id FROM expired_holds ORDER BY id LIMIT $1)
RETURNING kind, shared, held_ms";

/// Rows another instance is taking are skipped, not waited for.
const TAKE_POSTGRES: &str = "\
DELETE FROM expired_holds
WHERE ctid = ANY (ARRAY(SELECT ctid FROM expired_holds LIMIT $1 FOR UPDATE SKIP LOCKED))
RETURNING kind, shared, held_ms";

/// A note as stored.
#[derive(Debug, QueryableByName)]
struct NoteRow {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Bool)]
    shared: bool,
    #[diesel(sql_type = BigInt)]
    held_ms: i64,
}

impl NoteRow {
    fn into_hold(self) -> Result<ExpiredHold, CorruptRow> {
        let kind = LeaseKind::parse(&self.kind)
            .ok_or_else(|| CorruptRow(format!("expired hold of kind {:?}", self.kind)))?;
        let held = u64::try_from(self.held_ms)
            .map_err(|_| CorruptRow(format!("expired hold held {} ms", self.held_ms)))?;
        Ok(ExpiredHold {
            kind,
            shared: self.shared,
            held: Duration::from_millis(held),
        })
    }
}

/// Creates the TEMP triggers that note the leases the writer's transactions end by expiry.
///
/// # Errors
/// When SQLite refuses a trigger.
pub(crate) fn install_sqlite(conn: &mut SqliteConnection) -> QueryResult<()> {
    for [table, short, kind, shared] in SQLITE_TABLES {
        let triggers = SQLITE_TRIGGERS
            .replace("{table}", table)
            .replace("{short}", short)
            .replace("{kind}", kind)
            .replace("{shared}", shared);
        conn.batch_execute(&triggers)?;
    }
    Ok(())
}

/// Takes (deletes and answers) at most `limit` notes, on the writer's connection (SQLite).
///
/// # Errors
/// When the statement fails, or a note is corrupt.
pub(crate) fn take_sqlite(
    conn: &mut SqliteConnection,
    limit: u32,
) -> Result<Vec<ExpiredHold>, lock_domain::RepositoryError> {
    let rows = portable_statement!(TAKE_SQLITE, vec![Param::BigInt(i64::from(limit))])
        .load::<NoteRow>(conn)
        .map_err(crate::error::from_query)?;
    holds(rows)
}

/// Takes (deletes and answers) at most `limit` notes (PostgreSQL).
///
/// # Errors
/// When the statement fails, or a note is corrupt.
pub(crate) fn take_postgres(
    conn: &mut PgConnection,
    limit: u32,
) -> Result<Vec<ExpiredHold>, lock_domain::RepositoryError> {
    let rows = portable_statement!(TAKE_POSTGRES, vec![Param::BigInt(i64::from(limit))])
        .load::<NoteRow>(conn)
        .map_err(crate::error::from_query)?;
    holds(rows)
}

fn holds(rows: Vec<NoteRow>) -> Result<Vec<ExpiredHold>, lock_domain::RepositoryError> {
    rows.into_iter()
        .map(|row| {
            row.into_hold()
                .map_err(lock_domain::RepositoryError::internal)
        })
        .collect()
}
