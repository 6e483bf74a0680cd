//! `DieselLockRepository`: the `LockRepository` port over the pooled connections.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    AcquireOutcome, Clock, FreedHints, FreedLocks, ListPage, ListQuery, Lock, LockRepository,
    Owner, PoolState, ReleaseResult, RenewResult, RepositoryError, ResourceName, StoreHealth,
    Tenant, Ttl,
};

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;

use crate::config::StoreConfig;
use crate::connection::{ConnectionManager, DbConnection, PoolHealth};
use crate::error::from_query;
use crate::freed_notifier::FreedNotifier;
use crate::group_commit::GroupCommitWriter;
use crate::outcome::{ReleaseRow, RenewRow};
use crate::pooled::Pooled;
use crate::postgres_batch::PostgresBatcher;
use crate::row::{ListedRow, LockRow};
use crate::{freed_listener, migrations, postgres, sqlite, DatabaseUrl, StoreError};

/// The `LockRepository` over SQLite or PostgreSQL. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct DieselLockRepository {
    inner: Arc<Inner>,
}

struct Inner {
    /// Reads, and on PostgreSQL the writes that do not go through the batcher.
    pooled: Pooled,
    sweep_grace: Duration,
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
            .field("state", &self.inner.pooled.pool().state())
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
        migrations::run(&mut first, config.sqlite_busy_timeout).map_err(|e| {
            StoreError::Migration {
                url: url.clone(),
                reason: config.url.scrub(&error_chain(e.as_ref())),
            }
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
                pooled: Pooled::new(
                    pool,
                    health,
                    clock,
                    (!is_sqlite).then(|| config.deadlines()),
                ),
                sweep_grace: config.sweep_grace,
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
                self.inner
                    .pooled
                    .run(move |conn, _| match conn {
                        DbConnection::Postgres(c) => on_postgres(c),
                        DbConnection::Sqlite(_) => Err(RepositoryError::internal(
                            "a SQLite connection in a store without its writer",
                        )),
                    })
                    .await
            }
        }
    }

    /// SQLite: runs the read `op` inside the writer, after every write in flight (see `sqlite`).
    async fn read_in_writer<T, F>(&self, op: F) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
    {
        match &self.inner.sqlite_writer {
            Some(writer) => writer.submit(op).await,
            None => Err(RepositoryError::internal(
                "a SQLite read for the writer in a store without one",
            )),
        }
    }
}

