//! The statements of the semaphore operations, written once for both backends (`$n`
//! placeholders, see `Prepared::portable`), and the two [`HolderTable`]s that run them.

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{HistoryEvent, ListQuery, Owner, ResourceName, Tenant};

use super::{HolderRow, HolderTable};
use crate::history::SayEnding;
use crate::lease_statements;
use crate::prepared::{portable_statement, Param, Prepared};
use crate::row::CountRow;
use crate::sessions::{stored_end, SessionRows};

const HOLDERS: &str = "\
SELECT name, owner, permits, semaphore_limit, acquired_at_ms, expires_at_ms, fencing_token,
       regranted, value, lock_delay_ms
FROM semaphore_holders WHERE tenant = $1 AND name = $2";

/// The rows that ended at `$3` and whose lock-delay is over, and the ended row of the granted
/// owner `$4` (its new grant replaces it).
const DELETE_ENDED: &str = "\
DELETE FROM semaphore_holders WHERE tenant = $1 AND name = $2 AND expires_at_ms <= $3
  AND (expires_at_ms + lock_delay_ms <= $3 OR owner = $4)";

const INSERT: &str = "\
INSERT INTO semaphore_holders (tenant, name, owner, permits, semaphore_limit, acquired_at_ms,
                               expires_at_ms, fencing_token, regranted, value, lock_delay_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10)";

/// A re-grant to the owner that holds the live lease: from `$4` to `$5`, marked as a re-grant,
/// its value replaced only when `$6` is not NULL, its lock-delay `$7`.
const REGRANT: &str = "\
UPDATE semaphore_holders SET acquired_at_ms = $4, expires_at_ms = $5, regranted = 1,
                             value = COALESCE($6, value), lock_delay_ms = $7
WHERE tenant = $1 AND name = $2 AND owner = $3";

const RENEW: &str = "\
UPDATE semaphore_holders SET expires_at_ms = $4, value = COALESCE($5, value)
WHERE tenant = $1 AND name = $2 AND owner = $3";

const DELETE_OWNER: &str = "\
DELETE FROM semaphore_holders WHERE tenant = $1 AND name = $2 AND owner = $3";

/// Every row of the semaphore, live, ended or in its lock-delay (an admin's force-release).
const DELETE_ALL: &str = "DELETE FROM semaphore_holders WHERE tenant = $1 AND name = $2";

/// The live rows of at most `$6` semaphores of tenant `$1` in `[$2, $3)` past the cursor `$4`,
/// live at `$5`: the names come from the primary key in order, then their rows.
const LIST_BOUNDED: &str = "\
SELECT h.name, h.owner, h.permits, h.semaphore_limit, h.acquired_at_ms, h.expires_at_ms,
       h.fencing_token, h.regranted, h.value, h.lock_delay_ms
FROM (SELECT DISTINCT name FROM semaphore_holders
      WHERE tenant = $1 AND name >= $2 AND name < $3 AND name > $4 AND expires_at_ms > $5
      ORDER BY name LIMIT $6) AS page
JOIN semaphore_holders AS h ON h.tenant = $1 AND h.name = page.name
WHERE h.expires_at_ms > $5
ORDER BY h.name, h.fencing_token";

/// [`LIST_BOUNDED`] for a prefix without an upper bound (`$3` is not used).
const LIST_UNBOUNDED: &str = "\
SELECT h.name, h.owner, h.permits, h.semaphore_limit, h.acquired_at_ms, h.expires_at_ms,
       h.fencing_token, h.regranted, h.value, h.lock_delay_ms
FROM (SELECT DISTINCT name FROM semaphore_holders
      WHERE tenant = $1 AND name >= $2 AND name > $4 AND expires_at_ms > $5
      ORDER BY name LIMIT $6) AS page
JOIN semaphore_holders AS h ON h.tenant = $1 AND h.name = page.name
WHERE h.expires_at_ms > $5
ORDER BY h.name, h.fencing_token";

