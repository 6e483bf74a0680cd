//! Reading and pruning `history_batches`, a row per batch of records.
//!
//! - SQLite (migration 12): one row per transaction of the writer, its records a JSON array
//!   (collected by [`super::capture`]; packed since migration 16, see [`super::packed`]). Ids are
//!   dense: drawn inside the transaction that writes them, by one writer at a time, and only the
//!   oldest are ever deleted.
//! - PostgreSQL (migration 15): one row per trigger call, an array per field. A batch's ids are
//!   its number times [`POSTGRES_BATCH_IDS`] plus the records' places: contiguous within a batch,
//!   sparse between batches.
//!
//! Either way a record's id is the batch's `first_id` plus its place, so the batches holding an
//! id range are found through the primary key alone. A page of a name (or of a tenant) walks the
//! segments `history_names` (`history_tenants`) lists for it, newest first, and reads the records
//! of each segment's id range until the page is full.

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};
use lock_domain::{
    HistoryId, HistoryQuery, HistoryRecord, HistorySubject, RepositoryError, Tenant,
};

use super::capture::SEGMENT as SQLITE_SEGMENT;
use super::HistoryRow;
use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::lease_statements::one;
use crate::prepared::{Param, Prepared};
use crate::row::CountRow;

pub(crate) use upkeep::{index_postgres, last_id, last_id_through, prune_postgres, prune_sqlite};

/// PostgreSQL: how many ids a batch number spans (migration 15).
pub(crate) const POSTGRES_BATCH_IDS: i64 = 65_536;
/// PostgreSQL: how many ids a segment spans (1024 batch numbers, migration 16; 64 in
/// migration 15), as SQL text (see [`POSTGRES_SEGMENT`]).
macro_rules! postgres_segment_ids {
    () => {
        "67108864"
    };
}
/// PostgreSQL: how many ids a segment spans: [`postgres_segment_ids`], the SQL's literal.
const POSTGRES_SEGMENT: i64 = 1024 * POSTGRES_BATCH_IDS;

// After the macros they use.
mod times;
mod upkeep;

