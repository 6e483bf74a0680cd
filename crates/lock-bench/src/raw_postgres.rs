//! The raw PostgreSQL ceiling: what a program gets from PostgreSQL with one statement, and so one
//! commit, per lock operation. It is a load generator, not lockd: this benchmark's own minimal
//! compare-and-set statements, of the same shape as lockd's (one statement per acquire and per
//! release on lockd's table `distributed_locks`, as lockd's migrations create it, with its
//! indexes and trigger; the database server's clock; the fencing token drawn from lockd's
//! `fencing_tokens` sequence in the acquire; a release that ends the lease and keeps the row),
//! prepared once per connection and sent through tokio-postgres, one connection per client,
//! synchronous commit on (the server's default), no HTTP in between. lockd's own statements stay
//! private to its store (and batch many requests into one statement); these are simpler (no
//! row lock before reading the clock, no re-grant that keeps the token, no undo mark).

mod read_write;

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls, Statement};

use self::read_write::{Gate, Statements};
use crate::workload::{LockClient, LockMode, LockSystem};

/// The database server's clock now, in epoch milliseconds.
macro_rules! now_ms {
    () => {
        "(SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT AS ms) AS n"
    };
}

/// Takes the lock when it is free, when its lease has ended, or when it is the caller's own, with
/// a new fencing token. No row when another owner's lease is live. Binds: tenant, resource,
/// owner, TTL (ms).
const ACQUIRE: &str = concat!(
    "INSERT INTO distributed_locks AS l (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
SELECT $1, $2, $3, n.ms, n.ms + $4, nextval('fencing_tokens') FROM ",
    now_ms!(),
    "
ON CONFLICT (tenant, resource) DO UPDATE SET
    owner = EXCLUDED.owner,
    acquired_at_ms = EXCLUDED.acquired_at_ms,
    expires_at_ms = EXCLUDED.expires_at_ms,
    fencing_token = nextval('fencing_tokens')
WHERE l.expires_at_ms <= EXCLUDED.acquired_at_ms OR l.owner = EXCLUDED.owner
RETURNING l.fencing_token"
);

/// Ends the caller's live lease (the row stays, its lease ended now). Binds: tenant, resource,
/// owner.
const RELEASE: &str = concat!(
    "UPDATE distributed_locks AS l SET acquired_at_ms = n.ms, expires_at_ms = n.ms FROM ",
    now_ms!(),
    "
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.expires_at_ms > n.ms
RETURNING l.fencing_token"
);

/// W6, in one transaction per acquire as lockd does it on PostgreSQL: a transaction-level
/// advisory lock on the semaphore, the clock, the permits of its live holders, and the grant when
/// there is room (a new fencing token from lockd's sequence). Binds: tenant, name.
const LOCK_SEMAPHORE: &str =
    "SELECT pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2::text, 13))";

/// The clock and the permits the live holders of (`$1`, `$2`) take.
const PERMITS_IN_USE: &str = concat!(
    "SELECT n.ms, COALESCE((SELECT SUM(permits) FROM semaphore_holders
        WHERE tenant = $1::text AND name = $2::text AND expires_at_ms > n.ms), 0)::BIGINT FROM ",
    now_ms!()
);

/// A grant of one permit of limit `$4` to `$3` from `$5` for `$6` ms, replacing the owner's
/// ended row if there is one.
const GRANT_PERMIT: &str = "\
INSERT INTO semaphore_holders (tenant, name, owner, permits, semaphore_limit, acquired_at_ms,
                               expires_at_ms, fencing_token, regranted, value)
VALUES ($1::text, $2::text, $3::text, 1, $4::bigint, $5::bigint, $5::bigint + $6::bigint,
        nextval('fencing_tokens'), 0, NULL)
ON CONFLICT (tenant, name, owner) DO UPDATE SET
    acquired_at_ms = EXCLUDED.acquired_at_ms, expires_at_ms = EXCLUDED.expires_at_ms,
    fencing_token = EXCLUDED.fencing_token, semaphore_limit = EXCLUDED.semaphore_limit";

