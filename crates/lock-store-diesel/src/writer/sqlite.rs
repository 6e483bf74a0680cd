//! The writer of a SQLite store: every write goes through this process's group-commit writer
//! thread ([`GroupCommitWriter`]), and a read that meets an ended lease reads again inside it,
//! after every write in flight (see the `sqlite` statements).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use diesel::sqlite::SqliteConnection;
use lock_domain::{
    Clock, LeaseValue, ListQuery, Lock, LockDelay, LockSet, MultiAcquireOutcome, Owner,
    RepositoryError, ResourceName, Tenant, Ttl,
};

use super::group_commit::GroupCommitWriter;
use super::wal_limit::WalLimit;
use super::{
    undo_unheard_grant, undo_unheard_permit, undo_unheard_set, undo_unheard_shared, Writer,
};
use crate::error::from_query;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::pooled::Pooled;
use crate::row::{ListedRow, LockRow};
use crate::semaphores::{self, PermitAnswer, PermitOp, SqliteHolders};
use crate::shared_locks::{self, SharedAnswer, SharedOp, SqliteShared};
use crate::sqlite::{self, Outside};

/// The group-commit writer for the writes, the pool for the reads.
pub(crate) struct SqliteWriter {
    commits: GroupCommitWriter,
    pooled: Pooled,
}

impl SqliteWriter {
    /// Starts the writer thread on `conn`, the one connection of this process that writes.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn spawn(
        conn: SqliteConnection,
        pooled: Pooled,
        clock: Arc<dyn Clock>,
        max_batch: usize,
        record_history: bool,
        wal: Option<WalLimit>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            commits: GroupCommitWriter::spawn(conn, clock, max_batch, record_history, wal)?,
            pooled,
        })
    }
}

#[async_trait]
impl Writer for SqliteWriter {
    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    ) -> Result<AcquireRow, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.commits
            .submit_undoable(
                move |c, now_ms| {
                    sqlite::acquire(
                        c,
                        &tenant,
                        &resource,
                        &owner,
                        ttl,
                        value.as_ref(),
                        lock_delay,
                        now_ms,
                    )
                    .map_err(from_query)
                },
                // A grant whose caller went away before it was answered.
                move |c, now_ms, row| {
                    let Some(row) = row else { return true };
                    undo_unheard_grant(&*events, &undo_tenant, row, |lock| {
                        sqlite::undo_grant(c, &undo_tenant, lock, now_ms)
                    })
                },
            )
            .await
    }

    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseRow, RepositoryError> {
        self.commits
            .submit(move |c, now_ms| {
                sqlite::release(c, &tenant, &resource, &owner, now_ms).map_err(from_query)
            })
            .await
    }

    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewRow, RepositoryError> {
        self.commits
            .submit(move |c, now_ms| {
                sqlite::renew(c, &tenant, &resource, &owner, ttl, value.as_ref(), now_ms)
                    .map_err(from_query)
            })
            .await
    }

    async fn record_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: i64,
    ) -> Result<bool, RepositoryError> {
        self.commits
            .submit(move |c, now_ms| {
                crate::history::expiry::record_sqlite(
                    c,
                    tenant.as_str(),
                    resource.as_str(),
                    owner.as_str(),
                    fencing_token,
                    now_ms,
                )
                .map_err(from_query)
            })
            .await
    }

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        self.commits
            .submit(move |c, now_ms| {
                sqlite::undo_grant(c, &tenant, &grant, now_ms).map_err(from_query)
            })
            .await
    }

    /// SQLite takes the oldest ended rows on its expiry index: every step starts again, and the
    /// pass goes on while a step deletes a full batch.
    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        let deleted = self
            .commits
            .submit(move |c, now_ms| {
                sqlite::sweep(c, now_ms - grace_ms, i64::from(batch)).map_err(from_query)
            })
            .await?;
        Ok(Swept {
            deleted,
            next: (deleted >= batch as usize).then_some(from),
        })
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        let (t, r) = (tenant.clone(), resource.clone());
        let outside = self
            .pooled
            .run(move |conn, now_ms| {
                sqlite::status_outside_writer(conn.sqlite()?, &t, &r, now_ms).map_err(from_query)
            })
            .await?;
        match outside {
            Outside::Answer(row) => Ok(row),
            Outside::AskTheWriter => {
                self.commits
                    .submit(move |c, now_ms| {
                        sqlite::status(c, &tenant, &resource, now_ms).map_err(from_query)
                    })
                    .await
            }
        }
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        let (t, q) = (tenant.clone(), query.clone());
        let outside = self
            .pooled
            .run(move |conn, now_ms| {
                sqlite::list_outside_writer(conn.sqlite()?, &t, &q, now_ms).map_err(from_query)
            })
            .await?;
        match outside {
            Outside::Answer(rows) => Ok(rows),
            Outside::AskTheWriter => {
                self.commits
                    .submit(move |c, now_ms| {
                        sqlite::list(c, &tenant, &query, now_ms).map_err(from_query)
                    })
                    .await
            }
        }
    }

    async fn permits(&self, tenant: Tenant, op: PermitOp) -> Result<PermitAnswer, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.commits
            .submit_undoable(
                move |conn, now_ms| {
                    let mut table = SqliteHolders { conn, now_ms };
                    Ok(semaphores::run(&mut table, &tenant, op)?)
                },
                move |conn, now_ms, answer| {
                    undo_unheard_permit(&*events, &undo_tenant, answer, |undo| {
                        let mut table = SqliteHolders { conn, now_ms };
                        Ok(semaphores::run(&mut table, &undo_tenant, undo)?)
                    })
                },
            )
            .await
    }

    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.commits
            .submit(move |c, now_ms| {
                semaphores::sweep_sqlite(c, now_ms - grace_ms, i64::from(batch)).map_err(from_query)
            })
            .await
    }

    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        _settled: i64,
    ) -> Result<usize, RepositoryError> {
        self.commits
            .submit(move |c, _| crate::history::prune_sqlite(c, before, batch).map_err(from_query))
            .await
    }

    async fn shared(&self, tenant: Tenant, op: SharedOp) -> Result<SharedAnswer, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.commits
            .submit_undoable(
                move |conn, now_ms| {
                    let mut table = SqliteShared { conn, now_ms };
                    Ok(shared_locks::run(&mut table, &tenant, op)?)
                },
                move |conn, now_ms, answer| {
                    undo_unheard_shared(&*events, &undo_tenant, answer, |undo| {
                        let mut table = SqliteShared { conn, now_ms };
                        Ok(shared_locks::run(&mut table, &undo_tenant, undo)?)
                    })
                },
            )
            .await
    }

    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.commits
            .submit_undoable(
                move |conn, now_ms| {
                    let mut table = SqliteShared { conn, now_ms };
                    Ok(shared_locks::acquire_all(&mut table, &tenant, &set)?)
                },
                move |conn, now_ms, answer| {
                    undo_unheard_set(&*events, &undo_tenant, answer, |undo| {
                        let mut table = SqliteShared {
                            conn: &mut *conn,
                            now_ms,
                        };
                        Ok(shared_locks::run(&mut table, &undo_tenant, undo)?)
                    })
                },
            )
            .await
    }

    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.commits
            .submit(move |c, now_ms| {
                shared_locks::sweep_sqlite(c, now_ms - grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }
}
