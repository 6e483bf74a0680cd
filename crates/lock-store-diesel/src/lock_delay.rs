//! Reading a lock's lock-delay: until when a lease that ran out keeps its place from other owners
//! (`LockRepository::available_at`). The rule itself is in the acquire statements (`sqlite.rs`,
//! `postgres.rs`) and the domain's `delayed_until`.

use diesel::{OptionalExtension, QueryResult, RunQueryDsl};

use crate::db_connection::DbConnection;
use crate::prepared::{Param, Prepared};
use crate::row::CountRow;

/// SQLite: the end of the lock-delay of `(?1, ?2)`'s lease, ended at `?3` but in its delay.
const SQLITE: &str = "\
SELECT expires_at_ms + lock_delay_ms AS count FROM distributed_locks
WHERE tenant = ?1 AND resource = ?2 AND expires_at_ms <= ?3 AND expires_at_ms + lock_delay_ms > ?3";

/// PostgreSQL: the same on the server's clock.
const POSTGRES: &str = concat!(
    "WITH n AS (SELECT ",
    "FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT",
    " AS ms)
SELECT expires_at_ms + lock_delay_ms AS count FROM distributed_locks, n
WHERE tenant = $1 AND resource = $2 AND expires_at_ms <= n.ms AND expires_at_ms + lock_delay_ms > n.ms"
);

/// SQLite: the earliest end of the lock-delay of semaphore `(?1, ?2)`'s grants that ran out.
const SQLITE_PERMITS: &str = "\
SELECT MIN(expires_at_ms + lock_delay_ms) AS count FROM semaphore_holders
WHERE tenant = ?1 AND name = ?2 AND expires_at_ms <= ?3 AND expires_at_ms + lock_delay_ms > ?3
HAVING COUNT(*) > 0";

/// PostgreSQL: the same on the server's clock.
const POSTGRES_PERMITS: &str = concat!(
    "WITH n AS (SELECT ",
    "FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT",
    " AS ms)
SELECT MIN(expires_at_ms + lock_delay_ms)::BIGINT AS count FROM semaphore_holders, n
WHERE tenant = $1 AND name = $2 AND expires_at_ms <= n.ms AND expires_at_ms + lock_delay_ms > n.ms
HAVING COUNT(*) > 0"
);

/// The earliest end of the lock-delay (Unix ms) of semaphore `name`'s grants that ran out, if
/// any is still in its delay at `now_ms` (SQLite's clock; PostgreSQL reads its own).
pub(crate) fn permits_available_at_ms(
    conn: &mut DbConnection,
    tenant: &str,
    name: &str,
    now_ms: i64,
) -> QueryResult<Option<i64>> {
    let row = match conn {
        DbConnection::Sqlite(c) => Prepared::new(
            SQLITE_PERMITS,
            vec![
                Param::Text(tenant),
                Param::Text(name),
                Param::BigInt(now_ms),
            ],
        )
        .get_result::<CountRow>(c)
        .optional()?,
        DbConnection::Postgres(c) => Prepared::new(
            POSTGRES_PERMITS,
            vec![Param::Text(tenant), Param::Text(name)],
        )
        .get_result::<CountRow>(c)
        .optional()?,
    };
    Ok(row.map(|row| row.count))
}

/// The end of the lock-delay (Unix ms) of the lease of `resource` that ran out, if it is still in
/// its delay at `now_ms` (SQLite's clock; PostgreSQL reads its own).
pub(crate) fn available_at_ms(
    conn: &mut DbConnection,
    tenant: &str,
    resource: &str,
    now_ms: i64,
) -> QueryResult<Option<i64>> {
    let row = match conn {
        DbConnection::Sqlite(c) => Prepared::new(
            SQLITE,
            vec![
                Param::Text(tenant),
                Param::Text(resource),
                Param::BigInt(now_ms),
            ],
        )
        .get_result::<CountRow>(c)
        .optional()?,
        DbConnection::Postgres(c) => {
            Prepared::new(POSTGRES, vec![Param::Text(tenant), Param::Text(resource)])
                .get_result::<CountRow>(c)
                .optional()?
        }
    };
    Ok(row.map(|row| row.count))
}