/// Deletes up to `$2` rows whose lease ended at or before `$1`, and whose lock-delay with it
/// (at most a minute, the default grace). The expiry is checked again
/// outside the subquery: on PostgreSQL a row that a writer re-granted (an upsert of its ended
/// row) while the sweep waited for its lock is re-read at its new version, which the outer
/// condition then keeps; the subquery alone saw it ended in the sweep's snapshot.
pub(crate) const SWEEP: &str = "\
DELETE FROM semaphore_holders WHERE (tenant, name, owner) IN (
    SELECT tenant, name, owner FROM semaphore_holders
    WHERE expires_at_ms <= $1 AND expires_at_ms + lock_delay_ms <= $1
    ORDER BY expires_at_ms LIMIT $2)
  AND expires_at_ms + lock_delay_ms <= $1";

/// PostgreSQL: every row of the semaphore (`$1`, `$2`), each with the server's clock. Run after
/// [`POSTGRES_LOCK`], as a statement of its own: under READ COMMITTED a statement reads from a
/// snapshot taken when it starts, so a read in the statement that waited for the lock could miss
/// the rows of the holder it waited for. With no row, the clock is read by itself.
const POSTGRES_HOLDERS_AT: &str = concat!(
    "SELECT name, owner, permits, semaphore_limit, acquired_at_ms, expires_at_ms, fencing_token,
       regranted, value, lock_delay_ms, ",
    clock_ms!(),
    " AS now_ms
FROM semaphore_holders WHERE tenant = $1 AND name = $2"
);

/// PostgreSQL, a new grant in one statement: the semaphore's rows ended at `$9` whose lock-delay
/// is over go (but the owner's own, which the insert then replaces: a row may not be deleted and
/// inserted by one statement), and the grant is inserted with the next fencing token, which it
/// returns, and its lock-delay `$10`. The insert reads `ended`, so the deletes run first and the
/// history records the ended grants' expiries before the new grant, as on SQLite (a `WITH`
/// statement nobody reads runs after the main statement).
const POSTGRES_GRANT: &str = "\
WITH ended AS (
    DELETE FROM semaphore_holders
    WHERE tenant = $1 AND name = $2 AND owner <> $3 AND expires_at_ms + lock_delay_ms <= $9
    RETURNING 1)
INSERT INTO semaphore_holders (tenant, name, owner, permits, semaphore_limit, acquired_at_ms,
                               expires_at_ms, fencing_token, regranted, value, lock_delay_ms)
SELECT $1, $2, $3, $4, $5, $6, $7, nextval('fencing_tokens'), 0, $8, $10
FROM (SELECT count(*) FROM ended) AS deleted_first
ON CONFLICT (tenant, name, owner) DO UPDATE SET
    permits = EXCLUDED.permits, semaphore_limit = EXCLUDED.semaphore_limit,
    acquired_at_ms = EXCLUDED.acquired_at_ms, expires_at_ms = EXCLUDED.expires_at_ms,
    fencing_token = EXCLUDED.fencing_token, regranted = 0, value = EXCLUDED.value,
    lock_delay_ms = EXCLUDED.lock_delay_ms
RETURNING fencing_token AS count";

/// PostgreSQL: a transaction-level advisory lock on the semaphore (`$1`, `$2`), released at
/// commit or rollback. Two semaphores whose keys collide only wait for each other.
const POSTGRES_LOCK: &str =
    "SELECT 1::BIGINT AS count FROM (SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 13))) AS l";

/// The semaphore statements on SQLite, inside the group-commit writer's transaction: it holds
/// the write lock already, and `now_ms` is the batch's clock.
pub(crate) struct SqliteHolders<'c> {
    pub conn: &'c mut SqliteConnection,
    pub now_ms: i64,
}

/// The semaphore statements on PostgreSQL, inside a transaction of their own.
pub(crate) struct PostgresHolders<'c> {
    pub conn: &'c mut PgConnection,
}

