//! The statements of the shared-lock operations, written once for both backends where they can
//! be (`$n` placeholders, see `Prepared::portable`), and the two [`SharedTable`]s that run them.

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{OptionalExtension, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{HistoryEvent, LeaseValue, Lock, Owner, ResourceName, Tenant};

use super::SharedTable;
use crate::history::SayEnding;
use crate::lease_statements;
use crate::prepared::{portable_statement, Param};
use crate::row::LockRow;
use crate::sessions::{stored_end, SessionRows};

/// A `shared_holders` row (its tenant and resource are the operation's).
#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct SharedRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub owner: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub acquired_at_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub expires_at_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub fencing_token: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub regranted: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub value: Option<String>,
}

const LEASES: &str = "\
SELECT owner, acquired_at_ms, expires_at_ms, fencing_token, regranted, value
FROM shared_holders WHERE tenant = $1 AND resource = $2";

const ROW: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value, lock_delay_ms
FROM distributed_locks WHERE tenant = $1 AND resource = $2";

/// A lock's row and its lock-delay.
#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct DelayedRow {
    #[diesel(embed)]
    pub lock: LockRow,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub lock_delay_ms: i64,
}

const PUT_LEASE: &str = "\
INSERT INTO shared_holders (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token,
                            regranted, value)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (tenant, resource, owner) DO UPDATE SET
    acquired_at_ms = excluded.acquired_at_ms, expires_at_ms = excluded.expires_at_ms,
    fencing_token = excluded.fencing_token, regranted = excluded.regranted, value = excluded.value";

const DELETE_LEASE: &str =
    "DELETE FROM shared_holders WHERE tenant = $1 AND resource = $2 AND owner = $3";

const DELETE_LEASES: &str = "DELETE FROM shared_holders WHERE tenant = $1 AND resource = $2";

/// The lock's row as a grant writes it: the row standing for its shared holders (never a
/// re-grant: the exclusive undo never ends it, its owner being no client; no value), or an
/// exclusive grant through the holders (`$7` = 1 for a re-grant; `$8` its value; `$9` its
/// lock-delay in ms, 0 for the readers' row and a set's grants). None has an expiry recorded (see
/// `history/expiry.rs`).
const WRITE_ROW: &str = "\
INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms,
                               fencing_token, regranted, value, lock_delay_ms)
VALUES ($1, $2, $3, $4, $5, $6, ($7 = 1), $8, $9)
ON CONFLICT (tenant, resource) DO UPDATE SET
    owner = excluded.owner, acquired_at_ms = excluded.acquired_at_ms,
    expires_at_ms = excluded.expires_at_ms, fencing_token = excluded.fencing_token,
    regranted = excluded.regranted, value = excluded.value, lock_delay_ms = excluded.lock_delay_ms,
    expiry_recorded = FALSE";

/// An exclusive holder's renew: the new end `$3`, and the value `$4` when not NULL.
const RENEW_ROW: &str = "\
UPDATE distributed_locks SET expires_at_ms = $3, value = COALESCE($4, value)
WHERE tenant = $1 AND resource = $2";

/// Deletes up to `$2` shared leases that ended at or before `$1`; the expiry is checked again
/// outside the subquery, as the semaphores' sweep does (a lease re-granted while the sweep waited
/// for its lock is kept).
const SWEEP: &str = "\
DELETE FROM shared_holders WHERE (tenant, resource, owner) IN (
    SELECT tenant, resource, owner FROM shared_holders WHERE expires_at_ms <= $1
    ORDER BY expires_at_ms LIMIT $2)
  AND expires_at_ms <= $1";

/// SQLite: a release deletes the row (as the exclusive release does).
const SQLITE_END_ROW: &str = "DELETE FROM distributed_locks WHERE tenant = $1 AND resource = $2";

/// PostgreSQL: a release keeps the row, ended at `$3` and marked as released
/// (`acquired_at_ms = expires_at_ms`), as the exclusive release does (see `postgres.rs`).
const POSTGRES_END_ROW: &str = "\
UPDATE distributed_locks SET acquired_at_ms = $3, expires_at_ms = $3, lock_delay_ms = 0
WHERE tenant = $1 AND resource = $2";

/// PostgreSQL: a row to lock when the lock has none, ended (and marked released, so that taking
/// it over counts as no expired takeover). The operation rewrites it before it commits.
const POSTGRES_ENSURE_ROW: &str = "\
INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms,
                               fencing_token)
VALUES ($1, $2, $3, 0, 0, 1)
ON CONFLICT (tenant, resource) DO NOTHING";

/// PostgreSQL: the lock's row, locked as every exclusive write of it locks it. Under READ
/// COMMITTED this waits for a writer of the row and returns its newest version; the clock and
/// the leases are read by later statements, whose snapshots see what that writer committed.
const POSTGRES_LOCK_ROW: &str = "\
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value, lock_delay_ms
FROM distributed_locks WHERE tenant = $1 AND resource = $2 FOR UPDATE";

/// How often a PostgreSQL operation looks for its row again when the sweeper deleted it between
/// the insert that made sure it existed and the lock.
const ENSURE_ATTEMPTS: usize = 4;

/// The shared-lock statements on SQLite, inside the group-commit writer's transaction: it holds
/// the write lock already, and `now_ms` is the batch's clock.
pub(crate) struct SqliteShared<'c> {
    pub conn: &'c mut SqliteConnection,
    pub now_ms: i64,
}

/// The shared-lock statements on PostgreSQL, inside a transaction of their own.
pub(crate) struct PostgresShared<'c> {
    pub conn: &'c mut PgConnection,
}

fn key<'a>(tenant: &'a Tenant, resource: &'a ResourceName) -> Vec<Param<'a>> {
    vec![Param::Text(tenant.as_str()), Param::Text(resource.as_str())]
}

