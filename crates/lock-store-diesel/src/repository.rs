//! `DieselLockRepository`: the domain's ports (`LeaseStore` in `leases.rs`, `HistoryRepository`,
//! `LeaseUsage`, `StoreHealth`, `FreedHints`) over the store's writer (every lease operation,
//! see `writer`) and its pool (health, statistics).

mod history;
mod leases;
mod open;
mod sessions;
mod usage;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    FreedHints, FreedLocks, PoolState, RepositoryError, ResourceName, StoreHealth, Tenant,
};

use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::freed_notifier::FreedNotifier;
use crate::outcome::{SweepPosition, Swept};
use crate::pooled::Pooled;
use crate::writer::Writer;
use crate::{freed_listener, postgres, sqlite};

/// The lease store over SQLite or PostgreSQL. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct DieselLockRepository {
    inner: Arc<Inner>,
}

struct Inner {
    /// The lock operations (see `writer`).
    writer: Box<dyn Writer>,
    /// Health and statistics.
    pooled: Pooled,
    sweep_grace: Duration,
    /// PostgreSQL only: where to open the connection that listens for released locks.
    postgres_url: Option<String>,
    /// How long opening that connection may take.
    connection_timeout: Duration,
    /// PostgreSQL only: sends the hints of releases, renews and undone grants, started by the
    /// first of them.
    notifier: Option<Arc<FreedNotifier>>,
    /// PostgreSQL only: which history ids are final (SQLite's all are).
    history_frontier: crate::history::PostgresFrontier,
    /// Whether this process records history (one that does not must not mark an expiry as
    /// recorded).
    record_history: bool,
}

impl std::fmt::Debug for DieselLockRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselLockRepository")
            .field("state", &self.inner.pooled.pool().state())
            .finish()
    }
}

impl DieselLockRepository {
    /// PostgreSQL: tells the other processes (and this one) that the lease on `resource` ended or
    /// changed, so that their waiting acquires look at it.
    fn hint_freed(&self, tenant: &Tenant, resource: &ResourceName) {
        if let Some(notifier) = &self.inner.notifier {
            notifier.freed(tenant, resource);
        }
    }

    /// Deletes at most `batch` semaphore rows whose lease ended more than the sweep grace ago,
    /// and says how many it deleted (a full batch: call again).
    ///
    /// # Errors
    /// [`RepositoryError`] when the database fails.
    pub async fn sweep_ended_permits(&self, batch: u32) -> Result<usize, RepositoryError> {
        self.inner
            .writer
            .sweep_permits(self.inner.sweep_grace, batch)
            .await
    }

    /// Deletes at most `batch` shared-lock leases that ended more than the sweep grace ago, and
    /// says how many it deleted (a full batch: call again).
    ///
    /// # Errors
    /// [`RepositoryError`] when the database fails.
    pub async fn sweep_ended_shared(&self, batch: u32) -> Result<usize, RepositoryError> {
        self.inner
            .writer
            .sweep_shared(self.inner.sweep_grace, batch)
            .await
    }

    /// Ends at most `batch` sessions that ran out (and whose lock-delay is over) more than the
    /// sweep grace ago, with every hold they had, and says how many it ended (a full batch:
    /// call again).
    ///
    /// # Errors
    /// [`RepositoryError`] when the database fails.
    pub async fn sweep_run_out_sessions(&self, batch: u32) -> Result<usize, RepositoryError> {
        self.inner
            .writer
            .sweep_sessions(self.inner.sweep_grace, batch)
            .await
    }

    /// PostgreSQL: tells every process that a grant of semaphore `name` ended or changed.
    fn hint_freed_permits(&self, tenant: &Tenant, name: &ResourceName) {
        if let Some(notifier) = &self.inner.notifier {
            notifier.freed_permits(tenant, name);
        }
    }

    /// One step of a sweep pass that starts at `from`: deletes at most `batch` rows whose lease
    /// ended more than the sweep grace ago, and says how many it deleted and where the pass goes
    /// on ([`Swept::next`], `None` once the whole table has been looked at). Live locks and
    /// recently ended ones are never touched, nor rows a concurrent write holds locked (a later
    /// pass takes them); fencing tokens do not depend on the rows, so they keep increasing
    /// across sweeps.
    ///
    /// # Errors
    /// [`RepositoryError`] when the database fails.
    pub async fn sweep_expired(
        &self,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        self.inner
            .writer
            .sweep(self.inner.sweep_grace, batch, from)
            .await
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

    async fn count_live_sessions(&self) -> Result<u64, RepositoryError> {
        self.inner.writer.count_live_sessions().await
    }

    async fn count_live(&self) -> Result<u64, RepositoryError> {
        let count = self
            .inner
            .pooled
            .run(|conn, now_ms| {
                match conn {
                    DbConnection::Sqlite(c) => sqlite::count_live(c, now_ms),
                    DbConnection::Postgres(c) => postgres::reads::count_live(c),
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
                    DbConnection::Postgres(c) => postgres::reads::count_expired_takeovers(c),
                }
                .map_err(from_query)
            })
            .await?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<lock_domain::ExpiredHold>, RepositoryError> {
        self.inner.writer.take_expired_holds(limit).await
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
    /// PostgreSQL: `LISTEN` on the channel every release and renew notifies (`freed_notifier`).
    /// SQLite: a [`lock_domain::Freed::Unknown`] after each commit of another process on the
    /// file, as the writer thread sees them (`foreign_commits`).
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        let Some(url) = &self.inner.postgres_url else {
            return Ok(self.inner.writer.subscribe_freed());
        };
        let subscription =
            freed_listener::subscribe(url.clone(), self.inner.connection_timeout).await?;
        Ok(subscription.map(|subscription| Box::new(subscription) as Box<dyn FreedLocks>))
    }
}
