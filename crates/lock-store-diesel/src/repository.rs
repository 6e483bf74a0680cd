//! `DieselLockRepository`: the `LockRepository` port over the pooled connections.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    AcquireOutcome, Clock, FreedLocks, ListPage, ListQuery, Lock, LockRepository, Owner, PoolState,
    ReleaseResult, RenewResult, RepositoryError, ResourceName, Tenant, Ttl,
};

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use tokio::sync::oneshot;

use crate::connection::{ConnectionManager, DbConnection, PoolHealth, SqliteSynchronous};
use crate::error::{from_pool, from_query};
use crate::freed_notifier::FreedNotifier;
use crate::group_commit::GroupCommitWriter;
use crate::postgres_batch::PostgresBatcher;
use crate::row::{ListedRow, LockRow};
use crate::{freed_listener, migrations, postgres, sqlite, DatabaseUrl, StoreError};

/// How to open the store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub url: DatabaseUrl,
    /// Pooled connections; `None` picks the backend's default (SQLite 4, PostgreSQL 16).
    pub pool_size: Option<u32>,
    /// How long a request waits for a pooled connection before the database counts as
    /// unavailable.
    pub connection_timeout: Duration,
    /// How long SQLite waits for another process's write lock before giving up.
    pub sqlite_busy_timeout: Duration,
    /// SQLite durability (default [`SqliteSynchronous::Full`]).
    pub sqlite_synchronous: SqliteSynchronous,
    /// How long after its expiry a row may be swept (default [`crate::SWEEP_GRACE`]). On
    /// PostgreSQL it must stay well above `statement_timeout`.
    pub sweep_grace: Duration,
    /// PostgreSQL: the server cancels statements running longer than this (default 1.5 s).
    pub statement_timeout: Duration,
    /// SQLite: the most writes committed together in one transaction (default 256).
    pub sqlite_max_batch: usize,
    /// PostgreSQL: how many connections run batched writes (see `postgres_batch`); 0 runs every
    /// write as its own statement instead (default 2).
    pub postgres_batch_connections: u32,
    /// PostgreSQL: the most writes in one batched statement (default 256).
    pub postgres_max_batch: usize,
}

impl StoreConfig {
    pub fn new(url: DatabaseUrl) -> Self {
        Self {
            url,
            pool_size: None,
            connection_timeout: Duration::from_secs(2),
            sqlite_busy_timeout: Duration::from_secs(5),
            sqlite_synchronous: SqliteSynchronous::Full,
            sweep_grace: crate::SWEEP_GRACE,
            statement_timeout: Duration::from_millis(1_500),
            sqlite_max_batch: 256,
            postgres_batch_connections: 2,
            postgres_max_batch: 256,
        }
    }

    /// PostgreSQL: how long an operation may wait, first for a pooled connection
    /// (`connection_timeout`), then, once it has one, for its statement (`statement_timeout`
    /// plus a margin), before the store gives up and reports the database unavailable. The
    /// server cancels the statement at `statement_timeout`, so by the time the caller hears 503
    /// nothing it asked for has happened. (SQLite has no such cut-off: a local file does not
    /// vanish; its writer waits at most the busy timeout.)
    pub fn deadlines(&self) -> Deadlines {
        Deadlines {
            connection: self.connection_timeout,
            statement: self.statement_timeout + Duration::from_millis(300),
        }
    }
}

/// How long a PostgreSQL operation waits, per phase (see [`StoreConfig::deadlines`]).
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub connection: Duration,
    pub statement: Duration,
}

/// The database did not answer within the operation timeout.
#[derive(Debug, thiserror::Error)]
#[error("the database did not answer within {0:?}")]
struct NoAnswer(Duration);

/// The outcome of a release, as the SQLite statements report it.
pub(crate) enum ReleaseRow {
    Released(LockRow),
    NotFound,
    Forbidden,
}

/// The outcome of a renew, as the backend statements report it.
pub(crate) enum RenewRow {
    Renewed(LockRow),
    NotFound,
    Forbidden,
}

/// The `LockRepository` over SQLite or PostgreSQL. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct DieselLockRepository {
    inner: Arc<Inner>,
}

