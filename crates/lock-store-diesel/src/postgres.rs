//! The lock statements on PostgreSQL. The database server's clock is the clock, so that instances
//! whose own clocks disagree still agree on who holds a lock: every "now" below is the server's
//! `statement_timestamp()` in epoch milliseconds, and the application's clock is not used.
//!
//! Fencing tokens come from the `fencing_tokens` sequence. A release does not delete the row but
//! ends its lease (`expires_at_ms = now`), so every later grant of the resource goes through the
//! `DO UPDATE` branch and draws its token while it holds the row lock: grants of one resource are
//! serialized by that lock and their tokens are drawn in the same order.

use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::{Connection, OptionalExtension, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{
    decide_release, decide_renew, Lock, Owner, ReleaseResult, RenewDecision, ResourceName, Ttl,
};

use crate::repository::RenewRow;
use crate::row::LockRow;

/// The compare-and-set of an acquire, as one statement. Under READ COMMITTED, `ON CONFLICT DO
/// UPDATE` locks the conflicting row and evaluates the `WHERE` on its newest version, so of two
/// callers racing for one expired lock the second sees the first's grant and gets no row back.
const ACQUIRE: &str = "\
INSERT INTO distributed_locks AS l (resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
SELECT $1, $2, n.ms, n.ms + $3, nextval('fencing_tokens')
FROM (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
ON CONFLICT (resource) DO UPDATE SET
    owner = EXCLUDED.owner,
    acquired_at_ms = EXCLUDED.acquired_at_ms,
    expires_at_ms = EXCLUDED.expires_at_ms,
    fencing_token = CASE WHEN l.expires_at_ms > EXCLUDED.acquired_at_ms
                         THEN l.fencing_token
                         ELSE nextval('fencing_tokens') END
WHERE l.expires_at_ms <= EXCLUDED.acquired_at_ms OR l.owner = EXCLUDED.owner
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token";

const STATUS: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token
FROM distributed_locks
WHERE resource = $1 AND expires_at_ms > FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT";

/// The current row, locked for the rest of the transaction, with the server's "now".
const LOCK_ROW: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token,
       FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS now_ms
FROM distributed_locks WHERE resource = $1 FOR UPDATE";

const SET_EXPIRY: &str = "\
UPDATE distributed_locks SET expires_at_ms = $2 WHERE resource = $1
RETURNING resource, owner, acquired_at_ms, expires_at_ms, fencing_token";

#[derive(QueryableByName)]
struct LockedRow {
    #[diesel(embed)]
    lock_row: LockRow,
    #[diesel(sql_type = BigInt)]
    now_ms: i64,
}

pub(crate) fn acquire(
    conn: &mut PgConnection,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
) -> QueryResult<Option<LockRow>> {
    diesel::sql_query(ACQUIRE)
        .bind::<Text, _>(resource.as_str())
        .bind::<Text, _>(owner.as_str())
        .bind::<BigInt, _>(i64::from(ttl.seconds()) * 1_000)
        .get_result::<LockRow>(conn)
        .optional()
}

pub(crate) fn status(
    conn: &mut PgConnection,
    resource: &ResourceName,
) -> QueryResult<Option<LockRow>> {
    diesel::sql_query(STATUS)
        .bind::<Text, _>(resource.as_str())
        .get_result::<LockRow>(conn)
        .optional()
}

/// Locks the row and returns it as a domain lock with the server's now, or just the now.
fn locked(
    conn: &mut PgConnection,
    resource: &ResourceName,
) -> QueryResult<(Option<Lock>, chrono::DateTime<chrono::Utc>, i64)> {
    let now_sql =
        "SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS now_ms";
    let row = diesel::sql_query(LOCK_ROW)
        .bind::<Text, _>(resource.as_str())
        .get_result::<LockedRow>(conn)
        .optional()?;
    let (lock, now_ms) = match row {
        Some(LockedRow { lock_row, now_ms }) => (Lock::try_from(lock_row).ok(), now_ms),
        None => {
            #[derive(QueryableByName)]
            struct Now {
                #[diesel(sql_type = BigInt)]
                now_ms: i64,
            }
            (
                None,
                diesel::sql_query(now_sql).get_result::<Now>(conn)?.now_ms,
            )
        }
    };
    let now = chrono::DateTime::from_timestamp_millis(now_ms).unwrap_or_default();
    Ok((lock, now, now_ms))
}

pub(crate) fn release(
    conn: &mut PgConnection,
    resource: &ResourceName,
    owner: &Owner,
) -> QueryResult<ReleaseResult> {
    conn.transaction(|conn| {
        let (lock, now, now_ms) = locked(conn, resource)?;
        let result = decide_release(lock.as_ref(), owner, now);
        if result == ReleaseResult::Released {
            diesel::sql_query(SET_EXPIRY)
                .bind::<Text, _>(resource.as_str())
                .bind::<BigInt, _>(now_ms)
                .execute(conn)?;
        }
        Ok(result)
    })
}

pub(crate) fn renew(
    conn: &mut PgConnection,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
) -> QueryResult<RenewRow> {
    conn.transaction(|conn| {
        let (lock, now, now_ms) = locked(conn, resource)?;
        Ok(match decide_renew(lock.as_ref(), owner, now) {
            RenewDecision::NotFound => RenewRow::NotFound,
            RenewDecision::Forbidden => RenewRow::Forbidden,
            RenewDecision::Renew => RenewRow::Renewed(
                diesel::sql_query(SET_EXPIRY)
                    .bind::<Text, _>(resource.as_str())
                    .bind::<BigInt, _>(now_ms + i64::from(ttl.seconds()) * 1_000)
                    .get_result::<LockRow>(conn)?,
            ),
        })
    })
}
