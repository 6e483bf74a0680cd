//! The lock statements on PostgreSQL. The database server's clock is the clock, so that instances
//! whose own clocks disagree still agree on who holds a lock: every "now" below is the server's
//! clock in epoch milliseconds, and the application's clock is not used. Reads use
//! `statement_timestamp()`; writes read `clock_timestamp()` after they hold the row's lock (see
//! [`clock_ms`]), so that they decide against the row as it is when they reach it.
//!
//! Fencing tokens come from the `fencing_tokens` sequence. A release does not delete the row but
//! ends its lease (`expires_at_ms = now`), so every later grant of the resource goes through the
//! `DO UPDATE` branch and draws its token while it holds the row lock: grants of one resource are
//! serialized by that lock and their tokens are drawn in the same order. Only the first grant of
//! a resource (or the first after the sweeper deleted its row) takes the token drawn in `VALUES`
//! before the row exists; the sweeper deletes only rows expired for longer than its grace, far
//! longer than `statement_timeout`, so no statement can still hold a token drawn before the last
//! grant of a row it is about to recreate.
//!
//! [`WRITE_BATCH`] is the three writes over arrays, for many requests at once (see
//! `postgres_batch`): per row it is exactly the acquire, release or renew statement above, and all
//! of it commits (or fails) as one statement.

