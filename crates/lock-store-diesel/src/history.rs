//! Durable history: what the triggers need from a write (its clock and what it says an ending
//! is), and the reads of the records. On PostgreSQL a record is a row of `lease_history`, written
//! by the schema's triggers; on SQLite the records of a transaction are one row of
//! `history_batches`, collected by the writer's connection ([`capture`]) and read by
//! [`sqlite_batches`].
//!
//! The triggers record every change in the write's own statement. A write that ends live leases
//! for a reason of its own (an undo, a force-release) says so first with [`say_ending`] and
//! clears it after. On SQLite the writer sets the clock of every transaction
//! ([`sqlite_begin`]); on PostgreSQL a write that decides in one statement and writes in a later
//! one keeps its clock in `lockd.now` (see `lease_statements::now_postgres`).
//!
//! Record ids follow the order rows are written. On SQLite, with one writer at a time, that is the
//! commit order and every committed id is final. On PostgreSQL two transactions may commit in
//! the other order than their ids: [`PostgresFrontier`] tells which ids are final.

use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{
    FencingToken, HistoryEvent, HistoryId, HistoryQuery, HistoryRecord, HistorySubject, LeaseKind,
    Owner, RepositoryError, ResourceName, Tenant,
};

mod capture;
pub(crate) mod expiry;
mod postgres_frontier;
mod sqlite_batches;

pub(crate) use capture::Capture;
pub(crate) use postgres_frontier::PostgresFrontier;
pub(crate) use sqlite_batches::PageRead;

use crate::connection::DbConnection;
use crate::error::from_query;
use crate::prepared::{Param, Prepared};
use crate::row::{millis, CorruptRow, CountRow};

/// SQLite: the clock of the transaction just begun, and no ending said yet.
const SQLITE_BEGIN: &str = "\
UPDATE history_context SET now_ms = $1, recording = $2, ending = NULL, reason = NULL WHERE id = 1";
const SQLITE_ENDING: &str = "UPDATE history_context SET ending = $1, reason = $2 WHERE id = 1";
const POSTGRES_ENDING: &str = "\
SELECT 1::BIGINT AS count FROM (SELECT set_config('lockd.ending', $1, true),
                                       set_config('lockd.reason', $2, true)) AS said";

macro_rules! select_history {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant, kind, name, owner, fencing_token, event, at_ms, reason, shared
FROM lease_history WHERE ",
            $where
        )
    };
}

/// One name's records before the cursor `$4` at or after `$5`, newest first, `$6` of them.
const ONE: &str = select_history!(
    "tenant = $1 AND kind = $2 AND name = $3 AND id < $4 AND at_ms >= $5 ORDER BY id DESC LIMIT $6"
);
/// The tenant's records whose name is in `[$2, $3)`, as [`ONE`].
const PREFIX_BOUNDED: &str = select_history!(
    "tenant = $1 AND name >= $2 AND name < $3 AND id < $4 AND at_ms >= $5
ORDER BY id DESC LIMIT $6"
);
/// The tenant's records whose name is at least `$2` (`$3` is not used), as [`ONE`].
const PREFIX_UNBOUNDED: &str = select_history!(
    "tenant = $1 AND name >= $2 AND $3 = $3 AND id < $4 AND at_ms >= $5
ORDER BY id DESC LIMIT $6"
);
/// Every tenant's records after `$1`, oldest first, `$2` of them.
const AFTER: &str = select_history!("id > $1 ORDER BY id LIMIT $2");
/// The last id of up to `$2` of the oldest records, all older than the first one committed at or
/// after `$1`, and none past `$3` (0: none).
const PRUNE_CUT: &str = "\
SELECT COALESCE(MAX(id), 0) AS count FROM (
    SELECT id FROM lease_history
    WHERE id < COALESCE((SELECT id FROM lease_history WHERE at_ms >= $1 ORDER BY id LIMIT 1),
                        9223372036854775807)
      AND id <= $3
    ORDER BY id LIMIT $2) AS oldest";
const PRUNE: &str = "DELETE FROM lease_history WHERE id <= $1";
/// PostgreSQL: where the stream's readers that fell behind go on from.
const POSTGRES_PRUNED: &str =
    "UPDATE history_pruned SET through = $1 WHERE id = 1 AND through < $1";
const POSTGRES_PRUNED_THROUGH: &str = "SELECT through AS count FROM history_pruned WHERE id = 1";

/// SQLite: the clock of the transaction the writer has just begun, and whether this process
/// records history, for the triggers.
pub(crate) fn sqlite_begin(
    conn: &mut SqliteConnection,
    now_ms: i64,
    recording: bool,
) -> QueryResult<()> {
    Prepared::portable(
        SQLITE_BEGIN,
        vec![Param::BigInt(now_ms), Param::BigInt(i64::from(recording))],
    )
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
        Prepared::portable(
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
        Prepared::portable(
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

/// A record as read: a row of `lease_history` (PostgreSQL) or an element of a batch (SQLite).
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
            owner: Owner::parse(&row.owner).map_err(|_| corrupt("owner"))?,
            fencing_token: FencingToken::new(row.fencing_token).map_err(|_| corrupt("token"))?,
            event: HistoryEvent::parse(&row.event).ok_or_else(|| corrupt("event"))?,
            at: millis(row.at_ms).ok_or_else(|| corrupt("time"))?,
            reason: row.reason.clone(),
            shared: row.shared,
        })
    }
}

