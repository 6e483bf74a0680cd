//! W7 on raw PostgreSQL: the statements lockd's store runs for a shared lock (its
//! `shared_locks` module, on the `shared_holders` table of migration 9), in one transaction per
//! operation holding the lock's `distributed_locks` row `FOR UPDATE`, with the decision made
//! here as lockd's domain makes it: a reader is refused only by a live writer; the row stands for
//! the live readers (owner: lockd's marker, earliest start, latest end, largest token) and ends
//! with the last of them. Writers use the exclusive compare-and-set statements of
//! `raw_postgres.rs`, which see a readers' row as another owner's live lock.
//!
//! One lockd process also keeps, in memory, who waits: a writer waiting there holds back later
//! readers, and a release wakes the waiters. [`Gate`] is the least of that a program needs (a
//! count of waiting writers and a wake-up; no FIFO), so that lockd's ratio to this row is the
//! cost of lockd itself, not of another behaviour.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;
use tokio_postgres::{Client, Statement};

/// lockd's stored owner of a row standing for shared holders (`Owner::shared_holders`).
const READERS: &str = "\u{1}shared";

/// The tenant every benchmark lock is in.
const TENANT: &str = "default";

/// The lease of every W7 grant, in ms.
const TTL_MS: i64 = 30_000;

/// lockd's shared-lock statements (`shared_locks/table.rs`), in the order [`Statements`] names
/// them.
const SQL: [&str; 10] = [
    // ensure_row: a row to lock when the lock has none, ended.
    "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms,
                                    fencing_token)
     VALUES ($1, $2, $3, 0, 0, 1) ON CONFLICT (tenant, resource) DO NOTHING",
    // lock_row
    "SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token
     FROM distributed_locks WHERE tenant = $1 AND resource = $2 FOR UPDATE",
    // now
    "SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
    // leases
    "SELECT owner, acquired_at_ms, expires_at_ms, fencing_token
     FROM shared_holders WHERE tenant = $1 AND resource = $2",
    // next_token
    "SELECT nextval('fencing_tokens')",
    // put_lease
    "INSERT INTO shared_holders (tenant, resource, owner, acquired_at_ms, expires_at_ms,
                                 fencing_token, regranted)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant, resource, owner) DO UPDATE SET
         acquired_at_ms = excluded.acquired_at_ms, expires_at_ms = excluded.expires_at_ms,
         fencing_token = excluded.fencing_token, regranted = excluded.regranted",
    // delete_lease
    "DELETE FROM shared_holders WHERE tenant = $1 AND resource = $2 AND owner = $3",
    // delete_leases
    "DELETE FROM shared_holders WHERE tenant = $1 AND resource = $2",
    // write_row
    "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms,
                                    fencing_token)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (tenant, resource) DO UPDATE SET
         owner = excluded.owner, acquired_at_ms = excluded.acquired_at_ms,
         expires_at_ms = excluded.expires_at_ms, fencing_token = excluded.fencing_token,
         regranted = (1 = 0)",
    // end_row: ended now and marked released, as a release does.
    "UPDATE distributed_locks SET acquired_at_ms = $3, expires_at_ms = $3
     WHERE tenant = $1 AND resource = $2",
];

/// The statements of [`SQL`], prepared on one connection.
pub(super) struct Statements([Statement; 10]);

/// A `shared_holders` row of the lock.
struct Lease {
    owner: String,
    acquired_at_ms: i64,
    expires_at_ms: i64,
    fencing_token: i64,
}

impl Statements {
    pub async fn prepare(client: &Client) -> io::Result<Self> {
        let mut prepared = Vec::new();
        for sql in SQL {
            prepared.push(client.prepare(sql).await.map_err(io::Error::other)?);
        }
        let prepared = prepared
            .try_into()
            .map_err(|_| io::Error::other("ten statements"))?;
        Ok(Self(prepared))
    }

