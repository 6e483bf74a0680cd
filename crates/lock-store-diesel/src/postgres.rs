//! The lock statements on PostgreSQL. The database server's clock is the clock, so that instances
//! whose own clocks disagree still agree on who holds a lock: every "now" below is the server's
//! `statement_timestamp()` in epoch milliseconds, and the application's clock is not used.
//!
//! Fencing tokens come from the `fencing_tokens` sequence. A release does not delete the row but
//! ends its lease (`expires_at_ms = now`), so every later grant of the resource goes through the
//! `DO UPDATE` branch and draws its token while it holds the row lock: grants of one resource are
//! serialized by that lock and their tokens are drawn in the same order. Only the first grant of
//! a resource (or the first after the sweeper deleted its row) takes the token drawn in `VALUES`
//! before the row exists; the sweeper deletes only rows expired for longer than its grace, far
//! longer than `statement_timeout`, so no statement can still hold a token drawn before the last
//! grant of a row it is about to recreate.

use diesel::pg::PgConnection;
use diesel::sql_types::BigInt;
use diesel::{OptionalExtension, QueryResult, RunQueryDsl};
use lock_domain::{Lock, Owner, ReleaseResult, RepositoryError, ResourceName, Tenant, Ttl};

use crate::error::from_query;
use crate::prepared::{Param, Prepared};

use crate::repository::RenewRow;
use crate::row::LockRow;

/// The compare-and-set of an acquire, as one statement. Under READ COMMITTED, `ON CONFLICT DO
/// UPDATE` locks the conflicting row and evaluates the `WHERE` on its newest version, so of two
/// callers racing for one expired lock the second sees the first's grant and gets no row back.
pub const ACQUIRE: &str = "\
INSERT INTO distributed_locks AS l (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
SELECT $1, $2, $3, n.ms, n.ms + $4, nextval('fencing_tokens')
FROM (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
ON CONFLICT (tenant, resource) DO UPDATE SET
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
WHERE tenant = $1 AND resource = $2
  AND expires_at_ms > FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT";

/// Ends the caller's live lease. The row stays (expired) so that the next grant draws its token
/// under the row lock; the sweeper deletes it later.
pub const RELEASE: &str = "\
UPDATE distributed_locks AS l SET expires_at_ms = n.ms
FROM (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.expires_at_ms > n.ms
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token";

const RENEW: &str = "\
UPDATE distributed_locks AS l SET expires_at_ms = n.ms + $4
FROM (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.expires_at_ms > n.ms
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token";

/// Deletes up to `$2` rows whose lease ended more than `$1` ms ago. Rows that a concurrent grant
/// holds locked are skipped, and locked rows are re-checked against their newest version.
const SWEEP: &str = "\
DELETE FROM distributed_locks WHERE (tenant, resource) IN (
    SELECT tenant, resource FROM distributed_locks
    WHERE expires_at_ms <= FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT - $1
    ORDER BY expires_at_ms
    LIMIT $2
    FOR UPDATE SKIP LOCKED)";

/// How often a release or renew re-runs after its conditional write matched nothing but the
/// caller's own live lock appeared (it was granted to the caller concurrently).
const MAX_ATTEMPTS: usize = 8;

pub(crate) fn acquire(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
) -> QueryResult<Option<LockRow>> {
    Prepared::new(
        ACQUIRE,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::Text(owner.as_str()),
            Param::BigInt(i64::from(ttl.seconds()) * 1_000),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

pub(crate) fn status(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<LockRow>> {
    Prepared::new(
        STATUS,
        vec![Param::Text(tenant.as_str()), Param::Text(resource.as_str())],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

/// The caller's own lock kept appearing and disappearing under a release or renew.
#[derive(Debug, thiserror::Error)]
#[error("the lock kept changing during the request; retry")]
struct KeptChanging;

/// Who holds the live lock when a conditional write matched nothing.
enum Miss {
    NotFound,
    Forbidden,
    /// The caller's own lock is live now: run the write again.
    Retry,
}

fn classify_miss(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> QueryResult<Miss> {
    Ok(match status(conn, tenant, resource)? {
        None => Miss::NotFound,
        Some(row) if row.owner == owner.as_str() => Miss::Retry,
        Some(_) => Miss::Forbidden,
    })
}

/// Release as one conditional write; a read afterwards tells 403 from 404 when it matched nothing.
pub(crate) fn release(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<ReleaseResult, RepositoryError> {
    for _ in 0..MAX_ATTEMPTS {
        let released = Prepared::new(
            RELEASE,
            vec![
                Param::Text(tenant.as_str()),
                Param::Text(resource.as_str()),
                Param::Text(owner.as_str()),
            ],
        )
        .get_result::<LockRow>(conn)
        .optional()
        .map_err(from_query)?;
        if let Some(row) = released {
            return Ok(ReleaseResult::Released(Lock::try_from(row)?.fencing_token));
        }
        match classify_miss(conn, tenant, resource, owner).map_err(from_query)? {
            Miss::NotFound => return Ok(ReleaseResult::NotFound),
            Miss::Forbidden => return Ok(ReleaseResult::Forbidden),
            Miss::Retry => {}
        }
    }
    Err(RepositoryError::unavailable(KeptChanging))
}

/// Renew as one conditional write; a read afterwards tells 403 from 404 when it matched nothing.
pub(crate) fn renew(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
) -> Result<RenewRow, RepositoryError> {
    for _ in 0..MAX_ATTEMPTS {
        let renewed = Prepared::new(
            RENEW,
            vec![
                Param::Text(tenant.as_str()),
                Param::Text(resource.as_str()),
                Param::Text(owner.as_str()),
                Param::BigInt(i64::from(ttl.seconds()) * 1_000),
            ],
        )
        .get_result::<LockRow>(conn)
        .optional()
        .map_err(from_query)?;
        if let Some(row) = renewed {
            return Ok(RenewRow::Renewed(row));
        }
        match classify_miss(conn, tenant, resource, owner).map_err(from_query)? {
            Miss::NotFound => return Ok(RenewRow::NotFound),
            Miss::Forbidden => return Ok(RenewRow::Forbidden),
            Miss::Retry => {}
        }
    }
    Err(RepositoryError::unavailable(KeptChanging))
}

pub(crate) fn sweep(conn: &mut PgConnection, grace_ms: i64, batch: i64) -> QueryResult<usize> {
    diesel::sql_query(SWEEP)
        .bind::<BigInt, _>(grace_ms)
        .bind::<BigInt, _>(batch)
        .execute(conn)
}