/// SQLite: the records with ids in `[$1, $2)` committed at or after `$4` and passing `$where`
/// (on `$5` and on), ordered by id, `$3` of them.
macro_rules! sqlite_records {
    ($where:literal, $order:literal) => {
        concat!(
            "SELECT b.first_id + j.key AS id, j.value ->> 0 AS tenant, j.value ->> 1 AS kind,
       j.value ->> 2 AS name, j.value ->> 3 AS owner, j.value ->> 4 AS fencing_token,
       j.value ->> 5 AS event, b.at_ms AS at_ms, j.value ->> 6 AS reason, j.value ->> 7 AS shared
FROM history_batches AS b, json_each(",
            sqlite_records_json!(),
            ") AS j
WHERE b.first_id >= COALESCE((SELECT MAX(first_id) FROM history_batches WHERE first_id <= $1), 0)
  AND b.first_id < $2 AND b.first_id + j.key >= $1 AND b.first_id + j.key < $2
  AND b.at_ms >= $4 AND ",
            $where,
            " ORDER BY id ",
            $order,
            " LIMIT $3"
        )
    };
}

/// The fields of PostgreSQL's records, one row per record of the batches `b`.
macro_rules! postgres_fields {
    () => {
        "SELECT b.first_id + j.place - 1 AS id, j.tenant, j.kind, j.name, j.owner,
       j.token AS fencing_token, j.event, b.at_ms, j.reason, j.shared
FROM "
    };
}
macro_rules! postgres_unnest {
    () => {
        ",
     unnest(b.tenants, b.kinds, b.names, b.owners, b.tokens, b.events, b.reasons, b.shared)
     WITH ORDINALITY AS j(tenant, kind, name, owner, token, event, reason, shared, place)
WHERE "
    };
}

/// PostgreSQL: as [`sqlite_records`].
macro_rules! postgres_records {
    ($where:literal, $order:literal) => {
        concat!(
            postgres_fields!(),
            "history_batches AS b",
            postgres_unnest!(),
            "b.first_id >= COALESCE((SELECT MAX(first_id) FROM history_batches WHERE first_id <= $1), 0)
  AND b.first_id < $2 AND b.first_id + j.place - 1 >= $1 AND b.first_id + j.place - 1 < $2
  AND b.at_ms >= $4 AND ",
            $where,
            " ORDER BY id ",
            $order,
            " LIMIT $3"
        )
    };
}

/// How one backend reads a page.
struct Dialect {
    /// How many ids a segment spans.
    segment: i64,
    /// How many segments one page reads at most (see [`page`]).
    segments_a_page: usize,
    /// One name's records (tenant `$5`, kind `$6`, name `$7`), newest first.
    one: &'static str,
    /// Tenant `$5`'s records whose names are in `[$6, $7)`, newest first.
    prefix_bounded: &'static str,
    /// Tenant `$5`'s records whose names are at least `$6` (`$7` is not used), newest first.
    prefix_unbounded: &'static str,
    /// The largest id written (0: none).
    top: &'static str,
    /// Every batch whose first id is at most this one has its segment entries (`None`: all).
    indexed_through: Option<&'static str>,
}

const SQLITE: Dialect = Dialect {
    segment: SQLITE_SEGMENT,
    // Up to 131,072 records.
    segments_a_page: 8,
    one: sqlite_records!(
        "j.value ->> 0 = $5 AND j.value ->> 1 = $6 AND j.value ->> 2 = $7",
        "DESC"
    ),
    prefix_bounded: sqlite_records!(
        "j.value ->> 0 = $5 AND j.value ->> 2 >= $6 AND j.value ->> 2 < $7",
        "DESC"
    ),
    prefix_unbounded: sqlite_records!(
        "j.value ->> 0 = $5 AND j.value ->> 2 >= $6 AND $7 = $7",
        "DESC"
    ),
    top: LAST_ID,
    indexed_through: None,
};

const POSTGRES: Dialect = Dialect {
    segment: POSTGRES_SEGMENT,
    // 2048 batch numbers: up to 131,072 records when a batch holds 64.
    segments_a_page: 2,
    one: postgres_records!("j.tenant = $5 AND j.kind = $6 AND j.name = $7", "DESC"),
    prefix_bounded: postgres_records!("j.tenant = $5 AND j.name >= $6 AND j.name < $7", "DESC"),
    prefix_unbounded: postgres_records!("j.tenant = $5 AND j.name >= $6 AND $7 = $7", "DESC"),
    top: "SELECT COALESCE(MAX(last_id), 0) AS count FROM history_batches",
    indexed_through: Some("SELECT through AS count FROM history_indexed WHERE id = 1"),
};

/// SQLite: every record, oldest first (`$5` is not used).
const SQLITE_EVERY: &str = sqlite_records!("$5 = $5", "ASC");
/// PostgreSQL: the records after `$1`, oldest first, `$2` of them, from the `$2` oldest batches
/// holding one.
const POSTGRES_AFTER: &str = concat!(
    postgres_fields!(),
    "(SELECT * FROM history_batches WHERE first_id > $1 - 65536 AND last_id > $1
      ORDER BY first_id LIMIT $2) AS b",
    postgres_unnest!(),
    "b.first_id + j.place - 1 > $1 ORDER BY id LIMIT $2"
);

/// A name's segments at or below `$4`, newest first, `$5` of them (PostgreSQL may list one
/// twice: see migration 15).
const NAME_SEGMENTS: &str = "\
SELECT DISTINCT segment AS count FROM history_names
WHERE tenant = $1 AND kind = $2 AND name = $3 AND segment <= $4
ORDER BY 1 DESC LIMIT $5";
/// A tenant's segments at or below `$2`, newest first, `$3` of them.
const TENANT_SEGMENTS: &str = "\
SELECT DISTINCT segment AS count FROM history_tenants WHERE tenant = $1 AND segment <= $2
ORDER BY 1 DESC LIMIT $3";
/// PostgreSQL: the first id committed at or after `$1` (none: one no record has yet), or a
/// smaller one: the batch of the earliest time at or after `$1`, less a segment (batches are
/// numbered in the order they were written, which concurrent transactions may not keep to the
/// millisecond).
const POSTGRES_FIRST_SINCE: &str = concat!(
    "\
SELECT COALESCE((SELECT first_id FROM history_batches WHERE at_ms >= $1 ORDER BY at_ms LIMIT 1)
                    - ",
    postgres_segment_ids!(),
    ",
                9223372036854775807) AS count"
);
/// SQLite: the last id drawn, an expression: the newest batch's last id, or
/// `history_context.last_id` when larger (see `capture.rs`).
macro_rules! sqlite_last_id {
    () => {
        "MAX(COALESCE((SELECT last_id FROM history_batches ORDER BY first_id DESC LIMIT 1), 0),
    (SELECT last_id FROM history_context WHERE id = 1))"
    };
}
/// SQLite: the oldest id kept (none: the next id to be drawn).
const OLDEST: &str = concat!(
    "SELECT COALESCE((SELECT MIN(first_id) FROM history_batches), ",
    sqlite_last_id!(),
    " + 1) AS count"
);
const LAST_ID: &str = concat!("SELECT ", sqlite_last_id!(), " AS count");
/// SQLite: before pruning, `history_context.last_id` takes the last id drawn, which the batches
/// deleted may take away.
const KEEP_LAST_ID: &str = concat!(
    "UPDATE history_context SET last_id = ",
    sqlite_last_id!(),
    " WHERE id = 1"
);
/// How many segments one read of a segment index lists.
const SEGMENTS_AT_ONCE: i64 = 32;