fn load(
    conn: &mut DbConnection,
    sql: &'static str,
    params: Vec<Param<'_>>,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    let statement = Prepared::portable(sql, params);
    let rows = match conn {
        DbConnection::Sqlite(c) => statement.load::<HistoryRow>(c),
        DbConnection::Postgres(c) => statement.load::<HistoryRow>(c),
    };
    rows.map_err(from_query)?
        .into_iter()
        .map(HistoryRecord::try_from)
        .collect()
}

/// The tenant's records `query` asks for, newest first, one more than its limit when there are
/// (fewer, on SQLite, when it stopped early: see [`PageRead`]).
pub(crate) fn page(
    conn: &mut DbConnection,
    tenant: &Tenant,
    query: &HistoryQuery,
) -> Result<PageRead, RepositoryError> {
    if let DbConnection::Sqlite(c) = conn {
        return sqlite_batches::page(c, tenant, query);
    }
    let before = query.before.map_or(i64::MAX, HistoryId::value);
    let since = query
        .since
        .map_or(i64::MIN, |since| since.timestamp_millis());
    let limit = query.limit.get() as i64 + 1;
    let upper;
    let (sql, middle): (&'static str, [Param<'_>; 2]) = match &query.subject {
        HistorySubject::One { kind, name } => (
            ONE,
            [Param::Text(kind.as_str()), Param::Text(name.as_str())],
        ),
        HistorySubject::Prefix(prefix) => {
            upper = prefix.upper_bound();
            match &upper {
                Some(upper) => (
                    PREFIX_BOUNDED,
                    [Param::Text(prefix.as_str()), Param::Text(upper)],
                ),
                None => (
                    PREFIX_UNBOUNDED,
                    [Param::Text(prefix.as_str()), Param::Text("")],
                ),
            }
        }
    };
    let mut params = vec![Param::Text(tenant.as_str())];
    params.extend(middle);
    params.extend([
        Param::BigInt(before),
        Param::BigInt(since),
        Param::BigInt(limit),
    ]);
    Ok(PageRead {
        records: load(conn, sql, params)?,
        stopped_at: None,
    })
}

/// Every tenant's records after `after`, oldest first, at most `limit` (final or not).
pub(crate) fn after(
    conn: &mut DbConnection,
    after: i64,
    limit: u32,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    if let DbConnection::Sqlite(c) = conn {
        return sqlite_batches::after(c, after, limit);
    }
    load(
        conn,
        AFTER,
        vec![Param::BigInt(after), Param::BigInt(i64::from(limit))],
    )
}

/// SQLite: the largest id committed (0: none); every one is final.
pub(crate) fn last_id_sqlite(conn: &mut SqliteConnection) -> QueryResult<i64> {
    sqlite_batches::last_id(conn)
}

fn prune_cut(before: DateTime<Utc>, batch: u32, through: i64) -> Prepared<'static> {
    Prepared::portable(
        PRUNE_CUT,
        vec![
            Param::BigInt(before.timestamp_millis()),
            Param::BigInt(i64::from(batch)),
            Param::BigInt(through),
        ],
    )
}

/// Deletes about `batch` of the oldest records committed before `before` (inside the writer:
/// every committed id is final; see [`sqlite_batches::prune`]).
pub(crate) fn prune_sqlite(
    conn: &mut SqliteConnection,
    before: DateTime<Utc>,
    batch: u32,
) -> QueryResult<usize> {
    sqlite_batches::prune(conn, before, batch)
}

/// Deletes up to `batch` of the oldest records committed before `before` on PostgreSQL, in a
/// transaction, of final ids only (up to `settled`), noting how far it pruned.
pub(crate) fn prune_postgres(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
    batch: u32,
    settled: i64,
) -> QueryResult<usize> {
    use diesel::Connection;
    conn.transaction(|conn| {
        let cut = crate::lease_statements::one(prune_cut(before, batch, settled).load(conn)?)?;
        let pruned = Prepared::portable(PRUNE, vec![Param::BigInt(cut)]).execute(conn)?;
        Prepared::portable(POSTGRES_PRUNED, vec![Param::BigInt(cut)]).execute(conn)?;
        Ok(pruned)
    })
}

/// PostgreSQL: every id up to this one was pruned (see [`prune_postgres`]).
pub(crate) fn pruned_through_postgres(conn: &mut PgConnection) -> QueryResult<i64> {
    crate::lease_statements::one(
        Prepared::portable(POSTGRES_PRUNED_THROUGH, vec![]).load::<CountRow>(conn)?,
    )
}