/// The statements both backends share, written once over a connection type that runs
/// [`Prepared`](crate::prepared::Prepared) statements.
macro_rules! portable_statements {
    () => {
        fn write_row(
            &mut self,
            tenant: &Tenant,
            row: &Lock,
            regranted: bool,
            lock_delay_ms: i64,
        ) -> QueryResult<usize> {
            portable_statement!(
                WRITE_ROW,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(row.resource.as_str()),
                    Param::Text(row.owner.as_str()),
                    Param::BigInt(row.acquired_at.timestamp_millis()),
                    Param::BigInt(stored_end(
                        row.owner.as_str(),
                        row.expires_at.timestamp_millis(),
                    )),
                    Param::BigInt(row.fencing_token.value()),
                    Param::BigInt(i64::from(regranted)),
                    Param::NullableText(row.value.as_ref().map(LeaseValue::as_str)),
                    Param::BigInt(lock_delay_ms),
                ],
            )
            .execute(self.conn)
        }

        fn renew_row(
            &mut self,
            tenant: &Tenant,
            resource: &ResourceName,
            expires_at_ms: i64,
            value: Option<&LeaseValue>,
        ) -> QueryResult<usize> {
            let mut params = key(tenant, resource);
            params.push(Param::BigInt(expires_at_ms));
            params.push(Param::NullableText(value.map(LeaseValue::as_str)));
            portable_statement!(RENEW_ROW, params).execute(self.conn)
        }

        fn put_lease(
            &mut self,
            tenant: &Tenant,
            resource: &ResourceName,
            row: &SharedRow,
        ) -> QueryResult<usize> {
            let mut params = key(tenant, resource);
            params.extend([
                Param::Text(&row.owner),
                Param::BigInt(row.acquired_at_ms),
                Param::BigInt(stored_end(&row.owner, row.expires_at_ms)),
                Param::BigInt(row.fencing_token),
                Param::BigInt(row.regranted),
                Param::NullableText(row.value.as_deref()),
            ]);
            portable_statement!(PUT_LEASE, params).execute(self.conn)
        }

        fn delete_leases(
            &mut self,
            tenant: &Tenant,
            resource: &ResourceName,
            owner: Option<&Owner>,
        ) -> QueryResult<usize> {
            let mut params = key(tenant, resource);
            match owner {
                Some(owner) => {
                    params.push(Param::Text(owner.as_str()));
                    portable_statement!(DELETE_LEASE, params).execute(self.conn)
                }
                None => portable_statement!(DELETE_LEASES, params).execute(self.conn),
            }
        }
    };
}

impl SharedTable for SqliteShared<'_> {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        self.conn.say_ending(ending, reason)
    }

    portable_statements!();

    fn session_rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }

    fn lock_and_read(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        _create: bool,
    ) -> QueryResult<(i64, Option<DelayedRow>, Vec<SharedRow>)> {
        let row = portable_statement!(ROW, key(tenant, resource))
            .get_result::<DelayedRow>(self.conn)
            .optional()?;
        let leases = portable_statement!(LEASES, key(tenant, resource)).load(self.conn)?;
        Ok((self.now_ms, row, leases))
    }

    fn next_token(&mut self) -> QueryResult<i64> {
        lease_statements::next_token_sqlite(self.conn)
    }

    fn now_ms(&mut self) -> QueryResult<i64> {
        Ok(self.now_ms)
    }

    fn undo_exclusive(&mut self, tenant: &Tenant, grant: &Lock) -> QueryResult<bool> {
        crate::sqlite::undo_grant(self.conn, tenant, grant, self.now_ms)
    }

    fn end_row(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        _now_ms: i64,
    ) -> QueryResult<usize> {
        portable_statement!(SQLITE_END_ROW, key(tenant, resource)).execute(self.conn)
    }
}

impl SharedTable for PostgresShared<'_> {
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()> {
        self.conn.say_ending(ending, reason)
    }

    portable_statements!();

    fn session_rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }

    fn lock_and_read(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        create: bool,
    ) -> QueryResult<(i64, Option<DelayedRow>, Vec<SharedRow>)> {
        let mut row = None;
        for _ in 0..ENSURE_ATTEMPTS {
            if create {
                let mut params = key(tenant, resource);
                let marker = Owner::shared_holders();
                params.push(Param::Text(marker.as_str()));
                portable_statement!(POSTGRES_ENSURE_ROW, params).execute(self.conn)?;
            }
            row = portable_statement!(POSTGRES_LOCK_ROW, key(tenant, resource))
                .get_result::<DelayedRow>(self.conn)
                .optional()?;
            if row.is_some() || !create {
                break;
            }
        }
        if create && row.is_none() {
            return Err(diesel::result::Error::NotFound);
        }
        let now_ms = lease_statements::now_postgres(self.conn)?;
        let leases = portable_statement!(LEASES, key(tenant, resource)).load(self.conn)?;
        Ok((now_ms, row, leases))
    }

    fn next_token(&mut self) -> QueryResult<i64> {
        lease_statements::next_token_postgres(self.conn)
    }

    fn now_ms(&mut self) -> QueryResult<i64> {
        lease_statements::now_postgres(self.conn)
    }

    fn undo_exclusive(&mut self, tenant: &Tenant, grant: &Lock) -> QueryResult<bool> {
        crate::postgres::writes::undo_grant(self.conn, tenant, grant)
    }

    fn end_row(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        now_ms: i64,
    ) -> QueryResult<usize> {
        let mut params = key(tenant, resource);
        params.push(Param::BigInt(now_ms));
        portable_statement!(POSTGRES_END_ROW, params).execute(self.conn)
    }
}

/// Deletes up to `batch` shared leases whose lease ended at or before `cutoff_ms`.
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