/// What [`page`] read: records newest first, and, when it stopped before the page was full,
/// the id above which it read everything (the next page's cursor).
#[derive(Debug, Default)]
pub(crate) struct PageRead {
    pub(crate) records: Vec<HistoryRecord>,
    pub(crate) stopped_at: Option<i64>,
}

/// A connection of either backend, borrowed.
pub(crate) enum Backend<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

impl<'c> From<&'c mut DbConnection> for Backend<'c> {
    fn from(conn: &'c mut DbConnection) -> Self {
        match conn {
            DbConnection::Sqlite(c) => Backend::Sqlite(c),
            DbConnection::Postgres(c) => Backend::Postgres(c),
        }
    }
}

impl Backend<'_> {
    fn dialect(&self) -> &'static Dialect {
        match self {
            Backend::Sqlite(_) => &SQLITE,
            Backend::Postgres(_) => &POSTGRES,
        }
    }

    /// The first id committed at or after `since_ms` (none: one no record has yet), or a
    /// smaller one.
    fn first_since(&mut self, since_ms: i64) -> QueryResult<i64> {
        match self {
            Backend::Sqlite(c) => times::first_since(c, since_ms),
            Backend::Postgres(_) => {
                self.scalar(POSTGRES_FIRST_SINCE, vec![Param::BigInt(since_ms)])
            }
        }
    }

    fn records(
        &mut self,
        sql: &'static str,
        params: Vec<Param<'_>>,
    ) -> Result<Vec<HistoryRecord>, RepositoryError> {
        let statement = Prepared::portable(sql, params);
        match self {
            Backend::Sqlite(c) => statement.load::<HistoryRow>(*c),
            Backend::Postgres(c) => statement.load::<HistoryRow>(*c),
        }
        .map_err(from_query)?
        .into_iter()
        .map(HistoryRecord::try_from)
        .collect()
    }

    fn counts(&mut self, sql: &'static str, params: Vec<Param<'_>>) -> QueryResult<Vec<i64>> {
        let statement = Prepared::portable(sql, params);
        let rows = match self {
            Backend::Sqlite(c) => statement.load::<CountRow>(*c)?,
            Backend::Postgres(c) => statement.load::<CountRow>(*c)?,
        };
        Ok(rows.into_iter().map(|row| row.count).collect())
    }

    fn scalar(&mut self, sql: &'static str, params: Vec<Param<'_>>) -> QueryResult<i64> {
        let statement = Prepared::portable(sql, params);
        one(match self {
            Backend::Sqlite(c) => statement.load::<CountRow>(*c)?,
            Backend::Postgres(c) => statement.load::<CountRow>(*c)?,
        })
    }
}