/// The statements both backends share, written once over a connection type that runs
/// [`Prepared`] statements.
macro_rules! shared_statements {
    () => {
        fn delete_all(&mut self, tenant: &Tenant, name: &ResourceName) -> QueryResult<usize> {
            portable_statement!(
                DELETE_ALL,
                vec![Param::Text(tenant.as_str()), Param::Text(name.as_str())],
            )
            .execute(self.conn)
        }

        fn holders(&mut self, tenant: &Tenant, name: &ResourceName) -> QueryResult<Vec<HolderRow>> {
            portable_statement!(
                HOLDERS,
                vec![Param::Text(tenant.as_str()), Param::Text(name.as_str())],
            )
            .load(self.conn)
        }

        fn delete_ended(
            &mut self,
            tenant: &Tenant,
            name: &ResourceName,
            owner: &str,
            now_ms: i64,
        ) -> QueryResult<usize> {
            portable_statement!(
                DELETE_ENDED,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(name.as_str()),
                    Param::BigInt(now_ms),
                    Param::Text(owner),
                ],
            )
            .execute(self.conn)
        }

        fn insert(&mut self, tenant: &Tenant, row: &HolderRow) -> QueryResult<usize> {
            portable_statement!(
                INSERT,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(&row.name),
                    Param::Text(&row.owner),
                    Param::BigInt(row.permits),
                    Param::BigInt(row.semaphore_limit),
                    Param::BigInt(row.acquired_at_ms),
                    Param::BigInt(stored_end(&row.owner, row.expires_at_ms)),
                    Param::BigInt(row.fencing_token),
                    Param::NullableText(row.value.as_deref()),
                    Param::BigInt(row.lock_delay_ms),
                ],
            )
            .execute(self.conn)
        }

        fn regrant(
            &mut self,
            tenant: &Tenant,
            row: &HolderRow,
            value: Option<&str>,
        ) -> QueryResult<usize> {
            portable_statement!(
                REGRANT,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(&row.name),
                    Param::Text(&row.owner),
                    Param::BigInt(row.acquired_at_ms),
                    Param::BigInt(stored_end(&row.owner, row.expires_at_ms)),
                    Param::NullableText(value),
                    Param::BigInt(row.lock_delay_ms),
                ],
            )
            .execute(self.conn)
        }

        fn renew(
            &mut self,
            tenant: &Tenant,
            row: &HolderRow,
            value: Option<&str>,
        ) -> QueryResult<usize> {
            portable_statement!(
                RENEW,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(&row.name),
                    Param::Text(&row.owner),
                    Param::BigInt(stored_end(&row.owner, row.expires_at_ms)),
                    Param::NullableText(value),
                ],
            )
            .execute(self.conn)
        }

        fn delete_owner(
            &mut self,
            tenant: &Tenant,
            name: &ResourceName,
            owner: &Owner,
        ) -> QueryResult<usize> {
            portable_statement!(
                DELETE_OWNER,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(name.as_str()),
                    Param::Text(owner.as_str()),
                ],
            )
            .execute(self.conn)
        }

        fn list(
            &mut self,
            tenant: &Tenant,
            query: &ListQuery,
            now_ms: i64,
        ) -> QueryResult<Vec<HolderRow>> {
            let upper = query.prefix.upper_bound();
            let after = query.after.as_ref().map_or("", ResourceName::as_str);
            let sql = if upper.is_some() {
                LIST_BOUNDED
            } else {
                LIST_UNBOUNDED
            };
            Prepared::portable(
                sql,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(query.prefix.as_str()),
                    Param::Text(upper.as_deref().unwrap_or("")),
                    Param::Text(after),
                    Param::BigInt(now_ms),
                    Param::BigInt(query.limit.get() as i64 + 1),
                ],
            )
            .load(self.conn)
        }
    };
}

