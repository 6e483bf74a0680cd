//! The PostgreSQL writer without batching (`postgres_batch_connections = 0`): each operation
//! runs on a pooled connection of its own, within the caller's deadlines ([`Pooled`]). The
//! batcher runs everything but acquires, releases and renews this way too.

use std::sync::Arc;

use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    LeaseValue, ListQuery, Lock, LockDelay, LockSet, MultiAcquireOutcome, Owner, RepositoryError,
    ResourceName, Tenant, Ttl,
};

use super::{
    undo_unheard_grant, undo_unheard_permit, undo_unheard_set, undo_unheard_shared, Writer,
};
use crate::error::from_query;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::pooled::Pooled;
use crate::postgres::{reads, writes};
use crate::row::{ListedRow, LockRow};
use crate::semaphores::{self, PermitAnswer, PermitError, PermitOp, PostgresHolders};
use crate::shared_locks::{self, PostgresShared, SharedAnswer, SharedOp};

/// Runs every operation on a pooled connection.
pub(crate) struct PostgresDirect {
    pooled: Pooled,
}

impl PostgresDirect {
    pub(crate) fn new(pooled: Pooled) -> Self {
        Self { pooled }
    }

    pub(crate) fn pooled(&self) -> &Pooled {
        &self.pooled
    }
}

#[async_trait]
impl Writer for PostgresDirect {
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
        self.pooled
            .run_undoable(
                move |conn, _| {
                    writes::acquire(
                        conn.postgres()?,
                        &tenant,
                        &resource,
                        &owner,
                        ttl,
                        value,
                        lock_delay,
                    )
                    .map_err(from_query)
                },
                // A grant that committed after its caller heard 503 (a commit is not covered
                // by `statement_timeout`) or went away.
                move |conn, row| {
                    let (Some(row), Ok(c)) = (row, conn.postgres()) else {
                        return;
                    };
                    undo_unheard_grant(&*events, &undo_tenant, row, |lock| {
                        writes::undo_grant(c, &undo_tenant, lock)
                    });
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
        self.pooled
            .run(move |conn, _| writes::release(conn.postgres()?, &tenant, &resource, &owner))
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
        self.pooled
            .run(move |conn, _| {
                writes::renew(conn.postgres()?, &tenant, &resource, &owner, ttl, value)
            })
            .await
    }

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                writes::undo_grant(conn.postgres()?, &tenant, &grant).map_err(from_query)
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
        self.pooled
            .run(move |conn, _| {
                crate::history::expiry::record_postgres(
                    conn.postgres()?,
                    tenant.as_str(),
                    resource.as_str(),
                    owner.as_str(),
                    fencing_token,
                )
                .map_err(from_query)
            })
            .await
    }

    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                writes::sweep(conn.postgres()?, grace_ms, batch, from).map_err(from_query)
            })
            .await
    }

    /// PostgreSQL's status waits for a writer in flight on an ended row itself.
    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                reads::status(conn.postgres()?, &tenant, &resource).map_err(from_query)
            })
            .await
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        self.pooled
            .run(move |conn, _| reads::list(conn.postgres()?, &tenant, &query))
            .await
    }

    /// In a transaction of its own, under the semaphore's advisory lock.
    async fn permits(&self, tenant: Tenant, op: PermitOp) -> Result<PermitAnswer, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.pooled
            .run_undoable(
                move |conn, _| Ok(run_permits(conn.postgres()?, &tenant, op)?),
                // A grant that committed after its caller heard 503 or went away.
                move |conn, answer| {
                    let Ok(c) = conn.postgres() else { return };
                    undo_unheard_permit(&*events, &undo_tenant, answer, |undo| {
                        Ok(run_permits(c, &undo_tenant, undo)?)
                    });
                },
            )
            .await
    }

    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                semaphores::sweep_postgres(conn.postgres()?, grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }

    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        settled: i64,
    ) -> Result<usize, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                crate::history::prune_postgres(conn.postgres()?, before, batch, settled)
                    .map_err(from_query)
            })
            .await
    }

    /// In a transaction of its own, holding the lock's row.
    async fn shared(&self, tenant: Tenant, op: SharedOp) -> Result<SharedAnswer, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.pooled
            .run_undoable(
                move |conn, _| Ok(run_shared(conn.postgres()?, &tenant, op)?),
                // A grant that committed after its caller heard 503 or went away.
                move |conn, answer| {
                    let Ok(c) = conn.postgres() else { return };
                    undo_unheard_shared(&*events, &undo_tenant, answer, |undo| {
                        Ok(run_shared(c, &undo_tenant, undo)?)
                    });
                },
            )
            .await
    }

    /// In a transaction of its own, holding every row of the set.
    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.pooled
            .run_undoable(
                move |conn, _| {
                    use diesel::Connection;
                    let conn = conn.postgres()?;
                    Ok(conn.transaction(|conn| {
                        shared_locks::acquire_all(&mut PostgresShared { conn }, &tenant, &set)
                    })?)
                },
                move |conn, answer| {
                    let Ok(c) = conn.postgres() else { return };
                    undo_unheard_set(&*events, &undo_tenant, answer, |undo| {
                        Ok(run_shared(&mut *c, &undo_tenant, undo)?)
                    });
                },
            )
            .await
    }

    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                shared_locks::sweep_postgres(conn.postgres()?, grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }
}

/// One shared-lock operation in a transaction of its own.
fn run_shared(
    conn: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    op: SharedOp,
) -> Result<SharedAnswer, PermitError> {
    use diesel::Connection;
    conn.transaction(|conn| shared_locks::run(&mut PostgresShared { conn }, tenant, op))
}

/// One semaphore operation in a transaction of its own.
fn run_permits(
    conn: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    op: PermitOp,
) -> Result<PermitAnswer, PermitError> {
    use diesel::Connection;
    conn.transaction(|conn| semaphores::run(&mut PostgresHolders { conn }, tenant, op))
}