struct Inner {
    pool: r2d2::Pool<ConnectionManager>,
    /// Makes the pool test its connections after a failure (see `PoolHealth`).
    health: PoolHealth,
    clock: Arc<dyn Clock>,
    sweep_grace: Duration,
    /// PostgreSQL only: see [`StoreConfig::deadlines`].
    deadlines: Option<Deadlines>,
    /// On SQLite, the one writer of this process (group commit); other processes' writers still
    /// meet the busy timeout.
    sqlite_writer: Option<GroupCommitWriter>,
    /// PostgreSQL only: where to open the connection that listens for released locks.
    postgres_url: Option<String>,
    /// How long opening that connection may take.
    connection_timeout: Duration,
    /// PostgreSQL only: sends the hints of releases and renews, started by the first of them.
    notifier: std::sync::OnceLock<FreedNotifier>,
    /// On PostgreSQL unless switched off, the batcher that runs acquires, releases and renews.
    postgres_batcher: Option<PostgresBatcher>,
}

impl std::fmt::Debug for DieselLockRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselLockRepository")
            .field("state", &self.inner.pool.state())
            .finish()
    }
}

impl DieselLockRepository {
    /// Opens the database, brings its schema up to date and builds the pool. Blocking: call it
    /// before serving, or from a blocking thread. `clock` is the clock on SQLite; PostgreSQL
    /// always uses its server's clock.
    ///
    /// # Errors
    /// [`StoreError::Unreachable`] (worth retrying), [`StoreError::MissingDirectory`],
    /// [`StoreError::Migration`].
    pub fn open(config: &StoreConfig, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let url = config.url.redacted();
        if let DatabaseUrl::Sqlite(path) = &config.url {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            if !dir.is_dir() {
                return Err(StoreError::MissingDirectory {
                    path: path.display().to_string(),
                    dir: dir.display().to_string(),
                });
            }
        }
        let (is_sqlite, default_size) = match config.url {
            DatabaseUrl::Sqlite(_) => (true, 4),
            DatabaseUrl::Postgres(_) => (false, 16),
        };
        // PostgreSQL pools smaller than 2 stall; SQLite has one writer anyway.
        let size = config.pool_size.unwrap_or(default_size).max(2);
        let health = PoolHealth::new(size);
        let manager = ConnectionManager::new(
            config.url.clone(),
            config.sqlite_busy_timeout,
            config.sqlite_synchronous,
            config.connection_timeout,
            config.statement_timeout,
            health.clone(),
        );
        // libpq may repeat parts of the connection string in its messages: every reason is
        // scrubbed of the URL's passwords.
        let mut first = manager.establish().map_err(|e| StoreError::Unreachable {
            url: url.clone(),
            reason: config.url.scrub(&error_chain(&e)),
        })?;
        migrations::run(&mut first).map_err(|e| StoreError::Migration {
            url: url.clone(),
            reason: config.url.scrub(&error_chain(e.as_ref())),
        })?;

        let pool = r2d2::Pool::builder()
            .max_size(size)
            .min_idle(Some(size.min(2)))
            .connection_timeout(config.connection_timeout)
            // Tests cost nothing until a statement fails for want of a database (`PoolHealth`).
            .test_on_check_out(true)
            .build(manager)
            .map_err(|e| StoreError::Unreachable {
                url: url.clone(),
                reason: config.url.scrub(&error_chain(&e)),
            })?;
        let sqlite_writer = match first {
            DbConnection::Sqlite(conn) => Some(
                GroupCommitWriter::spawn(conn, Arc::clone(&clock), config.sqlite_max_batch)
                    .map_err(|e| StoreError::Unreachable {
                        url: url.clone(),
                        reason: format!("cannot start the SQLite writer: {e}"),
                    })?,
            ),
            DbConnection::Postgres(_) => None,
        };
        let postgres_batcher = match (is_sqlite, config.postgres_batch_connections) {
            (true, _) | (false, 0) => None,
            (false, executors) => Some(
                PostgresBatcher::spawn(
                    pool.clone(),
                    health.clone(),
                    config.deadlines(),
                    executors,
                    config.postgres_max_batch,
                )
                .map_err(|e| StoreError::Unreachable {
                    url: url.clone(),
                    reason: format!("cannot start the PostgreSQL batcher: {e}"),
                })?,
            ),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                health: health.clone(),
                clock,
                sweep_grace: config.sweep_grace,
                deadlines: (!is_sqlite).then(|| config.deadlines()),
                sqlite_writer,
                postgres_url: match &config.url {
                    DatabaseUrl::Postgres(url) => Some(url.clone()),
                    DatabaseUrl::Sqlite(_) => None,
                },
                connection_timeout: config.connection_timeout,
                notifier: std::sync::OnceLock::new(),
                postgres_batcher,
            }),
        })
    }

    /// Runs a write: on SQLite through the group-commit writer (answered once its batch has
    /// committed), on PostgreSQL as one statement on a pooled connection.
    async fn write<T, S, P>(&self, on_sqlite: S, on_postgres: P) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        S: FnOnce(&mut SqliteConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
        P: FnOnce(&mut PgConnection) -> Result<T, RepositoryError> + Send + 'static,
    {
        match &self.inner.sqlite_writer {
            Some(writer) => writer.submit(on_sqlite).await,
            None => {
                self.run(move |conn, _| match conn {
                    DbConnection::Postgres(c) => on_postgres(c),
                    DbConnection::Sqlite(_) => Err(RepositoryError::internal(
                        "a SQLite connection in a store without its writer",
                    )),
                })
                .await
            }
        }
    }

    /// Runs `op` on a pooled connection on tokio's blocking pool (reads on SQLite; everything on
    /// PostgreSQL).
    async fn run<T, F>(&self, op: F) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let deadlines = inner.deadlines;
        let (connected, has_connection) = oneshot::channel::<()>();
        let work = tokio::task::spawn_blocking(move || {
            let mut conn = inner.pool.get().map_err(from_pool)?;
            let _ = connected.send(());
            let now_ms = inner.clock.now().timestamp_millis();
            let result = op(&mut conn, now_ms);
            if let Err(RepositoryError::Unavailable(_)) = &result {
                inner.health.suspect();
            }
            result
        });
        let Some(deadlines) = deadlines else {
            return work.await.map_err(RepositoryError::internal)?;
        };
        // A database that stopped answering (a black-holed connection) must not hold the
        // request: give up per phase, and let the blocking thread finish or fail on its own.
        tokio::pin!(work);
        tokio::select! {
            joined = &mut work => return joined.map_err(RepositoryError::internal)?,
            connection = tokio::time::timeout(deadlines.connection, has_connection) => {
                if connection.is_err() {
                    return Err(RepositoryError::unavailable(NoAnswer(deadlines.connection)));
                }
            }
        }
        tokio::time::timeout(deadlines.statement, work)
            .await
            .map_err(|_| RepositoryError::unavailable(NoAnswer(deadlines.statement)))?
            .map_err(RepositoryError::internal)?
    }
}

