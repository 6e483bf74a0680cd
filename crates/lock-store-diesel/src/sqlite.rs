//! The lock statements on SQLite. The process clock is the clock: `now_ms` comes from the
//! repository's `Clock`. The write functions here run inside the group-commit writer's
//! IMMEDIATE transaction (see `writer::group_commit`), which takes SQLite's write lock before
//! anything is read, so a read-then-write can never fail on lock upgrade or act on a stale read.
//!
//! Reads run outside the writer, on the last committed state. That state can lag a write whose
//! decision is already made: a renew decided before the lease's end whose COMMIT (its fsync, or
//! another process's) lands after it. Read outside, the row's lease has ended; read once that
//! commit lands, it is live again with the same token. So a read that meets a row whose lease
//! has ended does not answer from it ([`Outside::AskTheWriter`]): the caller reads again inside
//! the writer, after every write in flight, in this process or another.

use diesel::sqlite::SqliteConnection;
use diesel::{Connection, OptionalExtension, QueryResult, RunQueryDsl};
use lock_domain::{
    HistoryEvent, LeaseValue, ListQuery, Lock, LockDelay, Owner, ResourceName, SessionId, Tenant,
    Ttl,
};

use crate::history::SayEnding;
use crate::outcome::{ReleaseRow, RenewRow};
use crate::prepared::{statement, Param, Prepared};
use crate::row::{CountRow, ListedRow, LockRow};

/// The compare-and-set of an acquire, as one statement: insert the lock, or take over the existing
/// row only when it belongs to the same owner, or its lease has expired and its lock-delay is
/// over too (a released row is deleted, so an existing row that has ended ran out; the domain's
/// `delayed_until` is the rule). A new grant takes the next value of `fencing_counter`; the
/// triggers of the schema move the counter inside this same statement. `RETURNING` yields no row
/// when another owner holds a live lock, or the place of one that ran out less than its
/// lock-delay ago.
pub(crate) const ACQUIRE: &str = "\
INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token,
                               value, lock_delay_ms)
VALUES (?1, ?2, ?3, ?4, ?5, (SELECT last_token + 1 FROM fencing_counter WHERE id = 1), ?6, ?7)
ON CONFLICT (tenant, resource) DO UPDATE SET
    owner = excluded.owner,
    lock_delay_ms = excluded.lock_delay_ms,
    value = CASE WHEN distributed_locks.expires_at_ms > excluded.acquired_at_ms
                 THEN COALESCE(excluded.value, distributed_locks.value)
                 ELSE excluded.value END,
    acquired_at_ms = excluded.acquired_at_ms,
    expires_at_ms = excluded.expires_at_ms,
    fencing_token = CASE WHEN distributed_locks.expires_at_ms > excluded.acquired_at_ms
                         THEN distributed_locks.fencing_token
                         ELSE excluded.fencing_token END,
    regranted = distributed_locks.expires_at_ms > excluded.acquired_at_ms
WHERE distributed_locks.expires_at_ms + distributed_locks.lock_delay_ms <= excluded.acquired_at_ms
   OR distributed_locks.owner = excluded.owner
RETURNING resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value";

const STATUS: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value
FROM distributed_locks WHERE tenant = ?1 AND resource = ?2 AND expires_at_ms > ?3";

/// The row of `(?1, ?2)` whether its lease is live or not.
const ROW: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value
FROM distributed_locks WHERE tenant = ?1 AND resource = ?2";

/// Whether a row of tenant `?1` in `[?2, ?3]` past the cursor `?4` has a lease that ended at or
/// before `?5`. Both bounds are index bounds, so this reads no more rows than the page did.
pub const ENDED_IN_RANGE: &str = "\
SELECT COUNT(*) AS count FROM (
    SELECT 1 FROM distributed_locks
    WHERE tenant = ?1 AND resource >= ?2 AND resource <= ?3 AND resource > ?4
      AND expires_at_ms <= ?5
    LIMIT 1)";