    /// A shared lease of `resource` for `owner` (who holds none), unless a writer holds it.
    pub async fn acquire_shared(
        &self,
        client: &mut Client,
        resource: &str,
        owner: &str,
    ) -> io::Result<bool> {
        let [ensure_row, lock_row, now, leases, next_token, put_lease, _, delete_leases, ..] =
            &self.0;
        let tx = client.transaction().await.map_err(io::Error::other)?;
        tx.execute(ensure_row, &[&TENANT, &resource, &READERS])
            .await
            .map_err(io::Error::other)?;
        let row = tx
            .query_one(lock_row, &[&TENANT, &resource])
            .await
            .map_err(io::Error::other)?;
        let (row_owner, row_expires): (String, i64) = (row.get(1), row.get(3));
        let now: i64 = tx
            .query_one(now, &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        let mut held = read_leases(&tx, leases, resource).await?;
        let row_live = row_expires > now;
        if row_live && row_owner != READERS {
            tx.commit().await.map_err(io::Error::other)?;
            return Ok(false);
        }
        let token: i64 = tx
            .query_one(next_token, &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        if !row_live && !held.is_empty() {
            // The row ended, and every lease with it.
            tx.execute(delete_leases, &[&TENANT, &resource])
                .await
                .map_err(io::Error::other)?;
            held.clear();
        }
        let granted = Lease {
            owner: owner.to_owned(),
            acquired_at_ms: now,
            expires_at_ms: now + TTL_MS,
            fencing_token: token,
        };
        tx.execute(
            put_lease,
            &[
                &TENANT,
                &resource,
                &owner,
                &now,
                &granted.expires_at_ms,
                &token,
                &0i64,
            ],
        )
        .await
        .map_err(io::Error::other)?;
        held.retain(|lease| lease.owner != owner);
        held.push(granted);
        self.rewrite(&tx, resource, &held, now).await?;
        tx.commit().await.map_err(io::Error::other)?;
        Ok(true)
    }

    /// Ends `owner`'s shared lease of `resource`: whether it held one, and whether the lock is
    /// free now (no live lease left).
    pub async fn release_shared(
        &self,
        client: &mut Client,
        resource: &str,
        owner: &str,
    ) -> io::Result<(bool, bool)> {
        let [_, lock_row, now, leases, _, _, delete_lease, ..] = &self.0;
        let tx = client.transaction().await.map_err(io::Error::other)?;
        let row = tx
            .query_opt(lock_row, &[&TENANT, &resource])
            .await
            .map_err(io::Error::other)?;
        let now: i64 = tx
            .query_one(now, &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        let mut held = read_leases(&tx, leases, resource).await?;
        let readers_hold =
            row.is_some_and(|row| row.get::<_, String>(1) == READERS && row.get::<_, i64>(3) > now);
        let mine = held
            .iter()
            .any(|lease| lease.owner == owner && lease.expires_at_ms > now);
        if !(readers_hold && mine) {
            tx.commit().await.map_err(io::Error::other)?;
            return Ok((false, false));
        }
        tx.execute(delete_lease, &[&TENANT, &resource, &Some(owner)])
            .await
            .map_err(io::Error::other)?;
        held.retain(|lease| lease.owner != owner);
        let freed = self.rewrite(&tx, resource, &held, now).await?;
        tx.commit().await.map_err(io::Error::other)?;
        Ok((true, freed))
    }

    /// Rewrites the lock's row to stand for the live ones of `held`, or ends it when none is
    /// live; `true` when it ended.
    async fn rewrite(
        &self,
        tx: &tokio_postgres::Transaction<'_>,
        resource: &str,
        held: &[Lease],
        now: i64,
    ) -> io::Result<bool> {
        let [.., write_row, end_row] = &self.0;
        let live: Vec<&Lease> = held.iter().filter(|l| l.expires_at_ms > now).collect();
        let span = (
            live.iter().map(|l| l.acquired_at_ms).min(),
            live.iter().map(|l| l.expires_at_ms).max(),
            live.iter().map(|l| l.fencing_token).max(),
        );
        let (statement, params): (_, Vec<&(dyn tokio_postgres::types::ToSql + Sync)>) = match &span
        {
            (Some(start), Some(end), Some(token)) => (
                write_row,
                vec![&TENANT, &resource, &READERS, start, end, token],
            ),
            _ => (end_row, vec![&TENANT, &resource, &now]),
        };
        tx.execute(statement, &params)
            .await
            .map_err(io::Error::other)?;
        Ok(live.is_empty())
    }
}

async fn read_leases(
    tx: &tokio_postgres::Transaction<'_>,
    leases: &Statement,
    resource: &str,
) -> io::Result<Vec<Lease>> {
    Ok(tx
        .query(leases, &[&TENANT, &resource])
        .await
        .map_err(io::Error::other)?
        .iter()
        .map(|row| Lease {
            owner: row.get(0),
            acquired_at_ms: row.get(1),
            expires_at_ms: row.get(2),
            fencing_token: row.get(3),
        })
        .collect())
}

/// What one lockd process keeps in memory about a lock's waiters, as little of it as W7 needs:
/// how many writers wait (a reader that does not wait is refused while one does) and a wake-up
/// for the waiters when a release frees the lock.
#[derive(Debug, Default)]
pub struct Gate {
    writers_waiting: AtomicUsize,
    pub(super) freed: Notify,
}

impl Gate {
    pub(super) fn writer_waits(&self) -> bool {
        self.writers_waiting.load(Ordering::Acquire) > 0
    }

    /// Counts a waiting writer until the guard is dropped.
    pub(super) fn writer_waiting(&self) -> WaitingWriter<'_> {
        self.writers_waiting.fetch_add(1, Ordering::AcqRel);
        WaitingWriter(self)
    }
}

/// A writer counted as waiting by its [`Gate`].
pub(super) struct WaitingWriter<'g>(&'g Gate);

impl Drop for WaitingWriter<'_> {
    /// The last waiting writer gone (granted or given up), the readers held back behind it may
    /// try again.
    fn drop(&mut self) {
        if self.0.writers_waiting.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.freed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::RawPostgresSystem;
    use crate::lockd_schema::migrations;
    use crate::postgres_database::PostgresDatabase;
    use crate::workload::{LockClient, LockMode, LockSystem};

    /// On lockd's schema: readers share the lock and hold off a writer until the last of them
    /// has released; a writer holds off readers; a waiting writer holds off a reader that does
    /// not wait and is woken by the release that frees the lock. Skipped when PostgreSQL does
    /// not answer, unless `LOCKD_REQUIRE_POSTGRES=1` (CI).
    #[test]
    fn readers_share_and_a_waiting_writer_gets_in() {
        let admin = std::env::var("LOCKD_TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let Some(database) = PostgresDatabase::create(&admin, "_raw_read_write") else {
            assert!(
                std::env::var("LOCKD_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "PostgreSQL is required (LOCKD_REQUIRE_POSTGRES=1) but {admin} gave no database"
            );
            eprintln!("!!! PostgreSQL does not answer at {admin}: test skipped");
            return;
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (admin, connection) =
                tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
                    .await
                    .expect("connect");
            tokio::spawn(connection);
            for script in migrations("postgres") {
                admin.batch_execute(&script).await.expect("migrate");
            }
            let system = RawPostgresSystem::new(database.url().to_owned());
            let (shared, exclusive, now) = (LockMode::Shared, LockMode::Exclusive, Duration::ZERO);
            let mut alice = system.connect(0).await.expect("connect");
            let mut bob = system.connect(1).await.expect("connect");
            let mut carol = system.connect(2).await.expect("connect");
            assert!(alice.acquire_in("r", shared, now).await.unwrap());
            assert!(
                bob.acquire_in("r", shared, now).await.unwrap(),
                "readers share"
            );
            assert!(!carol.acquire_in("r", exclusive, now).await.unwrap());
            assert!(alice.release_in("r", shared).await.unwrap());
            assert!(
                !carol.acquire_in("r", exclusive, now).await.unwrap(),
                "bob reads"
            );
            assert!(bob.release_in("r", shared).await.unwrap());
            assert!(!bob.release_in("r", shared).await.unwrap(), "released");
            assert!(carol.acquire_in("r", exclusive, now).await.unwrap());
            assert!(
                !alice.acquire_in("r", shared, now).await.unwrap(),
                "carol writes"
            );
            assert!(carol.release_in("r", exclusive).await.unwrap());
            assert!(alice.acquire_in("r", shared, now).await.unwrap());
            let (waited, ()) = tokio::join!(
                carol.acquire_in("r", exclusive, Duration::from_secs(5)),
                async {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let overtook = bob.acquire_in("r", shared, now).await.unwrap();
                    assert!(!overtook, "a reader does not overtake a waiting writer");
                    assert!(alice.release_in("r", shared).await.unwrap());
                }
            );
            assert!(waited.unwrap(), "the release woke the writer");
            let row = admin
                .query_one("SELECT owner, fencing_token FROM distributed_locks", &[])
                .await
                .expect("read the row");
            let last = admin
                .query_one("SELECT last_value FROM fencing_tokens", &[])
                .await
                .expect("read the sequence")
                .get::<_, i64>(0);
            assert_eq!(row.get::<_, String>(0), "bench-2");
            assert_eq!(
                row.get::<_, i64>(1),
                last,
                "carol holds the last token drawn"
            );
        });
    }
}
