//! Reading a lock's lock-delay: until when a lease that ran out keeps its place from other owners
//! (`LockRepository::available_at`). The rule itself is in the acquire statements (`sqlite.rs`,
//! `postgres.rs`) and the domain's `delayed_until`.

use diesel::{OptionalExtension, QueryResult, RunQueryDsl};

use crate::connection::DbConnection;
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