/// Ends the caller's grant. Binds: tenant, name, owner.
const RELEASE_PERMIT: &str =
    "DELETE FROM semaphore_holders WHERE tenant = $1 AND name = $2 AND owner = $3 RETURNING 1";

pub struct RawPostgresSystem {
    url: String,
    /// W7's waiting writers and wake-ups, shared by the clients as by one lockd's requests.
    gate: Arc<Gate>,
}

impl RawPostgresSystem {
    pub fn new(url: String) -> Self {
        Self {
            url,
            gate: Arc::default(),
        }
    }
}

pub struct RawPostgresClient {
    client: Client,
    acquire: Statement,
    release: Statement,
    owner: String,
    /// W6's statements, prepared on first use.
    permits: Option<[Statement; 4]>,
    /// W7's statements, prepared on first use.
    shared: Option<Statements>,
    gate: Arc<Gate>,
}

impl LockSystem for RawPostgresSystem {
    type Client = RawPostgresClient;

    async fn connect(&self, client: usize) -> io::Result<RawPostgresClient> {
        let (connection_client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(connection);
        let acquire = connection_client
            .prepare(ACQUIRE)
            .await
            .map_err(io::Error::other)?;
        let release = connection_client
            .prepare(RELEASE)
            .await
            .map_err(io::Error::other)?;
        Ok(RawPostgresClient {
            client: connection_client,
            acquire,
            release,
            owner: format!("bench-{client}"),
            permits: None,
            shared: None,
            gate: Arc::clone(&self.gate),
        })
    }
}

impl LockClient for RawPostgresClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        let rows = self
            .client
            .query(
                &self.acquire,
                &[&"default", &resource, &self.owner, &30_000i64],
            )
            .await
            .map_err(io::Error::other)?;
        Ok(rows.len() == 1)
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        let rows = self
            .client
            .query(&self.release, &[&"default", &resource, &self.owner])
            .await
            .map_err(io::Error::other)?;
        Ok(rows.len() == 1)
    }

    /// As one lockd process serves it: a reader does not overtake a waiting writer (refused at
    /// once without a wait, else waiting behind it); a waiting acquire tries again whenever a
    /// release frees the lock.
    async fn acquire_in(
        &mut self,
        resource: &str,
        mode: LockMode,
        wait: Duration,
    ) -> io::Result<bool> {
        let deadline = Instant::now() + wait;
        let gate = Arc::clone(&self.gate);
        let _counted =
            (mode == LockMode::Exclusive && !wait.is_zero()).then(|| gate.writer_waiting());
        loop {
            let freed = gate.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let held_back = mode == LockMode::Shared && gate.writer_waits();
            if !held_back && self.try_in(resource, mode).await? {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let _ = tokio::time::timeout(left, freed).await;
        }
    }

    async fn release_in(&mut self, resource: &str, mode: LockMode) -> io::Result<bool> {
        let (released, freed) = match mode {
            LockMode::Exclusive => {
                let released = self.release(resource).await?;
                (released, released)
            }
            LockMode::Shared => {
                self.shared_statements().await?;
                let (shared, client, owner) = (&self.shared, &mut self.client, &self.owner);
                let statements = shared.as_ref().expect("prepared above");
                statements.release_shared(client, resource, owner).await?
            }
        };
        if freed {
            self.gate.freed.notify_waiters();
        }
        Ok(released)
    }

    async fn acquire_permit(&mut self, semaphore: &str, limit: u32) -> io::Result<bool> {
        let [lock, in_use, grant, _] = self.permit_statements().await?.clone();
        let transaction = self.client.transaction().await.map_err(io::Error::other)?;
        transaction
            .execute(&lock, &[&"default", &semaphore])
            .await
            .map_err(io::Error::other)?;
        let row = transaction
            .query_one(&in_use, &[&"default", &semaphore])
            .await
            .map_err(io::Error::other)?;
        let (now, used): (i64, i64) = (row.get(0), row.get(1));
        let granted = used < i64::from(limit);
        if granted {
            transaction
                .execute(
                    &grant,
                    &[
                        &"default",
                        &semaphore,
                        &self.owner,
                        &i64::from(limit),
                        &now,
                        &30_000i64,
                    ],
                )
                .await
                .map_err(io::Error::other)?;
        }
        transaction.commit().await.map_err(io::Error::other)?;
        Ok(granted)
    }

    async fn release_permit(&mut self, semaphore: &str) -> io::Result<bool> {
        let release = self.permit_statements().await?[3].clone();
        let rows = self
            .client
            .query(&release, &[&"default", &semaphore, &self.owner])
            .await
            .map_err(io::Error::other)?;
        Ok(rows.len() == 1)
    }
}

