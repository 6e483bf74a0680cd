//! Durable history: what the triggers need from a write (its clock and what it says an ending
//! is), and the reads of the records. Records are kept in batches, a row of `history_batches`
//! each, read by [`batches`]: on SQLite the records of a transaction, collected by the writer's
//! connection ([`capture`]); on PostgreSQL those of one trigger call, written by the schema's
//! triggers (migration 15).
//!
//! The triggers record every change in the write's own statement. A write that ends live leases
//! for a reason of its own (an undo, a force-release) says so first with [`say_ending`] and
//! clears it after. On SQLite the writer sets the clock of every transaction
//! ([`sqlite_begin`]); on PostgreSQL a write that decides in one statement and writes in a later
//! one keeps its clock in `lockd.now` (see `lease_statements::now_postgres`).
//!
//! Record ids follow the order batches are written. On SQLite, with one writer at a time, that
//! is the commit order and every committed id is final. On PostgreSQL two transactions may commit
//! in the other order than their ids: [`PostgresFrontier`] tells which ids are final.

use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{
    FencingToken, HistoryEvent, HistoryId, HistoryQuery, HistoryRecord, LeaseKind, Owner,
    RepositoryError, ResourceName, Tenant,
};

// Before the modules that use its macro.
#[macro_use]
mod packed;
mod batches;
mod capture;
pub(crate) mod expiry;
mod postgres_frontier;

pub(crate) use batches::{
    index_postgres, last_id as last_id_sqlite, last_id_through as last_id_through_postgres,
    prune_postgres, prune_sqlite, PageRead,
};
pub(crate) use capture::Capture;
pub(crate) use packed::register as register_sqlite_functions;
#[cfg(test)]
pub(crate) use packed::{pack, unpack};
pub(crate) use postgres_frontier::PostgresFrontier;

use crate::db_connection::DbConnection;
use crate::prepared::{portable_statement, Param};
use crate::row::{millis, CorruptRow, CountRow};

/// SQLite: the writer connection's own row of what its triggers need from the transaction (the
/// clock, what the write says an ending is), in its TEMP database: written every transaction,
/// so a transaction that changes no lease writes nothing to the database file, and one on a
/// full disk that only reads still commits. (`main.history_context` held them before; its
/// columns other than `last_id` are no longer used.)
const SQLITE_WRITE: &str = "\
CREATE TEMP TABLE IF NOT EXISTS lockd_write (
    id     INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    now_ms INTEGER NOT NULL,
    ending TEXT,
    reason TEXT);
INSERT OR IGNORE INTO temp.lockd_write (id, now_ms) VALUES (1, 0);";
/// SQLite: the clock of the transaction just begun, and no ending said yet.
const SQLITE_BEGIN: &str =
    "UPDATE temp.lockd_write SET now_ms = $1, ending = NULL, reason = NULL WHERE id = 1";
const SQLITE_ENDING: &str = "UPDATE temp.lockd_write SET ending = $1, reason = $2 WHERE id = 1";
const POSTGRES_ENDING: &str = "\
SELECT 1::BIGINT AS count FROM (SELECT set_config('lockd.ending', $1, true),
                                       set_config('lockd.reason', $2, true)) AS said";

const POSTGRES_PRUNED_THROUGH: &str = "SELECT through AS count FROM history_pruned WHERE id = 1";

/// SQLite: creates the writer connection's row for its triggers (see [`SQLITE_WRITE`]).
///
/// # Errors
/// When SQLite refuses the TEMP table.
pub(crate) fn sqlite_install_write(conn: &mut SqliteConnection) -> QueryResult<()> {
    use diesel::connection::SimpleConnection;
    conn.batch_execute(SQLITE_WRITE)
}

/// SQLite: the clock of the transaction the writer has just begun, for the triggers.
pub(crate) fn sqlite_begin(conn: &mut SqliteConnection, now_ms: i64) -> QueryResult<()> {
    portable_statement!(SQLITE_BEGIN, vec![Param::BigInt(now_ms)])
        .execute(conn)
        .map(drop)
}