/// [`ENDED_IN_RANGE`] up to the end of the tenant's names (`?3` is not used).
const ENDED_TO_END: &str = "\
SELECT COUNT(*) AS count FROM (
    SELECT 1 FROM distributed_locks
    WHERE tenant = ?1 AND resource >= ?2 AND resource > ?4 AND expires_at_ms <= ?5
    LIMIT 1)";

pub(crate) const RELEASE: &str = "\
DELETE FROM distributed_locks
WHERE tenant = ?1 AND resource = ?2 AND owner = ?3 AND expires_at_ms > ?4
RETURNING resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value";

/// [`RELEASE`] by a session's holder `?3`, only while its session (`?5`, `?6`: the tenant of its
/// sessions, its id) is live at `?4`: the hold's row ends with its session, which the row cannot
/// tell.
const RELEASE_WHILE_SESSION_LIVES: &str = "\
DELETE FROM distributed_locks
WHERE tenant = ?1 AND resource = ?2 AND owner = ?3 AND expires_at_ms > ?4
  AND EXISTS (SELECT 1 FROM sessions WHERE tenant = ?5 AND id = ?6 AND expires_at_ms > ?4)
RETURNING resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value";

/// Ends the grant `(?3, ?4, ?5, ?6)` (owner, token, acquired, expires) on `(?1, ?2)` if it is
/// still exactly that grant, live at `?7`, and a new grant (a re-grant is left as it is).
const UNDO_GRANT: &str = "\
DELETE FROM distributed_locks
WHERE tenant = ?1 AND resource = ?2 AND owner = ?3 AND fencing_token = ?4
  AND acquired_at_ms = ?5 AND expires_at_ms = ?6 AND expires_at_ms > ?7 AND regranted = 0";

/// Deletes up to `?2` rows whose lease ended at or before `?1`, and whose lock-delay (at most a
/// minute, the default grace) ended by then too.
const SWEEP: &str = "\
DELETE FROM distributed_locks WHERE (tenant, resource) IN (
    SELECT tenant, resource FROM distributed_locks WHERE expires_at_ms <= ?1
      AND expires_at_ms + lock_delay_ms <= ?1 ORDER BY expires_at_ms LIMIT ?2)";

const RENEW: &str = "\
UPDATE distributed_locks SET expires_at_ms = ?4, value = COALESCE(?6, value)
WHERE tenant = ?1 AND resource = ?2 AND owner = ?3 AND expires_at_ms > ?5
RETURNING resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value";

/// A page of a listing: the range `[?2, ?3)` of the primary key `(tenant, resource)` past the
/// cursor `?4` (`''` when there is none: every name is longer), live at `?5`, `?6` rows. SQLite
/// compares TEXT with its default BINARY collation, which is bytewise, so the primary key (the
/// table itself: `WITHOUT ROWID`) serves both the range and the order.
pub const LIST_BOUNDED: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value, ?5 AS now_ms
FROM distributed_locks
WHERE tenant = ?1 AND resource >= ?2 AND resource < ?3 AND resource > ?4 AND expires_at_ms > ?5
ORDER BY resource LIMIT ?6";

/// [`LIST_BOUNDED`] for a prefix without an upper bound (the empty prefix).
pub(crate) const LIST_UNBOUNDED: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value, ?5 AS now_ms
FROM distributed_locks
WHERE tenant = ?1 AND resource >= ?2 AND resource > ?4 AND expires_at_ms > ?5
ORDER BY resource LIMIT ?6";

/// Grants that took over another owner's expired lease, counted by a trigger (migration 4).
const COUNT_EXPIRED_TAKEOVERS: &str = "SELECT count AS count FROM expired_takeovers WHERE id = 1";

/// The live locks of every tenant, counted on the expiry index.
const COUNT_LIVE: &str = "SELECT COUNT(*) AS count FROM distributed_locks WHERE expires_at_ms > ?1";