impl RawPostgresClient {
    async fn shared_statements(&mut self) -> io::Result<&Statements> {
        if self.shared.is_none() {
            self.shared = Some(Statements::prepare(&self.client).await?);
        }
        Ok(self.shared.as_ref().expect("prepared just now"))
    }

    /// One try at `resource` in `mode`, as the store decides it.
    async fn try_in(&mut self, resource: &str, mode: LockMode) -> io::Result<bool> {
        match mode {
            LockMode::Exclusive => self.acquire(resource).await,
            LockMode::Shared => {
                self.shared_statements().await?;
                let (shared, client, owner) = (&self.shared, &mut self.client, &self.owner);
                let statements = shared.as_ref().expect("prepared above");
                statements.acquire_shared(client, resource, owner).await
            }
        }
    }

    async fn permit_statements(&mut self) -> io::Result<&[Statement; 4]> {
        if self.permits.is_none() {
            let mut prepared = Vec::new();
            for sql in [LOCK_SEMAPHORE, PERMITS_IN_USE, GRANT_PERMIT, RELEASE_PERMIT] {
                prepared.push(self.client.prepare(sql).await.map_err(io::Error::other)?);
            }
            let prepared: [Statement; 4] = prepared
                .try_into()
                .map_err(|_| io::Error::other("four statements"))?;
            self.permits = Some(prepared);
        }
        Ok(self.permits.as_ref().expect("prepared just now"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockd_schema::migrations;
    use crate::postgres_database::PostgresDatabase;

    /// On lockd's schema, the statements take a free lock, refuse another owner's, release only
    /// the owner's, and draw a new fencing token for each grant. Skipped when PostgreSQL does not
    /// answer, unless `LOCKD_REQUIRE_POSTGRES=1` (CI).
    #[test]
    fn the_statements_are_a_compare_and_set_on_lockds_schema() {
        let admin = std::env::var("LOCKD_TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let Some(database) = PostgresDatabase::create(&admin, "_raw_statements") else {
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
            let (admin, connection) = tokio_postgres::connect(database.url(), NoTls)
                .await
                .expect("connect");
            tokio::spawn(connection);
            for script in migrations("postgres") {
                admin.batch_execute(&script).await.expect("migrate");
            }
            let system = RawPostgresSystem::new(database.url().to_owned());
            let mut alice = system.connect(0).await.expect("connect");
            let mut bob = system.connect(1).await.expect("connect");
            assert!(alice.acquire("r").await.expect("acquire"));
            assert!(!bob.acquire("r").await.expect("acquire"), "alice holds it");
            assert!(!bob.release("r").await.expect("release"), "not bob's lock");
            assert!(alice.release("r").await.expect("release"));
            assert!(!alice.release("r").await.expect("release"), "released");
            assert!(bob.acquire("r").await.expect("acquire"));
            let tokens: Vec<i64> = admin
                .query("SELECT fencing_token FROM distributed_locks", &[])
                .await
                .expect("read the token")
                .iter()
                .map(|row| row.get(0))
                .collect();
            let first = admin
                .query_one("SELECT last_value FROM fencing_tokens", &[])
                .await
                .expect("read the sequence")
                .get::<_, i64>(0);
            assert_eq!(tokens, [first], "bob holds the last token drawn");
            assert!(first >= 2, "a token per grant");
        });
    }
}
