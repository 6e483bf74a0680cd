//! SQLite: reading and pruning `history_batches` (migration 12), a row per transaction holding
//! its records as a JSON array (written by [`super::capture`]).
//!
//! A page of a name (or of a tenant) walks the segments `history_names` (`history_tenants`)
//! lists for it, newest first, and reads the records of each segment's id range until the page
//! is full. Ids are dense (drawn inside the transaction that writes them, by one writer at a
//! time, and only the oldest are ever deleted), so the batches holding an id range are found
//! through the primary key alone.

use chrono::{DateTime, Utc};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};
use lock_domain::{
    HistoryId, HistoryQuery, HistoryRecord, HistorySubject, RepositoryError, Tenant,
};

use super::capture::SEGMENT;
use super::HistoryRow;
use crate::error::from_query;
use crate::lease_statements::one;
use crate::prepared::{Param, Prepared};
use crate::row::CountRow;

/// The records with ids in `[$1, $2)` committed at or after `$4` and passing `$where` (on `$5`
/// and on), ordered by id, `$3` of them.
macro_rules! records {
    ($where:literal, $order:literal) => {
        concat!(
            "SELECT b.first_id + j.key AS id, j.value ->> 0 AS tenant, j.value ->> 1 AS kind,
       j.value ->> 2 AS name, j.value ->> 3 AS owner, j.value ->> 4 AS fencing_token,
       j.value ->> 5 AS event, b.at_ms AS at_ms, j.value ->> 6 AS reason, j.value ->> 7 AS shared
FROM history_batches AS b, json_each(b.records) AS j
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

/// One name's records (tenant `$5`, kind `$6`, name `$7`), newest first.
const ONE: &str = records!(
    "j.value ->> 0 = $5 AND j.value ->> 1 = $6 AND j.value ->> 2 = $7",
    "DESC"
);
/// Tenant `$5`'s records whose names are in `[$6, $7)`, newest first.
const PREFIX_BOUNDED: &str = records!(
    "j.value ->> 0 = $5 AND j.value ->> 2 >= $6 AND j.value ->> 2 < $7",
    "DESC"
);
/// Tenant `$5`'s records whose names are at least `$6` (`$7` is not used), newest first.
const PREFIX_UNBOUNDED: &str = records!(
    "j.value ->> 0 = $5 AND j.value ->> 2 >= $6 AND $7 = $7",
    "DESC"
);
/// Every record, oldest first (`$5` is not used).
const EVERY: &str = records!("$5 = $5", "ASC");

/// A name's segments at or below `$4`, newest first, `$5` of them.
const NAME_SEGMENTS: &str = "\
SELECT segment AS count FROM history_names
WHERE tenant = $1 AND kind = $2 AND name = $3 AND segment <= $4
ORDER BY segment DESC LIMIT $5";
/// A tenant's segments at or below `$2`, newest first, `$3` of them.
const TENANT_SEGMENTS: &str = "\
SELECT segment AS count FROM history_tenants WHERE tenant = $1 AND segment <= $2
ORDER BY segment DESC LIMIT $3";
/// The first id committed at or after `$1` (none: the next id to be drawn).
const FIRST_SINCE: &str = "\
SELECT COALESCE((SELECT MIN(first_id) FROM history_batches WHERE at_ms >= $1),
                (SELECT last_id + 1 FROM history_context WHERE id = 1)) AS count";
/// The oldest id kept (none: the next id to be drawn).
const OLDEST: &str = "\
SELECT COALESCE((SELECT MIN(first_id) FROM history_batches),
                (SELECT last_id + 1 FROM history_context WHERE id = 1)) AS count";
const LAST_ID: &str = "SELECT last_id AS count FROM history_context WHERE id = 1";
/// Deletes the batches before `$1` among the oldest `$2` ids from `$3`, the oldest kept (and
/// that one whatever its size, so that pruning goes on): how many records each held.
const PRUNE: &str = "\
DELETE FROM history_batches WHERE first_id < $1 AND (last_id < $3 + $2 OR first_id = $3)
RETURNING last_id - first_id + 1 AS count";
const PRUNE_NAMES: &str = "DELETE FROM history_names WHERE segment < $1";
const PRUNE_TENANTS: &str = "DELETE FROM history_tenants WHERE segment < $1";

/// How many segments one read of a segment index lists.
const SEGMENTS_AT_ONCE: i64 = 32;
/// How many segments one page reads at most (up to 131,072 records), so that a request for a
/// prefix that few names have, or a name that changes rarely, is answered in bounded time: a
/// page may then hold fewer records than asked for, and its cursor says where to go on.
const SEGMENTS_A_PAGE: usize = 32;

/// What [`page`] read: records newest first, and, when it stopped before the page was full,
/// the id above which it read everything (the next page's cursor).
#[derive(Debug, Default)]
pub(crate) struct PageRead {
    pub(crate) records: Vec<HistoryRecord>,
    pub(crate) stopped_at: Option<i64>,
}

fn load(
    conn: &mut SqliteConnection,
    sql: &'static str,
    params: Vec<Param<'_>>,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    Prepared::portable(sql, params)
        .load::<HistoryRow>(conn)
        .map_err(from_query)?
        .into_iter()
        .map(HistoryRecord::try_from)
        .collect()
}

fn counts(
    conn: &mut SqliteConnection,
    sql: &'static str,
    params: Vec<Param<'_>>,
) -> QueryResult<Vec<i64>> {
    Ok(Prepared::portable(sql, params)
        .load::<CountRow>(conn)?
        .into_iter()
        .map(|row| row.count)
        .collect())
}

fn scalar(
    conn: &mut SqliteConnection,
    sql: &'static str,
    params: Vec<Param<'_>>,
) -> QueryResult<i64> {
    one(Prepared::portable(sql, params).load::<CountRow>(conn)?)
}

/// The tenant's records `query` asks for, newest first, one more than its limit when there are;
/// fewer when [`SEGMENTS_A_PAGE`] segments were read first (then `stopped_at` says where).
pub(crate) fn page(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    query: &HistoryQuery,
) -> Result<PageRead, RepositoryError> {
    let before = query.before.map_or(i64::MAX, HistoryId::value);
    let since = query
        .since
        .map_or(i64::MIN, |since| since.timestamp_millis());
    let wanted = query.limit.get() + 1;
    // No record before the first one committed since `since` is on the page.
    let floor = match query.since {
        Some(_) => scalar(conn, FIRST_SINCE, vec![Param::BigInt(since)]).map_err(from_query)?,
        None => 0,
    };
    let upper = match &query.subject {
        HistorySubject::Prefix(prefix) => prefix.upper_bound(),
        HistorySubject::One { .. } => None,
    };
    let mut found: Vec<HistoryRecord> = Vec::new();
    let mut below = before.saturating_sub(1) / SEGMENT;
    let mut read = 0;
    while found.len() < wanted && below >= floor / SEGMENT {
        let segments = match &query.subject {
            HistorySubject::One { kind, name } => counts(
                conn,
                NAME_SEGMENTS,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(kind.as_str()),
                    Param::Text(name.as_str()),
                    Param::BigInt(below),
                    Param::BigInt(SEGMENTS_AT_ONCE),
                ],
            ),
            HistorySubject::Prefix(_) => counts(
                conn,
                TENANT_SEGMENTS,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::BigInt(below),
                    Param::BigInt(SEGMENTS_AT_ONCE),
                ],
            ),
        }
        .map_err(from_query)?;
        for &segment in &segments {
            if found.len() >= wanted || segment < floor / SEGMENT {
                break;
            }
            if read == SEGMENTS_A_PAGE {
                // Enough work for one request: the page ends above this segment.
                return Ok(PageRead {
                    records: found,
                    stopped_at: Some((segment + 1) * SEGMENT),
                });
            }
            read += 1;
            let mut params = vec![
                Param::BigInt((segment * SEGMENT).max(floor)),
                Param::BigInt(((segment + 1) * SEGMENT).min(before)),
                Param::BigInt((wanted - found.len()) as i64),
                Param::BigInt(since),
                Param::Text(tenant.as_str()),
            ];
            let sql = match (&query.subject, &upper) {
                (HistorySubject::One { kind, name }, _) => {
                    params.extend([Param::Text(kind.as_str()), Param::Text(name.as_str())]);
                    ONE
                }
                (HistorySubject::Prefix(prefix), Some(upper)) => {
                    params.extend([Param::Text(prefix.as_str()), Param::Text(upper)]);
                    PREFIX_BOUNDED
                }
                (HistorySubject::Prefix(prefix), None) => {
                    params.extend([Param::Text(prefix.as_str()), Param::Text("")]);
                    PREFIX_UNBOUNDED
                }
            };
            found.extend(load(conn, sql, params)?);
        }
        match segments.last() {
            Some(&last) if segments.len() as i64 == SEGMENTS_AT_ONCE => below = last - 1,
            _ => break,
        }
    }
    found.truncate(wanted);
    Ok(PageRead {
        records: found,
        stopped_at: None,
    })
}