impl HolderTable for SqliteHolders<'_> {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        self.conn.say_ending(ending, reason)
    }

    /// The writer's transaction holds SQLite's write lock: nothing else writes meanwhile.
    fn lock_semaphore(&mut self, _: &Tenant, _: &ResourceName) -> QueryResult<()> {
        Ok(())
    }

    fn now_ms(&mut self) -> QueryResult<i64> {
        Ok(self.now_ms)
    }

    fn next_token(&mut self) -> QueryResult<i64> {
        lease_statements::next_token_sqlite(self.conn)
    }

    shared_statements!();

    fn session_rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }
}

impl HolderTable for PostgresHolders<'_> {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        self.conn.say_ending(ending, reason)
    }

    fn lock_semaphore(&mut self, tenant: &Tenant, name: &ResourceName) -> QueryResult<()> {
        portable_statement!(
            POSTGRES_LOCK,
            vec![Param::Text(tenant.as_str()), Param::Text(name.as_str())],
        )
        .load::<CountRow>(self.conn)
        .map(drop)
    }

    fn now_ms(&mut self) -> QueryResult<i64> {
        lease_statements::now_postgres(self.conn)
    }

    fn next_token(&mut self) -> QueryResult<i64> {
        lease_statements::next_token_postgres(self.conn)
    }

    fn session_rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }

    /// Two round trips: the lock, then the rows with the clock (and a third to keep that clock
    /// for the history's triggers).
    fn lock_and_read(
        &mut self,
        tenant: &Tenant,
        name: &ResourceName,
    ) -> QueryResult<(i64, Vec<HolderRow>)> {
        self.lock_semaphore(tenant, name)?;
        let rows: Vec<HolderRowAt> = portable_statement!(
            POSTGRES_HOLDERS_AT,
            vec![Param::Text(tenant.as_str()), Param::Text(name.as_str())],
        )
        .load(self.conn)?;
        let now_ms = match rows.first() {
            Some(row) => {
                lease_statements::keep_now_postgres(self.conn, row.now_ms)?;
                row.now_ms
            }
            None => self.now_ms()?,
        };
        Ok((now_ms, rows.into_iter().map(|row| row.holder).collect()))
    }

    /// One round trip (see [`POSTGRES_GRANT`]).
    fn grant(&mut self, tenant: &Tenant, row: &HolderRow, now_ms: i64) -> QueryResult<i64> {
        lease_statements::one(
            portable_statement!(
                POSTGRES_GRANT,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(&row.name),
                    Param::Text(&row.owner),
                    Param::BigInt(row.permits),
                    Param::BigInt(row.semaphore_limit),
                    Param::BigInt(row.acquired_at_ms),
                    Param::BigInt(stored_end(&row.owner, row.expires_at_ms)),
                    Param::NullableText(row.value.as_deref()),
                    Param::BigInt(now_ms),
                    Param::BigInt(row.lock_delay_ms),
                ],
            )
            .load(self.conn)?,
        )
    }

    shared_statements!();
}

/// A row of [`POSTGRES_HOLDERS_AT`].
#[derive(QueryableByName)]
struct HolderRowAt {
    #[diesel(embed)]
    holder: HolderRow,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    now_ms: i64,
}

/// Deletes up to `batch` semaphore rows whose lease ended at or before `cutoff_ms`.
pub(crate) fn sweep_sqlite(
    conn: &mut SqliteConnection,
    cutoff_ms: i64,
    batch: i64,
) -> QueryResult<usize> {
    lease_statements::sweep_sqlite(conn, SWEEP, cutoff_ms, batch)
}

/// [`sweep_sqlite`] on PostgreSQL, against the server's clock less `grace_ms`.
pub(crate) fn sweep_postgres(
    conn: &mut PgConnection,
    grace_ms: i64,
    batch: i64,
) -> QueryResult<usize> {
    lease_statements::sweep_postgres(conn, SWEEP, grace_ms, batch)
}