#[allow(clippy::too_many_arguments)] // one grant: where, who, the lease's terms, and the clock
pub(crate) fn acquire(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
    value: Option<&LeaseValue>,
    lock_delay: LockDelay,
    now_ms: i64,
) -> QueryResult<Option<LockRow>> {
    // A session's hold ends with its session: its row says so (see `sessions.rs`).
    let expires_ms =
        crate::sessions::stored_end(owner.as_str(), now_ms + i64::from(ttl.seconds()) * 1_000);
    statement!(
        ACQUIRE,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::Text(owner.as_str()),
            Param::BigInt(now_ms),
            Param::BigInt(expires_ms),
            Param::NullableText(value.map(LeaseValue::as_str)),
            Param::BigInt(lock_delay.millis()),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

pub(crate) fn status(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    now_ms: i64,
) -> QueryResult<Option<LockRow>> {
    statement!(
        STATUS,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::BigInt(now_ms),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

/// The answer of a read outside the writer, or none yet (see the module documentation).
pub(crate) enum Outside<T> {
    Answer(T),
    /// A row the read met has an ended lease: read again inside the writer.
    AskTheWriter,
}

/// [`status`] outside the writer.
pub(crate) fn status_outside_writer(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    now_ms: i64,
) -> QueryResult<Outside<Option<LockRow>>> {
    let row = statement!(
        ROW,
        vec![Param::Text(tenant.as_str()), Param::Text(resource.as_str())],
    )
    .get_result::<LockRow>(conn)
    .optional()?;
    Ok(match row {
        Some(row) if row.expires_at_ms <= now_ms => Outside::AskTheWriter,
        row => Outside::Answer(row),
    })
}

pub(crate) fn release(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    now_ms: i64,
) -> QueryResult<ReleaseRow> {
    Ok(match release_held(conn, tenant, resource, owner, now_ms)? {
        Some(row) => ReleaseRow::Released(row),
        None if status(conn, tenant, resource, now_ms)?.is_some() => ReleaseRow::Forbidden,
        None => ReleaseRow::NotFound,
    })
}

/// Ends `owner`'s live lease on `resource`: the row it ended, or `None` when `owner` held none.
pub(crate) fn release_held(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    now_ms: i64,
) -> QueryResult<Option<LockRow>> {
    statement!(
        RELEASE,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::Text(owner.as_str()),
            Param::BigInt(now_ms),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

/// Releases the hold of session `id` (of `sessions_tenant`) on `resource`, held by `holder` (the
/// session's), if the session is live at `now_ms`: the row it ended, or `None` when it ended
/// none (the caller decides why, on the session and the lock's holders).
pub(crate) fn release_under_session(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    holder: &Owner,
    sessions_tenant: &Tenant,
    id: &SessionId,
    now_ms: i64,
) -> QueryResult<Option<LockRow>> {
    statement!(
        RELEASE_WHILE_SESSION_LIVES,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::Text(holder.as_str()),
            Param::BigInt(now_ms),
            Param::Text(sessions_tenant.as_str()),
            Param::Text(id.as_str()),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()
}

/// Whether the grant was still exactly as made, and is now ended.
pub(crate) fn undo_grant(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    grant: &Lock,
    now_ms: i64,
) -> QueryResult<bool> {
    conn.with_ending(HistoryEvent::Undone, None, |conn| {
        statement!(
            UNDO_GRANT,
            vec![
                Param::Text(tenant.as_str()),
                Param::Text(grant.resource.as_str()),
                Param::Text(grant.owner.as_str()),
                Param::BigInt(grant.fencing_token.value()),
                Param::BigInt(grant.acquired_at.timestamp_millis()),
                Param::BigInt(crate::sessions::stored_end(
                    grant.owner.as_str(),
                    grant.expires_at.timestamp_millis(),
                )),
                Param::BigInt(now_ms),
            ],
        )
        .execute(conn)
        .map(|rows| rows > 0)
    })
}

pub(crate) fn renew(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
    value: Option<&LeaseValue>,
    now_ms: i64,
) -> QueryResult<RenewRow> {
    let expires_ms = now_ms + i64::from(ttl.seconds()) * 1_000;
    let renewed = statement!(
        RENEW,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(resource.as_str()),
            Param::Text(owner.as_str()),
            Param::BigInt(expires_ms),
            Param::BigInt(now_ms),
            Param::NullableText(value.map(LeaseValue::as_str)),
        ],
    )
    .get_result::<LockRow>(conn)
    .optional()?;
    Ok(match renewed {
        Some(row) => RenewRow::Renewed(row),
        None if status(conn, tenant, resource, now_ms)?.is_some() => RenewRow::Forbidden,
        None => RenewRow::NotFound,
    })
}

/// A page of live locks (and one more row, when there are more). Inside the writer.
pub(crate) fn list(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    query: &ListQuery,
    now_ms: i64,
) -> QueryResult<Vec<ListedRow>> {
    let upper = query.prefix.upper_bound();
    let (sql, upper) = match &upper {
        Some(upper) => (LIST_BOUNDED, upper.as_str()),
        None => (LIST_UNBOUNDED, ""),
    };
    Prepared::new(
        sql,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(query.prefix.as_str()),
            Param::Text(upper),
            Param::Text(query.after.as_ref().map_or("", |a| a.as_str())),
            Param::BigInt(now_ms),
            Param::BigInt(query.limit.get() as i64 + 1),
        ],
    )
    .load::<ListedRow>(conn)
}

/// [`list`] outside the writer: the page and, in the same read transaction, whether any row in
/// the range the page covers has an ended lease.
pub(crate) fn list_outside_writer(
    conn: &mut SqliteConnection,
    tenant: &Tenant,
    query: &ListQuery,
    now_ms: i64,
) -> QueryResult<Outside<Vec<ListedRow>>> {
    conn.transaction(|conn| {
        let rows = list(conn, tenant, query, now_ms)?;
        // A full page covers the range up to its last row; a short one, all of the prefix (the
        // prefix's upper bound itself is not a match, but including it costs nothing).
        let upper = match rows.last() {
            Some(row) if rows.len() > query.limit.get() => Some(row.lock.resource.clone()),
            _ => query.prefix.upper_bound(),
        };
        let (sql, upper) = match &upper {
            Some(upper) => (ENDED_IN_RANGE, upper.as_str()),
            None => (ENDED_TO_END, ""),
        };
        let ended = Prepared::new(
            sql,
            vec![
                Param::Text(tenant.as_str()),
                Param::Text(query.prefix.as_str()),
                Param::Text(upper),
                Param::Text(query.after.as_ref().map_or("", |a| a.as_str())),
                Param::BigInt(now_ms),
            ],
        )
        .get_result::<CountRow>(conn)?;
        Ok(if ended.count > 0 {
            Outside::AskTheWriter
        } else {
            Outside::Answer(rows)
        })
    })
}

pub(crate) fn count_live(conn: &mut SqliteConnection, now_ms: i64) -> QueryResult<i64> {
    statement!(COUNT_LIVE, vec![Param::BigInt(now_ms)])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}

pub(crate) fn count_expired_takeovers(conn: &mut SqliteConnection) -> QueryResult<i64> {
    statement!(COUNT_EXPIRED_TAKEOVERS, vec![])
        .get_result::<CountRow>(conn)
        .map(|row| row.count)
}

pub(crate) fn sweep(
    conn: &mut SqliteConnection,
    expired_before_ms: i64,
    batch: i64,
) -> QueryResult<usize> {
    statement!(
        SWEEP,
        vec![Param::BigInt(expired_before_ms), Param::BigInt(batch)],
    )
    .execute(conn)
}
