//! Many locks' status in one read (`LeaseStore::look_many`), for the waiting
//! queues' poller: one statement per backend (in chunks on SQLite) instead of one per lock.
//!
//! A row whose lease reads as ended may be about to live again (a renew decided before the end
//! and committing after it; see `sqlite` and `postgres::reads`). Such rows are not answered
//! from this read: the repository asks `status` for each of them, which waits for the writer.
//! Rows nobody writes are answered at once, live or ended.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use diesel::pg::PgConnection;
use diesel::sql_types::{Bool, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{Lock, RepositoryError, ResourceName, Tenant};

use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::pooled::Pooled;
use crate::prepared::{statement, Param, Prepared};
use crate::row::LockRow;
use crate::writer::Writer;

/// The live lock on each of `locks`, in order: one read on a pooled connection for all of
/// them, then `writer.status` (which waits for a writer in flight) for each that is unsure.
pub(crate) async fn statuses(
    pooled: &Pooled,
    writer: &dyn Writer,
    locks: Vec<(Tenant, ResourceName)>,
) -> Result<Vec<Option<Lock>>, RepositoryError> {
    if locks.is_empty() {
        return Ok(Vec::new());
    }
    let keys = Arc::new(locks);
    let read = Arc::clone(&keys);
    let peeks = pooled
        .run(move |conn, now_ms| {
            match conn {
                DbConnection::Sqlite(c) => sqlite(c, &read, now_ms),
                DbConnection::Postgres(c) => postgres(c, &read),
            }
            .map_err(from_query)
        })
        .await?;
    let mut found = Vec::with_capacity(peeks.len());
    for (peek, (tenant, resource)) in peeks.into_iter().zip(keys.iter()) {
        let row = match peek {
            Peek::Live(row) => Some(row),
            Peek::Free => None,
            Peek::Unsure => writer.status(tenant.clone(), resource.clone()).await?,
        };
        found.push(row.map(Lock::try_from).transpose()?);
    }
    Ok(found)
}

/// What one read saw of one lock.
#[derive(Debug)]
enum Peek {
    Live(LockRow),
    /// No row, or a lease that has ended and that nobody is writing.
    Free,
    /// A lease that has ended, maybe with a writer still at work on it: ask `status`.
    Unsure,
}

/// A row with its key and what the read made of it.
#[derive(QueryableByName)]
struct PeekRow {
    #[diesel(sql_type = Text)]
    tenant: String,
    #[diesel(embed)]
    lock: LockRow,
    #[diesel(sql_type = Bool)]
    live: bool,
    #[diesel(sql_type = Bool)]
    unsure: bool,
}

/// Keys per SQLite statement: the statement has this many `(?, ?)` pairs, padded with the
/// chunk's first key.
const SQLITE_CHUNK: usize = 32;

/// The rows of up to [`SQLITE_CHUNK`] keys (`?1`, `?2`), …, live at `?65`. On SQLite every ended
/// lease is unsure: a writer of this or another process may be committing it.
fn sqlite_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let pairs: Vec<String> = (0..SQLITE_CHUNK)
            .map(|i| format!("(?{}, ?{})", 2 * i + 1, 2 * i + 2))
            .collect();
        let now = 2 * SQLITE_CHUNK + 1;
        format!(
            "SELECT tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value,
                    expires_at_ms > ?{now} AS live, expires_at_ms <= ?{now} AS unsure
             FROM distributed_locks WHERE (tenant, resource) IN (VALUES {})",
            pairs.join(", ")
        )
    })
}

/// The rows of the keys `($1[i], $2[i])`, each live or not at the statement's start, and unsure
/// when ended with a writer in flight (`lockd_written_in_flight`, migration 6).
const POSTGRES: &str = "\
SELECT l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value,
       l.expires_at_ms > n.ms AS live,
       (l.expires_at_ms <= n.ms AND lockd_written_in_flight(l.xmax)) AS unsure
FROM distributed_locks AS l,
     (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms) AS n
WHERE (l.tenant, l.resource) IN (SELECT * FROM unnest($1::text[], $2::text[]))";

fn sqlite(
    conn: &mut SqliteConnection,
    keys: &[(Tenant, ResourceName)],
    now_ms: i64,
) -> QueryResult<Vec<Peek>> {
    let mut rows = Vec::new();
    for chunk in keys.chunks(SQLITE_CHUNK) {
        let mut params = Vec::with_capacity(2 * SQLITE_CHUNK + 1);
        for i in 0..SQLITE_CHUNK {
            let (tenant, resource) = chunk.get(i).unwrap_or(&chunk[0]);
            params.push(Param::Text(tenant.as_str()));
            params.push(Param::Text(resource.as_str()));
        }
        params.push(Param::BigInt(now_ms));
        rows.extend(Prepared::new(sqlite_sql(), params).load::<PeekRow>(conn)?);
    }
    Ok(answer(keys, rows))
}

fn postgres(conn: &mut PgConnection, keys: &[(Tenant, ResourceName)]) -> QueryResult<Vec<Peek>> {
    let tenants: Vec<&str> = keys.iter().map(|(t, _)| t.as_str()).collect();
    let resources: Vec<&str> = keys.iter().map(|(_, r)| r.as_str()).collect();
    let rows = statement!(
        POSTGRES,
        vec![Param::TextArray(&tenants), Param::TextArray(&resources)],
    )
    .load::<PeekRow>(conn)?;
    Ok(answer(keys, rows))
}

/// One answer per key, in the keys' order (a key asked twice gets the same answer twice).
fn answer(keys: &[(Tenant, ResourceName)], rows: Vec<PeekRow>) -> Vec<Peek> {
    let by_key: HashMap<(String, String), PeekRow> = rows
        .into_iter()
        .map(|row| ((row.tenant.clone(), row.lock.resource.clone()), row))
        .collect();
    keys.iter()
        .map(|(tenant, resource)| {
            let key = (tenant.as_str().to_owned(), resource.as_str().to_owned());
            match by_key.get(&key) {
                Some(row) if row.live => Peek::Live(row.lock.clone()),
                Some(row) if row.unsure => Peek::Unsure,
                Some(_) | None => Peek::Free,
            }
        })
        .collect()
}