use diesel::pg::PgConnection;
use diesel::sql_types::BigInt;
use diesel::{OptionalExtension, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{ListQuery, Lock, Owner, RepositoryError, ResourceName, Tenant, Ttl};

use crate::error::from_query;
use crate::prepared::{Param, Prepared};

use crate::outcome::{ReleaseRow, RenewRow};
use crate::row::{CountRow, ListedRow, LockRow};
use crate::schema::distributed_locks;

/// The database server's clock now, in epoch milliseconds, read when the expression is
/// evaluated (`clock_timestamp()`), not when the statement started: a decision about a row must
/// use a "now" read after that row's lock was taken. A statement that waited for a row lock while
/// another instance released the lease would otherwise compare the released row (which ends at
/// the release's "now") with an earlier "now" of its own, find it live, and renew it or re-grant
/// its old fencing token.
macro_rules! clock_ms {
    () => {
        "FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
    };
}

/// The `DO UPDATE` of an acquire, shared by [`ACQUIRE`] and [`WRITE_BATCH`]. `ON CONFLICT DO
/// UPDATE` locks the conflicting row, waiting for a concurrent writer, and evaluates its `WHERE`
/// and `SET` on the row's newest version after that, so both read the clock then. The `SET`
/// reads it once for all its columns (`c.ms`); the `WHERE` reads it just before, which is never
/// later: a lease the `WHERE` finds expired is expired for the `SET` too.
macro_rules! acquire_on_conflict {
    () => {
        concat!(
            "ON CONFLICT (tenant, resource) DO UPDATE SET
    (owner, acquired_at_ms, expires_at_ms, fencing_token, regranted) = (
        SELECT EXCLUDED.owner, c.ms, c.ms + (EXCLUDED.expires_at_ms - EXCLUDED.acquired_at_ms),
               CASE WHEN l.expires_at_ms > c.ms THEN l.fencing_token
                    ELSE nextval('fencing_tokens') END,
               l.expires_at_ms > c.ms
        FROM (SELECT ",
            clock_ms!(),
            " AS ms) AS c)
WHERE l.expires_at_ms <= ",
            clock_ms!(),
            " OR l.owner = EXCLUDED.owner"
        )
    };
}

/// The compare-and-set of an acquire, as one statement. Under READ COMMITTED, `ON CONFLICT DO
/// UPDATE` locks the conflicting row and evaluates the `WHERE` on its newest version, so of two
/// callers racing for one expired lock the second sees the first's grant and gets no row back.
/// A same-owner acquire keeps the token only of a lease that is live when the row is locked.
pub const ACQUIRE: &str = concat!(
    "INSERT INTO distributed_locks AS l (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
SELECT $1, $2, $3, n.ms, n.ms + $4, nextval('fencing_tokens')
FROM (SELECT ",
    clock_ms!(),
    " AS ms) AS n
",
    acquire_on_conflict!(),
    "
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token"
);

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

/// The lock on `($1, $2)` if it is live at the statement's start, or its row with an ended lease
/// and `in_flight` set when a writer was in flight on it (see [`ended_in_flight`]).
const STATUS: &str = concat!(
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, ",
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
    SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token FROM distributed_locks
    WHERE tenant = $1 AND resource = $2 FOR SHARE),
n AS MATERIALIZED (SELECT ",
    clock_ms!(),
    " AS ms FROM (SELECT count(*) FROM k) AS locked)
SELECT k.resource, k.owner, k.acquired_at_ms, k.expires_at_ms, k.fencing_token, false AS in_flight
FROM k, n WHERE k.expires_at_ms > n.ms"
);

/// Locks the row `($1, $2)` (waiting for a concurrent writer), then reads the clock (`n.ms`):
/// the head of [`RELEASE`] and [`RENEW`]. `n` counts the locked rows, so it is evaluated only
/// after `k` has taken every lock; the `UPDATE` then re-checks its `WHERE` on the row's newest
/// version (READ COMMITTED) against that later "now".
macro_rules! lock_then_clock {
    ($keys:literal) => {
        concat!(
            "WITH k AS MATERIALIZED (
    SELECT d.tenant FROM distributed_locks AS d ",
            $keys,
            "
    ORDER BY d.tenant COLLATE \"C\", d.resource COLLATE \"C\" FOR UPDATE OF d),
n AS MATERIALIZED (SELECT ",
            clock_ms!(),
            " AS ms FROM (SELECT count(*) FROM k) AS locked)
"
        )
    };
}

/// Ends the caller's live lease. The row stays (expired) so that the next grant draws its token
/// under the row lock; the sweeper deletes it later. `acquired_at_ms = expires_at_ms` marks the
/// lease as ended by release (a lease that runs out is at least a second long), so that the
/// expired-takeover trigger (migration 4) does not count the next owner's grant.
pub const RELEASE: &str = concat!(
    lock_then_clock!("WHERE d.tenant = $1 AND d.resource = $2"),
    "UPDATE distributed_locks AS l SET acquired_at_ms = n.ms, expires_at_ms = n.ms
FROM n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.expires_at_ms > n.ms
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token"
);

pub const RENEW: &str = concat!(
    lock_then_clock!("WHERE d.tenant = $1 AND d.resource = $2"),
    "UPDATE distributed_locks AS l SET expires_at_ms = n.ms + $4
FROM n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.expires_at_ms > n.ms
RETURNING l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token"
);

/// Ends the grant `($3, $4, $5, $6)` (owner, token, acquired, expires) on `($1, $2)` if it is
/// still exactly that grant, live once its row is locked, and a new grant (a re-grant is left as
/// it is); marked as a release (see [`RELEASE`]).
const UNDO_GRANT: &str = concat!(
    lock_then_clock!("WHERE d.tenant = $1 AND d.resource = $2"),
    "UPDATE distributed_locks AS l SET acquired_at_ms = n.ms, expires_at_ms = n.ms
FROM n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.fencing_token = $4
  AND l.acquired_at_ms = $5 AND l.expires_at_ms = $6 AND l.expires_at_ms > n.ms
  AND NOT l.regranted"
);

/// Acquires ($1–$4: tenants, resources, owners, TTLs in ms), releases ($5–$7: tenants,
/// resources, owners) and renews ($8–$11, as acquires) of many requests as one statement, so one
/// round trip and one commit. Each row gets the very compare-and-set of [`ACQUIRE`], [`RELEASE`]
/// or [`RENEW`]. A key (tenant, resource) may appear only once in the whole batch: `ON CONFLICT
/// DO UPDATE` cannot touch a row twice, and the sub-statements share one snapshot, so none may
/// depend on another's effect. First `k` locks every existing row of the batch in key order
/// (so batches of two instances lock in the same order), then `n` reads the clock; releases and
/// renews decide against it, acquires of existing rows against a clock read once their row is
/// locked. A deadlock that happens anyway aborts the whole statement, which then changed
/// nothing. Returns the granted, released and renewed rows, each with its tenant.
pub const WRITE_BATCH: &str = concat!(
    lock_then_clock!(
        "JOIN (SELECT * FROM unnest($1::text[], $2::text[])
          UNION ALL SELECT * FROM unnest($5::text[], $6::text[])
          UNION ALL SELECT * FROM unnest($8::text[], $9::text[])) AS key(tenant, resource)
      ON d.tenant = key.tenant AND d.resource = key.resource"
    ),
    ",
acquired AS (
    INSERT INTO distributed_locks AS l (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
    SELECT a.tenant, a.resource, a.owner, n.ms, n.ms + a.ttl_ms, nextval('fencing_tokens')
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS a(tenant, resource, owner, ttl_ms), n
    ORDER BY a.tenant COLLATE \"C\", a.resource COLLATE \"C\"
    ",
    acquire_on_conflict!(),
    "
    RETURNING l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token),
released AS (
    UPDATE distributed_locks AS l SET acquired_at_ms = n.ms, expires_at_ms = n.ms
    FROM unnest($5::text[], $6::text[], $7::text[]) AS r(tenant, resource, owner), n
    WHERE l.tenant = r.tenant AND l.resource = r.resource AND l.owner = r.owner AND l.expires_at_ms > n.ms
    RETURNING l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token),
renewed AS (
    UPDATE distributed_locks AS l SET expires_at_ms = n.ms + r.ttl_ms
    FROM unnest($8::text[], $9::text[], $10::text[], $11::bigint[]) AS r(tenant, resource, owner, ttl_ms), n
    WHERE l.tenant = r.tenant AND l.resource = r.resource AND l.owner = r.owner AND l.expires_at_ms > n.ms
    RETURNING l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token)
SELECT * FROM acquired UNION ALL SELECT * FROM released UNION ALL SELECT * FROM renewed"
);

/// Deletes up to `$2` rows whose lease ended more than `$1` ms ago. Rows that a concurrent grant
/// holds locked are skipped, and locked rows are re-checked against their newest version.
const SWEEP: &str = "\
DELETE FROM distributed_locks WHERE (tenant, resource) IN (
    SELECT tenant, resource FROM distributed_locks
    WHERE expires_at_ms <= FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT - $1
    ORDER BY expires_at_ms
    LIMIT $2
    FOR UPDATE SKIP LOCKED)";

/// A page of a listing: the range `[$2, $3)` of the primary key `(tenant, resource)` past the
/// cursor `$4` (`''` when there is none), live now, `$5` rows. Both key columns are
/// `COLLATE "C"` (bytewise), and the comparisons and the order say so too, so the primary-key
/// index serves the range and the order whatever the database's default collation.
pub const LIST_BOUNDED: &str = concat!(
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, n.ms AS now_ms, ",
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
    "SELECT l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, n.ms AS now_ms, ",
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
const COUNT_LIVE: &str = "\
SELECT COUNT(*) AS count FROM distributed_locks
WHERE expires_at_ms > FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT";

/// Grants that took over another owner's expired lease, counted by a trigger (migration 4) on a
/// sequence: `last_value` once it has been used, else none yet.
const COUNT_EXPIRED_TAKEOVERS: &str = "\
SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS count FROM expired_takeovers";

/// How often a release or renew re-runs after its conditional write matched nothing but the
/// caller's own live lock appeared (it was granted to the caller concurrently).
pub(crate) const MAX_ATTEMPTS: usize = 8;

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

/// One kind of write of a batch, as the columns [`WRITE_BATCH`] takes (releases leave `ttls_ms`
/// empty).
#[derive(Debug, Default)]
pub(crate) struct WriteColumns<'a> {
    pub tenants: Vec<&'a str>,
    pub resources: Vec<&'a str>,
    pub owners: Vec<&'a str>,
    pub ttls_ms: Vec<i64>,
}

impl<'a> WriteColumns<'a> {
    pub(crate) fn push(
        &mut self,
        tenant: &'a Tenant,
        resource: &'a ResourceName,
        owner: &'a Owner,
        ttl: Option<Ttl>,
    ) {
        self.tenants.push(tenant.as_str());
        self.resources.push(resource.as_str());
        self.owners.push(owner.as_str());
        if let Some(ttl) = ttl {
            self.ttls_ms.push(i64::from(ttl.seconds()) * 1_000);
        }
    }
}

/// A row that [`WRITE_BATCH`] wrote, with its tenant (the key that tells whose write it was).
#[derive(Debug, QueryableByName)]
#[diesel(table_name = distributed_locks)]
pub(crate) struct BatchRow {
    pub tenant: String,
    #[diesel(embed)]
    pub lock: LockRow,
}

/// Runs the acquires, releases and renews of a batch as one statement (see [`WRITE_BATCH`]).
/// Every key must appear at most once over the three.
pub(crate) fn write_batch(
    conn: &mut PgConnection,
    acquires: &WriteColumns<'_>,
    releases: &WriteColumns<'_>,
    renews: &WriteColumns<'_>,
) -> QueryResult<Vec<BatchRow>> {
    Prepared::new(
        WRITE_BATCH,
        vec![
            Param::TextArray(&acquires.tenants),
            Param::TextArray(&acquires.resources),
            Param::TextArray(&acquires.owners),
            Param::BigIntArray(&acquires.ttls_ms),
            Param::TextArray(&releases.tenants),
            Param::TextArray(&releases.resources),
            Param::TextArray(&releases.owners),
            Param::TextArray(&renews.tenants),
            Param::TextArray(&renews.resources),
            Param::TextArray(&renews.owners),
            Param::BigIntArray(&renews.ttls_ms),
        ],
    )
    .load::<BatchRow>(conn)
}

/// The live lock on `(tenant, resource)`, if any. A row whose lease reads as ended while a
/// writer is still in flight on it is read again after that writer (see [`ended_in_flight`]).
pub(crate) fn status(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<LockRow>> {
    match read_status(conn, STATUS, tenant, resource)? {
        Some(row) if row.in_flight => {
            Ok(read_status(conn, STATUS_AFTER_WRITER, tenant, resource)?.map(|row| row.lock))
        }
        row => Ok(row.map(|row| row.lock)),
    }
}

/// The live lock on `(tenant, resource)` without waiting for anyone: `None` also when a writer
/// in flight may be about to make the lock live again. For callers that only take a shortcut
/// when they know a holder.
pub(crate) fn live_holder_now(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
) -> QueryResult<Option<LockRow>> {
    Ok(read_status(conn, STATUS, tenant, resource)?
        .filter(|row| !row.in_flight)
        .map(|row| row.lock))
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

/// Whether the grant was still exactly as made, and is now ended.
pub(crate) fn undo_grant(
    conn: &mut PgConnection,
    tenant: &Tenant,
    grant: &Lock,
) -> QueryResult<bool> {
    Prepared::new(
        UNDO_GRANT,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(grant.resource.as_str()),
            Param::Text(grant.owner.as_str()),
            Param::BigInt(grant.fencing_token.value()),
            Param::BigInt(grant.acquired_at.timestamp_millis()),
            Param::BigInt(grant.expires_at.timestamp_millis()),
        ],
    )
    .execute(conn)
    .map(|rows| rows > 0)
}

/// The caller's own lock kept appearing and disappearing under a release or renew.
#[derive(Debug, thiserror::Error)]
#[error("the lock kept changing during the request; retry")]
pub(crate) struct KeptChanging;

/// Who holds the live lock when a conditional write matched nothing.
pub(crate) enum Miss {
    NotFound,
    Forbidden,
    /// The caller's own lock is live now: run the write again.
    Retry,
}

pub(crate) fn classify_miss(
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
) -> Result<ReleaseRow, RepositoryError> {
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
            return Ok(ReleaseRow::Released(row));
        }
        match classify_miss(conn, tenant, resource, owner).map_err(from_query)? {
            Miss::NotFound => return Ok(ReleaseRow::NotFound),
            Miss::Forbidden => return Ok(ReleaseRow::Forbidden),
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
    #[diesel(sql_type = diesel::sql_types::Bool)]
    in_flight: bool,
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
    Prepared::new(COUNT_LIVE, vec![])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}

pub(crate) fn count_expired_takeovers(conn: &mut PgConnection) -> QueryResult<i64> {
    Prepared::new(COUNT_EXPIRED_TAKEOVERS, vec![])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}

pub(crate) fn sweep(conn: &mut PgConnection, grace_ms: i64, batch: i64) -> QueryResult<usize> {
    diesel::sql_query(SWEEP)
        .bind::<BigInt, _>(grace_ms)
        .bind::<BigInt, _>(batch)
        .execute(conn)
}
