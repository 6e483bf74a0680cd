//! An expiry an observer saw (`LeaseOp::RecordExpiry` of an exclusive lease): the run-out lease
//! is ended in place (`acquired_at_ms = expires_at_ms`, the mark PostgreSQL's release leaves),
//! which the history's triggers record as `expired`, and as ended already when the row changes
//! again (a takeover or a sweep then records no second expiry). Nothing the lock rules read
//! changes: the lease had ended, its `expires_at_ms` (and so its lock-delay) and token stay.

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};

use crate::prepared::{Param, Prepared};

/// SQLite, at the batch's `$5`.
const SQLITE: &str = "\
UPDATE distributed_locks SET acquired_at_ms = expires_at_ms
WHERE tenant = $1 AND resource = $2 AND owner = $3 AND fencing_token = $4 AND expires_at_ms <= $5
  AND acquired_at_ms <> expires_at_ms AND unicode(owner) <> 1";

/// PostgreSQL, at the clock its triggers decide with (`$5` is not used). `expiry_recorded`
/// tells the row from a released one (migration 14), for the count of expired takeovers.
const POSTGRES: &str = "\
UPDATE distributed_locks SET acquired_at_ms = expires_at_ms, expiry_recorded = TRUE
WHERE tenant = $1 AND resource = $2 AND owner = $3 AND fencing_token = $4
  AND expires_at_ms <= lockd_write_now() AND acquired_at_ms <> expires_at_ms
  AND ascii(owner) <> 1 AND $5 = $5";

fn statement<'a>(
    sql: &'static str,
    tenant: &'a str,
    resource: &'a str,
    owner: &'a str,
    fencing_token: i64,
    now_ms: i64,
) -> Prepared<'a> {
    Prepared::portable(
        sql,
        vec![
            Param::Text(tenant),
            Param::Text(resource),
            Param::Text(owner),
            Param::BigInt(fencing_token),
            Param::BigInt(now_ms),
        ],
    )
}

/// SQLite (inside the writer, at the batch's `now_ms`): whether it recorded.
pub(crate) fn record_sqlite(
    conn: &mut SqliteConnection,
    tenant: &str,
    resource: &str,
    owner: &str,
    fencing_token: i64,
    now_ms: i64,
) -> QueryResult<bool> {
    statement(SQLITE, tenant, resource, owner, fencing_token, now_ms)
        .execute(conn)
        .map(|changed| changed > 0)
}

/// PostgreSQL: whether it recorded.
pub(crate) fn record_postgres(
    conn: &mut PgConnection,
    tenant: &str,
    resource: &str,
    owner: &str,
    fencing_token: i64,
) -> QueryResult<bool> {
    statement(POSTGRES, tenant, resource, owner, fencing_token, 0)
        .execute(conn)
        .map(|changed| changed > 0)
}