impl DieselLockRepository {
    /// PostgreSQL: tells the other processes (and this one) that the lease on `resource` ended or
    /// changed, so that their waiting acquires look at it. Must be called inside a tokio runtime.
    fn hint_freed(&self, tenant: &Tenant, resource: &ResourceName) {
        if let Some(url) = &self.inner.postgres_url {
            self.inner
                .notifier
                .get_or_init(|| FreedNotifier::spawn(url.clone(), self.inner.connection_timeout))
                .freed(tenant, resource);
        }
    }

    /// Deletes at most `batch` rows whose lease ended more than the sweep grace ago and
    /// returns how many it deleted. Live locks and recently ended ones are never touched; fencing
    /// tokens do not depend on the rows, so they keep increasing across sweeps.
    ///
    /// # Errors
    /// [`RepositoryError`] when the database fails.
    pub async fn sweep_expired(&self, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = self.inner.sweep_grace.as_millis() as i64;
        self.write(
            move |c, now_ms| {
                sqlite::sweep(c, now_ms - grace_ms, i64::from(batch)).map_err(from_query)
            },
            move |c| postgres::sweep(c, grace_ms, i64::from(batch)).map_err(from_query),
        )
        .await
    }
}

#[async_trait]
impl LockRepository for DieselLockRepository {
    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
    ) -> Result<AcquireOutcome, RepositoryError> {
        let row = if let Some(batcher) = &self.inner.postgres_batcher {
            batcher.acquire(tenant, resource, owner, ttl).await?
        } else {
            let (t, r, o) = (tenant.clone(), resource.clone(), owner.clone());
            self.write(
                move |c, now_ms| {
                    sqlite::acquire(c, &tenant, &resource, &owner, ttl, now_ms).map_err(from_query)
                },
                move |c| postgres::acquire(c, &t, &r, &o, ttl).map_err(from_query),
            )
            .await?
        };
        Ok(match row {
            Some(row) => AcquireOutcome::Granted(Lock::try_from(row)?),
            None => AcquireOutcome::Held,
        })
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Lock>, RepositoryError> {
        self.run(move |conn, now_ms| {
            match conn {
                DbConnection::Sqlite(c) => sqlite::status(c, &tenant, &resource, now_ms),
                DbConnection::Postgres(c) => postgres::status(c, &tenant, &resource),
            }
            .map_err(from_query)?
            .map(Lock::try_from)
            .transpose()
        })
        .await
    }

    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), resource.clone());
        let result = if let Some(batcher) = &self.inner.postgres_batcher {
            batcher.release(tenant, resource, owner).await
        } else {
            let (t, r, o) = (tenant.clone(), resource.clone(), owner.clone());
            self.write(
                move |c, now_ms| match sqlite::release(c, &tenant, &resource, &owner, now_ms)
                    .map_err(from_query)?
                {
                    ReleaseRow::Released(row) => {
                        Ok(ReleaseResult::Released(Lock::try_from(row)?.fencing_token))
                    }
                    ReleaseRow::NotFound => Ok(ReleaseResult::NotFound),
                    ReleaseRow::Forbidden => Ok(ReleaseResult::Forbidden),
                },
                move |c| postgres::release(c, &t, &r, &o),
            )
            .await
        };
        if let Ok(ReleaseResult::Released(_)) = &result {
            self.hint_freed(&hint_tenant, &hint_resource);
        }
        result
    }

    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
    ) -> Result<RenewResult, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), resource.clone());
        let row = if let Some(batcher) = &self.inner.postgres_batcher {
            batcher.renew(tenant, resource, owner, ttl).await?
        } else {
            let (t, r, o) = (tenant.clone(), resource.clone(), owner.clone());
            self.write(
                move |c, now_ms| {
                    sqlite::renew(c, &tenant, &resource, &owner, ttl, now_ms).map_err(from_query)
                },
                move |c| postgres::renew(c, &t, &r, &o, ttl),
            )
            .await?
        };
        Ok(match row {
            RenewRow::Renewed(row) => {
                // The lease may be shorter now: waiters elsewhere must look at its new end.
                self.hint_freed(&hint_tenant, &hint_resource);
                RenewResult::Renewed(Lock::try_from(row)?)
            }
            RenewRow::NotFound => RenewResult::NotFound,
            RenewRow::Forbidden => RenewResult::Forbidden,
        })
    }

    async fn ping(&self) -> Result<(), RepositoryError> {
        self.run(|conn, _| {
            use diesel::RunQueryDsl;
            match conn {
                DbConnection::Sqlite(c) => diesel::sql_query("SELECT 1").execute(c),
                DbConnection::Postgres(c) => diesel::sql_query("SELECT 1").execute(c),
            }
            .map(drop)
            .map_err(from_query)
        })
        .await
    }

    async fn list(&self, tenant: Tenant, query: ListQuery) -> Result<ListPage, RepositoryError> {
        let limit = query.limit;
        let rows = self
            .run(move |conn, now_ms| {
                match conn {
                    DbConnection::Sqlite(c) => sqlite::list(c, &tenant, &query, now_ms),
                    DbConnection::Postgres(c) => postgres::list(c, &tenant, &query),
                }
                .map_err(from_query)
            })
            .await?;
        let listed = rows
            .into_iter()
            .map(ListedRow::into_listed)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListPage::from_overfetch(listed, limit))
    }

    async fn count_live(&self) -> Result<u64, RepositoryError> {
        let count = self
            .run(|conn, now_ms| {
                match conn {
                    DbConnection::Sqlite(c) => sqlite::count_live(c, now_ms),
                    DbConnection::Postgres(c) => postgres::count_live(c),
                }
                .map_err(from_query)
            })
            .await?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    async fn count_expired_takeovers(&self) -> Result<u64, RepositoryError> {
        let count = self
            .run(|conn, _| {
                match conn {
                    DbConnection::Sqlite(c) => sqlite::count_expired_takeovers(c),
                    DbConnection::Postgres(c) => postgres::count_expired_takeovers(c),
                }
                .map_err(from_query)
            })
            .await?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    /// The reading pool (on SQLite the group-commit writer's own connection is not in it: it is
    /// always open and busy whenever writes are queued).
    fn pool_state(&self) -> Option<PoolState> {
        let state = self.inner.pool.state();
        Some(PoolState {
            in_use: state.connections.saturating_sub(state.idle_connections),
            idle: state.idle_connections,
        })
    }

    /// PostgreSQL: `LISTEN` on the channel every release and renew notifies (`freed_notifier`). SQLite: no hints (it
    /// has no notifications; waiters in other processes poll).
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        let Some(url) = &self.inner.postgres_url else {
            return Ok(None);
        };
        let subscription =
            freed_listener::subscribe(url.clone(), self.inner.connection_timeout).await?;
        Ok(Some(Box::new(subscription)))
    }
}

/// An error and its sources on one line, for start-up messages.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