/// The tenant's records `query` asks for, newest first, one more than its limit when there are;
/// fewer when the dialect's `segments_a_page` segments were read first (then `stopped_at` says
/// where): a request for a prefix that few names have, or a name that changes rarely, is
/// answered in bounded time, and its cursor says where to go on.
pub(crate) fn page(
    mut conn: Backend<'_>,
    tenant: &Tenant,
    query: &HistoryQuery,
) -> Result<PageRead, RepositoryError> {
    let dialect = conn.dialect();
    let segment_ids = dialect.segment;
    let before = query.before.map_or(i64::MAX, HistoryId::value);
    let since = query
        .since
        .map_or(i64::MIN, |since| since.timestamp_millis());
    let wanted = query.limit.get() + 1;
    // No record before the first one committed since `since` is on the page.
    let floor = match query.since {
        Some(_) => conn.first_since(since).map_err(from_query)?,
        None => 0,
    };
    let upper = match &query.subject {
        HistorySubject::Prefix(prefix) => prefix.upper_bound(),
        HistorySubject::One { .. } => None,
    };
    // Segments from here up are not (all) in the index: each is read whether it holds the
    // subject's records or not.
    let unindexed = match dialect.indexed_through {
        Some(sql) => conn.scalar(sql, vec![]).map_err(from_query)?,
        None => i64::MAX,
    }
    .saturating_add(1)
        / segment_ids;
    let top = conn.scalar(dialect.top, vec![]).map_err(from_query)?;
    let mut found: Vec<HistoryRecord> = Vec::new();
    let mut below = before.min(top.saturating_add(1)).saturating_sub(1) / segment_ids;
    let mut read = 0;
    while found.len() < wanted && below >= floor / segment_ids {
        let unlisted = below >= unindexed;
        let segments = if unlisted {
            let lowest = (below - SEGMENTS_AT_ONCE + 1)
                .max(unindexed)
                .max(floor / segment_ids);
            Ok((lowest..=below).rev().collect())
        } else {
            match &query.subject {
                HistorySubject::One { kind, name } => conn.counts(
                    NAME_SEGMENTS,
                    vec![
                        Param::Text(tenant.as_str()),
                        Param::Text(kind.as_str()),
                        Param::Text(name.as_str()),
                        Param::BigInt(below),
                        Param::BigInt(SEGMENTS_AT_ONCE),
                    ],
                ),
                HistorySubject::Prefix(_) => conn.counts(
                    TENANT_SEGMENTS,
                    vec![
                        Param::Text(tenant.as_str()),
                        Param::BigInt(below),
                        Param::BigInt(SEGMENTS_AT_ONCE),
                    ],
                ),
            }
        }
        .map_err(from_query)?;
        for &segment in &segments {
            if found.len() >= wanted || segment < floor / segment_ids {
                break;
            }
            if read == dialect.segments_a_page {
                // Enough work for one request: the page ends above this segment.
                return Ok(PageRead {
                    records: found,
                    stopped_at: Some((segment + 1) * segment_ids),
                });
            }
            read += 1;
            let mut params = vec![
                Param::BigInt((segment * segment_ids).max(floor)),
                Param::BigInt(((segment + 1) * segment_ids).min(before)),
                Param::BigInt((wanted - found.len()) as i64),
                Param::BigInt(since),
                Param::Text(tenant.as_str()),
            ];
            let sql = match (&query.subject, &upper) {
                (HistorySubject::One { kind, name }, _) => {
                    params.extend([Param::Text(kind.as_str()), Param::Text(name.as_str())]);
                    dialect.one
                }
                (HistorySubject::Prefix(prefix), Some(upper)) => {
                    params.extend([Param::Text(prefix.as_str()), Param::Text(upper)]);
                    dialect.prefix_bounded
                }
                (HistorySubject::Prefix(prefix), None) => {
                    params.extend([Param::Text(prefix.as_str()), Param::Text("")]);
                    dialect.prefix_unbounded
                }
            };
            found.extend(conn.records(sql, params)?);
        }
        match segments.last() {
            Some(&last) if unlisted || segments.len() as i64 == SEGMENTS_AT_ONCE => {
                below = last - 1
            }
            _ => break,
        }
    }
    found.truncate(wanted);
    Ok(PageRead {
        records: found,
        stopped_at: None,
    })
}

/// Every tenant's records after `after`, oldest first, at most `limit` (on PostgreSQL final or
/// not: see [`super::PostgresFrontier`]).
pub(crate) fn after(
    mut conn: Backend<'_>,
    after: i64,
    limit: u32,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    if let Backend::Postgres(_) = conn {
        return conn.records(
            POSTGRES_AFTER,
            vec![Param::BigInt(after), Param::BigInt(i64::from(limit))],
        );
    }
    // Ids are dense from the oldest kept: the next `limit` records have the next `limit` ids.
    let oldest = conn.scalar(OLDEST, vec![]).map_err(from_query)?;
    let from = after.saturating_add(1).max(oldest);
    conn.records(
        SQLITE_EVERY,
        vec![
            Param::BigInt(from),
            Param::BigInt(from.saturating_add(i64::from(limit))),
            Param::BigInt(i64::from(limit)),
            Param::BigInt(i64::MIN),
            Param::BigInt(0),
        ],
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_postgres_segment_in_sql_is_the_constant() {
        assert_eq!(
            postgres_segment_ids!().parse::<i64>(),
            Ok(super::POSTGRES_SEGMENT)
        );
    }
}
