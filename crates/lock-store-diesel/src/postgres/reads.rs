//! The reads on PostgreSQL: status, listing and counts, at the statement's start
//! (`statement_timestamp()`), waiting for a writer in flight on a row whose lease reads as ended.

use diesel::pg::PgConnection;
use diesel::{OptionalExtension, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{ListQuery, RepositoryError, ResourceName, Tenant};

use super::{KeptChanging, MAX_ATTEMPTS};
use crate::error::from_query;
use crate::prepared::{statement, Param, Prepared};
use crate::row::{CountRow, ListedRow, LockRow, SeenLive};

/// Whether the row version `l` that a read sees has an ended lease that a transaction not yet
/// committed when the read's snapshot was taken is writing (`lockd_written_in_flight`, migration
/// 6, on the version's `xmax`). That writer may be a renew or re-grant that decided before the
/// lease's end and whose COMMIT came late: the row reads as ended now and live again once it
/// commits. A read must not answer "free" from such a row: it waits for the writer (see
/// [`STATUS_AFTER_WRITER`]) and reads again. Every write here is one autocommit statement
/// without savepoints, so `xmax` is the writer's own transaction id.
macro_rules! ended_in_flight {
    () => {
        "(l.expires_at_ms <= n.ms AND lockd_written_in_flight(l.xmax))"
    };
}

/// The lock on `($1, $2)` if it is live at the statement's start (`now_ms`), or its row with an
/// ended lease and `in_flight` set when a writer was in flight on it (see [`ended_in_flight`]).
const STATUS: &str = concat!(
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value, n.ms AS now_ms, ",
    ended_in_flight!(),
    " AS in_flight
FROM distributed_locks AS l,
     (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE l.tenant = $1 AND l.resource = $2
  AND (l.expires_at_ms > n.ms OR ",
    ended_in_flight!(),
    ")"
);

/// [`STATUS`] after waiting for the row's writers: `FOR SHARE` waits for every transaction that
/// is writing the row and then reads its newest version (READ COMMITTED), and the clock is read
/// after that. `in_flight` is always false: no writer can hold the row while this one shares it.
const STATUS_AFTER_WRITER: &str = concat!(
    "WITH k AS MATERIALIZED (
    SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value FROM distributed_locks
    WHERE tenant = $1 AND resource = $2 FOR SHARE),
n AS MATERIALIZED (SELECT ",
    clock_ms!(),
    " AS ms FROM (SELECT count(*) FROM k) AS locked)
SELECT k.resource, k.owner, k.acquired_at_ms, k.expires_at_ms, k.fencing_token, k.value, n.ms AS now_ms,
       false AS in_flight
FROM k, n WHERE k.expires_at_ms > n.ms"
);

/// A page of a listing: the range `[$2, $3)` of the primary key `(tenant, resource)` past the
/// cursor `$4` (`''` when there is none), live now, `$5` rows. Both key columns are
/// `COLLATE "C"` (bytewise), and the comparisons and the order say so too, so the primary-key
/// index serves the range and the order whatever the database's default collation.
pub const LIST_BOUNDED: &str = concat!(
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value, n.ms AS now_ms, ",
    ended_in_flight!(),
    " AS in_flight
FROM distributed_locks AS l,
     (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE l.tenant = $1
  AND l.resource COLLATE \"C\" >= $2 AND l.resource COLLATE \"C\" < $3
  AND l.resource COLLATE \"C\" > $4
  AND (l.expires_at_ms > n.ms OR ",
    ended_in_flight!(),
    ")
ORDER BY l.resource COLLATE \"C\" LIMIT $5"
);

/// [`LIST_BOUNDED`] for a prefix without an upper bound (the empty prefix): `$3` is not used.
pub(crate) const LIST_UNBOUNDED: &str = concat!(
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value, n.ms AS now_ms, ",
    ended_in_flight!(),
    " AS in_flight
FROM distributed_locks AS l,
     (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE l.tenant = $1
  AND l.resource COLLATE \"C\" >= $2
  AND l.resource COLLATE \"C\" > $4
  AND (l.expires_at_ms > n.ms OR ",
    ended_in_flight!(),
    ")
ORDER BY l.resource COLLATE \"C\" LIMIT $5"
);

/// The live locks of every tenant, counted on the expiry index.
pub const COUNT_LIVE: &str = "\
SELECT COUNT(*) AS count FROM distributed_locks
WHERE expires_at_ms > FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT";

/// Grants that took over another owner's expired lease, counted by a trigger (migration 4) on a
/// sequence: `last_value` once it has been used, else none yet.
const COUNT_EXPIRED_TAKEOVERS: &str = "\
SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS count FROM expired_takeovers";

/// The live lock on `(tenant, resource)`, if any. A row whose lease reads as ended while a
/// writer is still in flight on it is read again after that writer (see [`ended_in_flight`]).
pub(crate) fn status(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<LockRow>> {
    Ok(status_seen(conn, tenant, resource)?.map(|seen| seen.lock))
}

/// [`status`], with the database's clock at which the lock was read live.
pub(crate) fn status_seen(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<SeenLive>> {
    let row = match read_status(conn, STATUS, tenant, resource)? {
        Some(row) if row.in_flight => read_status(conn, STATUS_AFTER_WRITER, tenant, resource)?,
        row => row,
    };
    Ok(row.map(StatusRow::seen))
}

/// The live lock on `(tenant, resource)` without waiting for anyone: `None` also when a writer
/// in flight may be about to make the lock live again. For callers that only take a shortcut
/// when they know a holder.
pub(crate) fn live_holder_now(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<SeenLive>> {
    Ok(read_status(conn, STATUS, tenant, resource)?
        .filter(|row| !row.in_flight)
        .map(StatusRow::seen))
}

fn read_status(
    conn: &mut PgConnection,
    sql: &'static str,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<StatusRow>> {
    Prepared::new(
        sql,
        vec![Param::Text(tenant.as_str()), Param::Text(resource.as_str())],
    )
    .get_result::<StatusRow>(conn)
    .optional()
}

/// A page of live locks. When the page holds a row whose lease reads as ended while a writer is
/// in flight on it (see [`ended_in_flight`]), waits for that writer and reads the page again.
///
/// # Errors
/// `Unavailable` when writers kept arriving on the page's ended rows for [`MAX_ATTEMPTS`] reads.
pub(crate) fn list(
    conn: &mut PgConnection,
    tenant: &Tenant,
    query: &ListQuery,
) -> Result<Vec<ListedRow>, RepositoryError> {
    let upper = query.prefix.upper_bound();
    let (sql, upper) = match &upper {
        Some(upper) => (LIST_BOUNDED, upper.as_str()),
        None => (LIST_UNBOUNDED, ""),
    };
    for _ in 0..MAX_ATTEMPTS {
        let rows = Prepared::new(
            sql,
            vec![
                Param::Text(tenant.as_str()),
                Param::Text(query.prefix.as_str()),
                Param::Text(upper),
                Param::Text(query.after.as_ref().map_or("", |a| a.as_str())),
                Param::BigInt(query.limit.get() as i64 + 1),
            ],
        )
        .load::<PgListedRow>(conn)
        .map_err(from_query)?;
        let in_flight: Vec<&PgListedRow> = rows.iter().filter(|row| row.in_flight).collect();
        if in_flight.is_empty() {
            return Ok(rows.into_iter().map(|row| row.listed).collect());
        }
        for row in in_flight {
            let resource = ResourceName::parse(row.listed.lock.resource.clone())
                .map_err(|e| RepositoryError::internal(format!("corrupt row: resource {e}")))?;
            read_status(conn, STATUS_AFTER_WRITER, tenant, &resource).map_err(from_query)?;
        }
    }
    Err(RepositoryError::unavailable(KeptChanging))
}

/// A row of [`STATUS`] or [`STATUS_AFTER_WRITER`].
#[derive(QueryableByName)]
struct StatusRow {
    #[diesel(embed)]
    lock: LockRow,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    now_ms: i64,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    in_flight: bool,
}

impl StatusRow {
    /// A row the read returned with `in_flight` unset is live at `now_ms`.
    fn seen(self) -> SeenLive {
        SeenLive {
            lock: self.lock,
            now_ms: self.now_ms,
        }
    }
}

/// A row of [`LIST_BOUNDED`] or [`LIST_UNBOUNDED`].
#[derive(QueryableByName)]
struct PgListedRow {
    #[diesel(embed)]
    listed: ListedRow,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    in_flight: bool,
}

pub(crate) fn count_live(conn: &mut PgConnection) -> QueryResult<i64> {
    statement!(COUNT_LIVE, vec![])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}

pub(crate) fn count_expired_takeovers(conn: &mut PgConnection) -> QueryResult<i64> {
    statement!(COUNT_EXPIRED_TAKEOVERS, vec![])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}