/// What a write says the ending of a live lease is, until said otherwise (`None`: its owner
/// ended it, or it ran out), and why.
pub(crate) trait SayEnding {
    fn say_ending(&mut self, ending: Option<HistoryEvent>, reason: Option<&str>)
        -> QueryResult<()>;

    /// Runs `write` with `ending` said, and clears it after, whatever `write` came to.
    fn with_ending<T>(
        &mut self,
        ending: HistoryEvent,
        reason: Option<&str>,
        write: impl FnOnce(&mut Self) -> QueryResult<T>,
    ) -> QueryResult<T> {
        self.say_ending(Some(ending), reason)?;
        let written = write(self);
        self.say_ending(None, None)?;
        written
    }
}

impl SayEnding for SqliteConnection {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        portable_statement!(
            SQLITE_ENDING,
            vec![
                Param::NullableText(ending.map(HistoryEvent::as_str)),
                Param::NullableText(reason),
            ],
        )
        .execute(self)
        .map(drop)
    }
}

/// Inside a transaction only (`set_config(…, true)` lasts until it ends).
impl SayEnding for PgConnection {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        portable_statement!(
            POSTGRES_ENDING,
            vec![
                Param::Text(ending.map_or("", HistoryEvent::as_str)),
                Param::Text(reason.unwrap_or("")),
            ],
        )
        .load::<CountRow>(self)
        .map(drop)
    }
}

/// A record as read: an element of a batch.
#[derive(Debug, QueryableByName)]
pub(crate) struct HistoryRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    tenant: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    owner: String,
    #[diesel(sql_type = BigInt)]
    fencing_token: i64,
    #[diesel(sql_type = Text)]
    event: String,
    #[diesel(sql_type = BigInt)]
    at_ms: i64,
    #[diesel(sql_type = Nullable<Text>)]
    reason: Option<String>,
    #[diesel(sql_type = Bool)]
    shared: bool,
}

impl TryFrom<HistoryRow> for HistoryRecord {
    type Error = RepositoryError;

    fn try_from(row: HistoryRow) -> Result<Self, Self::Error> {
        let corrupt = |what: &str| {
            RepositoryError::internal(CorruptRow(format!("history {}: {what}", row.id)))
        };
        Ok(HistoryRecord {
            id: HistoryId::new(row.id).map_err(|_| corrupt("id"))?,
            tenant: Tenant::parse(&row.tenant).map_err(|_| corrupt("tenant"))?,
            kind: LeaseKind::parse(&row.kind).ok_or_else(|| corrupt("kind"))?,
            name: ResourceName::parse(row.name.clone()).map_err(|_| corrupt("name"))?,
            owner: Owner::from_stored(&row.owner).map_err(|_| corrupt("owner"))?,
            fencing_token: FencingToken::new(row.fencing_token).map_err(|_| corrupt("token"))?,
            event: HistoryEvent::parse(&row.event).ok_or_else(|| corrupt("event"))?,
            at: millis(row.at_ms).ok_or_else(|| corrupt("time"))?,
            reason: row.reason.clone(),
            shared: row.shared,
        })
    }
}

/// The tenant's records `query` asks for, newest first, one more than its limit when there are
/// (fewer when it stopped early: see [`PageRead`]).
pub(crate) fn page(
    conn: &mut DbConnection,
    tenant: &Tenant,
    query: &HistoryQuery,
) -> Result<PageRead, RepositoryError> {
    batches::page(conn.into(), tenant, query)
}

/// Every tenant's records after `after`, oldest first, at most `limit` (final or not).
pub(crate) fn after(
    conn: &mut DbConnection,
    after: i64,
    limit: u32,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    batches::after(conn.into(), after, limit)
}

/// PostgreSQL: every id up to this one was pruned (see [`prune_postgres`]).
pub(crate) fn pruned_through_postgres(conn: &mut PgConnection) -> QueryResult<i64> {
    crate::lease_statements::one(
        portable_statement!(POSTGRES_PRUNED_THROUGH, vec![]).load::<CountRow>(conn)?,
    )
}