/// Every tenant's records after `after`, oldest first, at most `limit`.
pub(crate) fn after(
    conn: &mut SqliteConnection,
    after: i64,
    limit: u32,
) -> Result<Vec<HistoryRecord>, RepositoryError> {
    // Ids are dense from the oldest kept: the next `limit` records have the next `limit` ids.
    let oldest = scalar(conn, OLDEST, vec![]).map_err(from_query)?;
    let from = after.saturating_add(1).max(oldest);
    load(
        conn,
        EVERY,
        vec![
            Param::BigInt(from),
            Param::BigInt(from.saturating_add(i64::from(limit))),
            Param::BigInt(i64::from(limit)),
            Param::BigInt(i64::MIN),
            Param::BigInt(0),
        ],
    )
}

/// The last id drawn (0: none). Every one drawn is committed: ids are drawn inside the
/// transaction that writes them.
pub(crate) fn last_id(conn: &mut SqliteConnection) -> QueryResult<i64> {
    scalar(conn, LAST_ID, vec![])
}

/// Deletes about `batch` of the oldest records committed before `before` (whole transactions:
/// at least the oldest one, if it is that old), and the segment entries below the oldest record
/// kept. Inside the writer.
pub(crate) fn prune(
    conn: &mut SqliteConnection,
    before: DateTime<Utc>,
    batch: u32,
) -> QueryResult<usize> {
    let cut = scalar(
        conn,
        FIRST_SINCE,
        vec![Param::BigInt(before.timestamp_millis())],
    )?;
    let oldest = scalar(conn, OLDEST, vec![])?;
    let deleted: i64 = counts(
        conn,
        PRUNE,
        vec![
            Param::BigInt(cut),
            Param::BigInt(i64::from(batch)),
            Param::BigInt(oldest),
        ],
    )?
    .into_iter()
    .sum();
    if deleted > 0 {
        let kept_segment = scalar(conn, OLDEST, vec![])? / SEGMENT;
        for sql in [PRUNE_NAMES, PRUNE_TENANTS] {
            Prepared::portable(sql, vec![Param::BigInt(kept_segment)]).execute(conn)?;
        }
    }
    Ok(deleted as usize)
}
