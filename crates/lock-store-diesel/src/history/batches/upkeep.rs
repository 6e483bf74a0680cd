//! Keeping the history's batches: indexing them (PostgreSQL), pruning the oldest, and the last
//! ids written.

use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryResult, RunQueryDsl};

use super::{Backend, KEEP_LAST_ID, LAST_ID, OLDEST};
use crate::prepared::{portable_statement, Param, Prepared};

/// SQLite: deletes the batches before `$1` among the oldest `$2` ids from `$3`, the oldest kept
/// (and that one whatever its size, so that pruning goes on): how many records each held.
const PRUNE: &str = "\
DELETE FROM history_batches WHERE first_id < $1 AND (last_id < $3 + $2 OR first_id = $3)
RETURNING last_id - first_id + 1 AS count";
const PRUNE_NAMES: &str = "DELETE FROM history_names WHERE segment < $1";
const PRUNE_TENANTS: &str = "DELETE FROM history_tenants WHERE segment < $1";
/// PostgreSQL: deletes the oldest batches before `$1` with final ids (up to `$3`), as many as
/// hold fewer than `$2` records before them (so at least the oldest), and notes how far it
/// pruned for the stream's readers that fell behind: how many records it deleted.
const POSTGRES_PRUNE: &str = "\
WITH deleted AS (
    DELETE FROM history_batches WHERE first_id IN (
        SELECT first_id FROM (
            SELECT first_id,
                   SUM(last_id - first_id + 1) OVER (ORDER BY first_id)
                       - (last_id - first_id + 1) AS before
            FROM (SELECT first_id, last_id FROM history_batches
                  WHERE first_id < $1 AND last_id <= $3 ORDER BY first_id LIMIT $2) AS oldest
        ) AS counted
        WHERE before < $2)
    RETURNING first_id, last_id),
noted AS (
    UPDATE history_pruned SET through = (SELECT MAX(last_id) FROM deleted)
    WHERE id = 1 AND through < (SELECT MAX(last_id) FROM deleted))
SELECT COALESCE(SUM(last_id - first_id + 1), 0)::BIGINT AS count FROM deleted";
/// PostgreSQL: the oldest id kept (none: past every one pruned).
const POSTGRES_OLDEST: &str = "\
SELECT COALESCE((SELECT MIN(first_id) FROM history_batches),
                (SELECT through + 1 FROM history_pruned WHERE id = 1)) AS count";

/// PostgreSQL: writes the segment entries of the batches not yet indexed whose first ids are at
/// most `$1` (final ones), in order, up to `$3` batches and as many as hold fewer than `$2`
/// records before them (so at least the first, however large), and moves
/// `history_indexed.through` past them (to `$1` when they were all there were). Returns how many
/// records it read, or `$2` when it stopped at `$3` batches: at least `$2` exactly when there may
/// be more. The record bound keeps each step well inside the statement timeout whatever the
/// batches hold (one statement can record tens of thousands of leases, and a step that timed out
/// would be tried again, whole, for ever). One indexer at a time holds `history_indexed`'s row;
/// another finds it taken and reads none (`SKIP LOCKED`).
const POSTGRES_INDEX: &str = concat!(
    "\
WITH mark AS MATERIALIZED (
    SELECT through FROM history_indexed WHERE id = 1 FOR UPDATE SKIP LOCKED),
pending AS MATERIALIZED (
    SELECT b.first_id, b.last_id - b.first_id + 1 AS size,
           (SUM(b.last_id - b.first_id + 1) OVER (ORDER BY b.first_id))::BIGINT
               - (b.last_id - b.first_id + 1) AS before
    FROM (SELECT b.first_id, b.last_id FROM history_batches AS b, mark
          WHERE b.first_id > mark.through AND b.first_id <= $1 ORDER BY b.first_id LIMIT $3) AS b),
read AS MATERIALIZED (
    SELECT b.first_id, p.size, b.tenants, b.kinds, b.names
    FROM pending AS p JOIN history_batches AS b USING (first_id)
    WHERE p.before < $2),
done AS MATERIALIZED (
    SELECT COALESCE(SUM(size), 0)::BIGINT AS records,
           COALESCE(SUM(size), 0) < $2 AND count(*) < $3 AS all_read
    FROM read),
named AS (
    INSERT INTO history_names (tenant, kind, name, segment)
    SELECT DISTINCT r.tenant, r.kind, r.name, (b.first_id + r.place - 1) / ",
    postgres_segment_ids!(),
    "
    FROM read AS b,
         unnest(b.tenants, b.kinds, b.names) WITH ORDINALITY AS r(tenant, kind, name, place)
    ON CONFLICT DO NOTHING),
tenanted AS (
    INSERT INTO history_tenants (tenant, segment)
    SELECT DISTINCT r.tenant, (b.first_id + r.place - 1) / ",
    postgres_segment_ids!(),
    "
    FROM read AS b, unnest(b.tenants) WITH ORDINALITY AS r(tenant, place)
    ON CONFLICT DO NOTHING),
