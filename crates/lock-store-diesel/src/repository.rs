//! `DieselLockRepository`: the domain's ports (`LockRepository`, `StoreHealth`, `FreedHints`)
//! over the store's writer (lock operations, see `writer`) and its pool (health, statistics).

mod admin;
mod history;
mod open;
mod semaphores;
mod shared_locks;
mod usage;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lock_domain::{
    AcquireOutcome, FreedHints, FreedLocks, LeaseValue, ListPage, ListQuery, Lock, LockDelay,
    LockRepository, Owner, PoolState, ReleaseResult, RenewResult, RepositoryError, ResourceName,
    StoreHealth, Tenant, Ttl,
};

use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::freed_notifier::FreedNotifier;
use crate::outcome::{ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::peek;
use crate::pooled::Pooled;
use crate::row::ListedRow;
use crate::writer::Writer;
use crate::{freed_listener, lock_delay, postgres, sqlite};

/// The `LockRepository` over SQLite or PostgreSQL. Cheap to clone; clones share the pool.
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
    /// PostgreSQL only: sends the hints of releases and renews, started by the first of them.
    notifier: std::sync::OnceLock<FreedNotifier>,
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
    /// changed, so that their waiting acquires look at it. Must be called inside a tokio runtime.
    fn hint_freed(&self, tenant: &Tenant, resource: &ResourceName) {
        if let Some(url) = &self.inner.postgres_url {
            self.inner
                .notifier
                .get_or_init(|| FreedNotifier::spawn(url.clone(), self.inner.connection_timeout))
                .freed(tenant, resource);
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

    /// PostgreSQL: tells every process that a grant of semaphore `name` ended or changed.
    /// Must be called inside a tokio runtime.
    fn hint_freed_permits(&self, tenant: &Tenant, name: &ResourceName) {
        if let Some(url) = &self.inner.postgres_url {
            self.inner
                .notifier
                .get_or_init(|| FreedNotifier::spawn(url.clone(), self.inner.connection_timeout))
                .freed_permits(tenant, name);
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
impl LockRepository for DieselLockRepository {
    async fn acquire_with_delay(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    ) -> Result<AcquireOutcome, RepositoryError> {
        Ok(
            match self
                .inner
                .writer
                .acquire(tenant, resource, owner, ttl, value, lock_delay)
                .await?
            {
                Some(row) => AcquireOutcome::Granted(Lock::try_from(row)?),
                None => AcquireOutcome::Held,
            },
        )
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Lock>, RepositoryError> {
        let row = self.inner.writer.status(tenant, resource).await?;
        row.map(Lock::try_from).transpose()
    }

    async fn available_at(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError> {
        let ms = self
            .inner
            .pooled
            .run(move |conn, now_ms| {
                lock_delay::available_at_ms(conn, tenant.as_str(), resource.as_str(), now_ms)
                    .map_err(from_query)
            })
            .await?;
        ms.map(|ms| {
            DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| RepositoryError::internal(format!("corrupt time {ms}")))
        })
        .transpose()
    }

    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), resource.clone());
        Ok(
            match self.inner.writer.release(tenant, resource, owner).await? {
                ReleaseRow::Released(row) => {
                    let token = Lock::try_from(row)?.fencing_token;
                    self.hint_freed(&hint_tenant, &hint_resource);
                    ReleaseResult::Released(token)
                }
                ReleaseRow::NotFound => ReleaseResult::NotFound,
                ReleaseRow::Forbidden => ReleaseResult::Forbidden,
            },
        )
    }

    async fn record_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: lock_domain::FencingToken,
    ) -> Result<bool, RepositoryError> {
        if !self.inner.record_history {
            return Ok(false);
        }
        self.inner
            .writer
            .record_expiry(tenant, resource, owner, fencing_token.value())
            .await
    }

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), grant.resource.clone());
        let undone = self.inner.writer.undo_grant(tenant, grant).await?;
        if undone {
            self.hint_freed(&hint_tenant, &hint_resource);
        }
        Ok(undone)
    }

    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError> {
        let (hint_tenant, hint_resource) = (tenant.clone(), resource.clone());
        Ok(
            match self
                .inner
                .writer
                .renew(tenant, resource, owner, ttl, value)
                .await?
            {
                RenewRow::Renewed(row) => {
                    // The lease may be shorter now: waiters elsewhere must look at its new end.
                    self.hint_freed(&hint_tenant, &hint_resource);
                    RenewResult::Renewed(Lock::try_from(row)?)
                }
                RenewRow::NotFound => RenewResult::NotFound,
                RenewRow::Forbidden => RenewResult::Forbidden,
            },
        )
    }

    /// One read for all of `locks` (see `peek`).
    async fn statuses(
        &self,
        locks: Vec<(Tenant, ResourceName)>,
    ) -> Result<Vec<Option<Lock>>, RepositoryError> {
        peek::statuses(&self.inner.pooled, self.inner.writer.as_ref(), locks).await
    }

    async fn list(&self, tenant: Tenant, query: ListQuery) -> Result<ListPage, RepositoryError> {
        let limit = query.limit;
        let listed = self
            .inner
            .writer
            .list(tenant, query)
            .await?
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
    /// SQLite: no hints (it has no notifications; waiters in other processes poll).
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        let Some(url) = &self.inner.postgres_url else {
            return Ok(None);
        };
        let subscription =
            freed_listener::subscribe(url.clone(), self.inner.connection_timeout).await?;
        Ok(Some(Box::new(subscription)))
    }
}