/// Undoes a grant that nobody will hear of (its caller gave up or went away before it was
/// answered) with `undo`, and audits it.
pub(crate) fn undo_unheard_grant(
    tenant: &Tenant,
    row: LockRow,
    undo: impl FnOnce(&Lock) -> diesel::QueryResult<bool>,
) {
    let lock = match Lock::try_from(row) {
        Ok(lock) => lock,
        Err(error) => {
            tracing::error!(%error, "a grant nobody heard of could not be read back; it expires with its lease");
            return;
        }
    };
    match undo(&lock) {
        Ok(undone) => tracing::warn!(
            target: "lockd::audit",
            event = if undone { "grant_undone" } else { "grant_undo_skipped" },
            tenant = %tenant,
            resource = %lock.resource,
            owner = %lock.owner,
            fencing_token = lock.fencing_token.value(),
            reason = "the grant was made after its caller had gone",
        ),
        Err(error) => {
            tracing::warn!(%error, resource = %lock.resource.as_str(), "a grant made after its caller had gone could not be undone; it expires with its lease")
        }
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
        } else if let Some(writer) = &self.inner.sqlite_writer {
            let undo_tenant = tenant.clone();
            writer
                .submit_undoable(
                    move |c, now_ms| {
                        sqlite::acquire(c, &tenant, &resource, &owner, ttl, now_ms)
                            .map_err(from_query)
                    },
                    // A grant whose caller went away before it was answered.
                    move |c, now_ms, row| {
                        let Some(row) = row else { return };
                        undo_unheard_grant(&undo_tenant, row, |lock| {
                            sqlite::undo_grant(c, &undo_tenant, lock, now_ms)
                        });
                    },
                )
                .await?
        } else {
            let undo_tenant = tenant.clone();
            self.inner
                .pooled
                .run_undoable(
                    move |conn, _| match conn {
                        DbConnection::Postgres(c) => {
                            postgres::acquire(c, &tenant, &resource, &owner, ttl)
                                .map_err(from_query)
                        }
                        DbConnection::Sqlite(_) => Err(RepositoryError::internal(
                            "a SQLite connection in a store without its writer",
                        )),
                    },
                    // A grant that committed after its caller heard 503 (a commit is not covered
                    // by `statement_timeout`) or went away.
                    move |conn, row| {
                        let (Some(row), DbConnection::Postgres(c)) = (row, conn) else {
                            return;
                        };
                        undo_unheard_grant(&undo_tenant, row, |lock| {
                            postgres::undo_grant(c, &undo_tenant, lock)
                        });
                    },
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
        let (t, r) = (tenant.clone(), resource.clone());
        let row = match self
            .inner
            .pooled
            .run(move |conn, now_ms| {
                match conn {
                    DbConnection::Sqlite(c) => sqlite::status_outside_writer(c, &t, &r, now_ms),
                    DbConnection::Postgres(c) => {
                        postgres::status(c, &t, &r).map(sqlite::Outside::Answer)
                    }
                }
                .map_err(from_query)
            })
            .await?
        {
            sqlite::Outside::Answer(row) => row,
            sqlite::Outside::AskTheWriter => {
                self.read_in_writer(move |c, now_ms| {
                    sqlite::status(c, &tenant, &resource, now_ms).map_err(from_query)
                })
                .await?
            }
        };
        row.map(Lock::try_from).transpose()
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

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), grant.resource.clone());
        let (t, g) = (tenant.clone(), grant.clone());
        let undone = self
            .write(
                move |c, now_ms| sqlite::undo_grant(c, &tenant, &grant, now_ms).map_err(from_query),
                move |c| postgres::undo_grant(c, &t, &g).map_err(from_query),
            )
            .await;
        if let Ok(true) = undone {
            self.hint_freed(&hint_tenant, &hint_resource);
        }
        undone
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

    async fn list(&self, tenant: Tenant, query: ListQuery) -> Result<ListPage, RepositoryError> {
        let limit = query.limit;
        let (t, q) = (tenant.clone(), query.clone());
        let rows = match self
            .inner
            .pooled
            .run(move |conn, now_ms| match conn {
                DbConnection::Sqlite(c) => {
                    sqlite::list_outside_writer(c, &t, &q, now_ms).map_err(from_query)
                }
                DbConnection::Postgres(c) => postgres::list(c, &t, &q).map(sqlite::Outside::Answer),
            })
            .await?
        {
            sqlite::Outside::Answer(rows) => rows,
            sqlite::Outside::AskTheWriter => {
                self.read_in_writer(move |c, now_ms| {
                    sqlite::list(c, &tenant, &query, now_ms).map_err(from_query)
                })
                .await?
            }
        };
        let listed = rows
            .into_iter()
            .map(ListedRow::into_listed)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListPage::from_overfetch(listed, limit))
    }
}

#[async_trait]
impl StoreHealth for DieselLockRepository {
    async fn ping(&self) -> Result<(), RepositoryError> {
        self.inner
            .pooled
            .run(|conn, _| {
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

    async fn count_live(&self) -> Result<u64, RepositoryError> {
        let count = self
            .inner
            .pooled
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
            .inner
            .pooled
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
        let state = self.inner.pooled.pool().state();
        Some(PoolState {
            in_use: state.connections.saturating_sub(state.idle_connections),
            idle: state.idle_connections,
        })
    }
}

#[async_trait]
impl FreedHints for DieselLockRepository {
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