moved AS (
    UPDATE history_indexed
    SET through = CASE WHEN (SELECT all_read FROM done) THEN GREATEST(through, $1)
                       ELSE (SELECT MAX(first_id) FROM read) END
    WHERE id = 1 AND EXISTS (SELECT FROM mark))
SELECT CASE WHEN all_read THEN records ELSE GREATEST(records, $2) END AS count FROM done"
);

/// Batches one indexing step reads at most, however few records they hold.
const INDEX_BATCHES: i64 = 2_000;

/// PostgreSQL: writes the segment entries of the final batches not yet indexed (every id up to
/// `settled` is final), as many as hold fewer than `records` records before them (at least
/// one): how many records it read, at least `records` exactly when there may be more.
pub(crate) fn index_postgres(
    conn: &mut PgConnection,
    settled: i64,
    records: u32,
) -> QueryResult<usize> {
    Backend::Postgres(conn)
        .scalar(
            POSTGRES_INDEX,
            vec![
                Param::BigInt(settled),
                // At least one record, so that a step always reads a batch when there is one.
                Param::BigInt(i64::from(records.max(1))),
                Param::BigInt(INDEX_BATCHES),
            ],
        )
        .map(|read| usize::try_from(read).unwrap_or(0))
}

/// PostgreSQL: the last id of the batches numbered up to `$1`'s, or `$2` when there is none.
const POSTGRES_LAST_THROUGH: &str = "\
SELECT COALESCE((SELECT MAX(last_id) FROM history_batches WHERE first_id <= $1), $2) AS count";

/// PostgreSQL: the last record id at or below `settled` (every id up to which is final), or
/// `otherwise` when there is none.
pub(crate) fn last_id_through(
    conn: &mut PgConnection,
    settled: i64,
    otherwise: i64,
) -> QueryResult<i64> {
    Backend::Postgres(conn).scalar(
        POSTGRES_LAST_THROUGH,
        vec![Param::BigInt(settled), Param::BigInt(otherwise)],
    )
}

/// SQLite: the last id drawn (0: none). Every one drawn is committed: ids are drawn inside the
/// transaction that writes them.
pub(crate) fn last_id(conn: &mut SqliteConnection) -> QueryResult<i64> {
    Backend::Sqlite(conn).scalar(LAST_ID, vec![])
}

/// Deletes the segment entries below the segment of `oldest`, the oldest id kept.
fn prune_segments(conn: &mut Backend<'_>, oldest: i64) -> QueryResult<()> {
    let kept_segment = oldest / conn.dialect().segment;
    for sql in [PRUNE_NAMES, PRUNE_TENANTS] {
        let statement = Prepared::portable(sql, vec![Param::BigInt(kept_segment)]);
        match conn {
            Backend::Sqlite(c) => statement.execute(*c)?,
            Backend::Postgres(c) => statement.execute(*c)?,
        };
    }
    Ok(())
}

/// SQLite: deletes about `batch` of the oldest records committed before `before` (whole
/// transactions: at least the oldest one, if it is that old), and the segment entries below the
/// oldest record kept. Inside the writer.
pub(crate) fn prune_sqlite(
    conn: &mut SqliteConnection,
    before: DateTime<Utc>,
    batch: u32,
) -> QueryResult<usize> {
    portable_statement!(KEEP_LAST_ID, vec![]).execute(&mut *conn)?;
    let mut conn = Backend::Sqlite(conn);
    let cut = conn.first_since(before.timestamp_millis())?;
    let oldest = conn.scalar(OLDEST, vec![])?;
    let deleted: i64 = conn
        .counts(
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
        let oldest = conn.scalar(OLDEST, vec![])?;
        prune_segments(&mut conn, oldest)?;
    }
    Ok(deleted as usize)
}

/// PostgreSQL: deletes about `batch` of the oldest records committed before `before` (whole
/// batches: at least the oldest one, if it is that old), of final ids only (up to `settled`),
/// noting how far it pruned, and the segment entries below the oldest record kept. In a
/// transaction.
pub(crate) fn prune_postgres(
    conn: &mut PgConnection,
    before: DateTime<Utc>,
    batch: u32,
    settled: i64,
) -> QueryResult<usize> {
    conn.transaction(|conn| {
        let mut conn = Backend::Postgres(conn);
        let cut = conn.first_since(before.timestamp_millis())?;
        let deleted = conn.scalar(
            POSTGRES_PRUNE,
            vec![
                Param::BigInt(cut),
                Param::BigInt(i64::from(batch)),
                Param::BigInt(settled),
            ],
        )?;
        if deleted > 0 {
            let oldest = conn.scalar(POSTGRES_OLDEST, vec![])?;
            prune_segments(&mut conn, oldest)?;
        }
        Ok(deleted as usize)
    })
}
