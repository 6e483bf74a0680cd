//! Batching for PostgreSQL: the acquires, releases and renews of many concurrent requests run as
//! one statement over arrays (`postgres::writes::WRITE_BATCH`), one round trip and one commit
//! for all.
//!
//! Requests queue their operation and wait. A few executor threads (`executors`) each take a
//! pooled connection and whatever is queued (up to `max_batch`), run it as one statement in
//! autocommit, and answer each caller only after that statement has committed (synchronous
//! commit stays on). A key (tenant, resource) is in at most one running batch at a time, and at
//! most once in it: a later operation on a key that is queued or running waits for the next
//! batch, so operations on one key run in the order they arrived and never touch a row twice
//! in one statement.
//!
//! A caller waits at most `deadlines.connection` in the queue (its operation is then withdrawn,
//! untouched, and leaves the queue at once, so an outage does not pile abandoned operations up),
//! and at most `deadlines.statement` (the server's `statement_timeout` plus a margin) after the
//! start of the last statement that could write for it; then it answers 503. An executor starts
//! a statement (or a retry) for an operation only after pushing that operation's deadline out,
//! and never for one whose caller has gone (answered 503, or its request dropped). But
//! `statement_timeout` does not cover COMMIT: a commit that stalls (an fsync, a synchronous
//! standby) can land after the caller heard 503. A grant whose caller is gone by the time it
//! would be answered is therefore undone at once, as that exact grant
//! (`postgres::writes::undo_grant`, which keeps re-grants), on the same connection and before any
//! later operation of this process on its key runs: the orphan lease lives no longer than the
//! late commit plus one statement (or, if the database is lost right then, until its TTL).
//!
//! A hot key would otherwise take one batch per queued operation. So once a batch shows who
//! holds a key's live lease (its grant or renewal, or a read after an acquire that was refused),
//! the operations queued on that key before the batch's statement that this lease decides
//! without a write (acquires, releases and renews by other owners) are answered from it at once
//! (Held, Forbidden), in arrival order up to the first that needs a write. Each of them was
//! waiting when the lease was seen, so it may take effect at that moment.
//!
//! Failures stay with their operation: a batch of several that fails (a statement timeout
//! caused by one row, a deadlock with another instance's batch) changed nothing, and each of its
//! operations runs again alone; only a lost connection fails the whole batch at once (retrying
//! on it is pointless), each caller hearing 503.
//!
//! The parts: [`queue`] (what callers and executors share), [`caller`] (queueing an operation
//! and waiting within its deadlines), [`executor`] (the threads that take batches),
//! [`statement`] (one batch: its statement, the answers from its rows, what runs again) and
//! [`followers`] (answering queued operations from a lease a batch showed).

mod caller;
mod executor;
mod followers;
mod queue;
mod sessions;
mod statement;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    Applied, Claim, LeaseOp, LeaseOutcome, LeaseTerms, ListQuery, Owner, Place, RepositoryError,
    ResourceName, SemaphorePage, SessionId, Tenant,
};

use self::queue::{lock, Outcome, Queue, Shared};
use super::postgres_direct::{self, PostgresDirect};
use super::postgres_permits::PermitBatcher;
use super::Writer;
use crate::config::Deadlines;
use crate::outcome::{AcquireRow, SweepPosition, Swept};
use crate::postgres::writes::Operation;
use crate::row::{ListedRow, LockRow};

/// The handle the repository submits through. Dropping it stops the executors once the queue
/// is empty.
pub(crate) struct PostgresBatcher {
    shared: Arc<Shared>,
    /// The semaphore operations, group-committed (`postgres_permits`).
    permits: PermitBatcher,
    /// Runs what the batcher does not: undos, sweeps, reads.
    direct: PostgresDirect,
    /// The sessions batched operations were made under (their holders, their lock-delays).
    sessions: sessions::KnownSessions,
}

impl Drop for PostgresBatcher {
    fn drop(&mut self) {
        lock(&self.shared.queue).stopped = true;
        self.shared.work.notify_all();
    }
}

impl PostgresBatcher {
    /// Starts `executors` executor threads on the pool of `direct`, which runs every other
    /// operation.
    ///
    /// # Errors
    /// When a thread cannot be spawned.
    pub(crate) fn spawn(
        direct: PostgresDirect,
        deadlines: Deadlines,
        executors: u32,
        max_batch: usize,
    ) -> std::io::Result<Self> {
        let permits = PermitBatcher::spawn(
            direct.pooled().pool(),
            direct.pooled().health(),
            direct.pooled().events(),
            executors.max(1) as usize * 2,
            deadlines.connection + deadlines.statement * 2,
            max_batch,
        )?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            pool: direct.pooled().pool().clone(),
            health: direct.pooled().health().clone(),
            events: Arc::clone(direct.pooled().events()),
            deadlines,
            max_batch: max_batch.max(1),
            notes: Mutex::default(),
        });
        for i in 0..executors.max(1) {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("lockd-pg-batch-{i}"))
                .spawn(move || executor::execute(&shared))?;
        }
        Ok(Self {
            shared,
            permits,
            direct,
            sessions: sessions::KnownSessions::default(),
        })
    }
}

impl PostgresBatcher {
    /// An exclusive acquire of `resource` by `terms` in a batch; when the statement refuses, the
    /// lock's holders decide `op` (the same acquire as the caller made it) and say why.
    async fn acquire_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        terms: LeaseTerms,
        op: LeaseOp,
    ) -> Result<LeaseOutcome, RepositoryError> {
        let statement = self.acquire_row(tenant.clone(), resource, terms);
        postgres_direct::acquire_exclusive(statement, || self.permits.submit(tenant, op)).await
    }

    /// A release of `resource` by `owner` in a batch; when the statement finds another holder
    /// (or `owner`'s session ended), the lock's holders decide `op` (the same release as the
    /// caller made it).
    async fn release_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        op: LeaseOp,
    ) -> Result<LeaseOutcome, RepositoryError> {
        let key = (tenant.clone(), resource);
        let statement = async {
            match self.batched(key, Operation::Release { owner }).await? {
                Outcome::Release(row) => postgres_direct::released(row),
                _ => Err(mismatch()),
            }
        };
        postgres_direct::release_or_renew(statement, || self.permits.submit(tenant, op)).await
    }

    /// `op`, made under session `id`. An exclusive acquire or a lock's release runs in a batch
    /// as the session's holder, the statement deciding on the session (`postgres_batch/
    /// sessions.rs`); every other operation is decided on its session in the transaction that
    /// applies it (see `sessions.rs`): group-committed with the operations through holders, a
    /// set in a transaction of its own.
    async fn apply_under_session(
        &self,
        tenant: Tenant,
        id: SessionId,
        op: LeaseOp,
    ) -> Result<LeaseOutcome, RepositoryError> {
        let batched = matches!(
            &op,
            LeaseOp::Acquire {
                place: Place::Lock(_),
                claim: Claim::Exclusive,
                ..
            } | LeaseOp::Release {
                place: Place::Lock(_),
                ..
            }
        );
        if !batched {
            return match op {
                LeaseOp::AcquireAll(_) => self.direct.apply(tenant, op).await,
                op => self.permits.submit(tenant, op).await,
            };
        }
        let sessions_tenant = lock_domain::sessions_tenant(&tenant);
        let known = self
            .sessions
            .get(self.direct.pooled(), sessions_tenant, id)
            .await?;
        let Some(session) = known else {
            // No such session (any more): the domain's answer, whatever the time.
            return op
                .with_session(None, chrono::Utc::now())
                .err()
                .ok_or_else(|| {
                    RepositoryError::internal("an operation under no session was applied")
                });
        };
        match op.clone().under_session(&session) {
            LeaseOp::Acquire {
                place: Place::Lock(resource),
                terms,
                ..
            } => self.acquire_lock(tenant, resource, terms, op).await,
            LeaseOp::Release {
                place: Place::Lock(resource),
                owner,
            } => self.release_lock(tenant, resource, owner, op).await,
            _ => self.permits.submit(tenant, op).await,
        }
    }

    /// Runs `operation` on `key` in a batch.
    async fn batched(
        &self,
        key: (Tenant, ResourceName),
        operation: Operation,
    ) -> Result<Outcome, RepositoryError> {
        caller::submit(&self.shared, key, operation).await
    }

    async fn acquire_row(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        terms: LeaseTerms,
    ) -> Result<AcquireRow, RepositoryError> {
        let operation = Operation::Acquire {
            owner: terms.owner,
            ttl: terms.ttl,
            value: terms.value,
            lock_delay: terms.lock_delay,
        };
        match self.batched((tenant, resource), operation).await? {
            Outcome::Acquire(row) => Ok(row),
            _ => Err(mismatch()),
        }
    }
}

#[async_trait]
impl Writer for PostgresBatcher {
    /// A lock's release and the next grant in one transaction, outside the batches
    /// (`PostgresDirect::apply_together`).
    fn applies_together(&self) -> bool {
        true
    }

    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        postgres_direct::apply_then(self, &self.direct, tenant, first, then).await
    }

    /// Exclusive acquires, and the releases and renews of locks, are batched (`WRITE_BATCH`);
    /// every other operation through holders is group-committed (`postgres_permits`); the rest
    /// runs as without batching.
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        if let Some(id) = op.session() {
            return self.apply_under_session(tenant, id, op).await;
        }
        match op {
            LeaseOp::Acquire {
                place: Place::Lock(resource),
                claim: Claim::Exclusive,
                terms,
            } => {
                let op = LeaseOp::Acquire {
                    place: Place::Lock(resource.clone()),
                    claim: Claim::Exclusive,
                    terms: terms.clone(),
                };
                self.acquire_lock(tenant, resource, terms, op).await
            }
            LeaseOp::Release {
                place: Place::Lock(resource),
                owner,
            } => {
                let op = LeaseOp::Release {
                    place: Place::Lock(resource.clone()),
                    owner: owner.clone(),
                };
                self.release_lock(tenant, resource, owner, op).await
            }
            LeaseOp::Renew {
                place: Place::Lock(resource),
                owner,
                ttl,
                value,
            } => {
                let key = (tenant.clone(), resource.clone());
                let operation = Operation::Renew {
                    owner: owner.clone(),
                    ttl,
                    value: value.clone(),
                };
                let statement = async {
                    match self.batched(key, operation).await? {
                        Outcome::Renew(row) => postgres_direct::renewed(row),
                        _ => Err(mismatch()),
                    }
                };
                let op = LeaseOp::Renew {
                    place: Place::Lock(resource),
                    owner,
                    ttl,
                    value,
                };
                postgres_direct::release_or_renew(statement, || self.permits.submit(tenant, op))
                    .await
            }
            // Sets, exclusive undos, observed expiries and looks are not batched.
            op @ (LeaseOp::AcquireAll(_)
            | LeaseOp::RecordExpiry {
                place: Place::Lock(_),
                ..
            }
            | LeaseOp::Look(Place::Lock(_))) => self.direct.apply(tenant, op).await,
            LeaseOp::Undo(grant) if grant.mode() == Some(lock_domain::LockMode::Exclusive) => {
                self.direct.apply(tenant, LeaseOp::Undo(grant)).await
            }
            op => self.permits.submit(tenant, op).await,
        }
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        self.direct.status(tenant, resource).await
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        self.direct.list(tenant, query).await
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.direct.list_semaphores(tenant, query).await
    }

    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        self.direct.sweep(grace, batch, from).await
    }

    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        self.direct.sweep_permits(grace, batch).await
    }

    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        self.direct.sweep_shared(grace, batch).await
    }

    async fn apply_session(
        &self,
        tenant: Tenant,
        op: lock_domain::SessionOp,
    ) -> Result<lock_domain::SessionOutcome, RepositoryError> {
        self.direct.apply_session(tenant, op).await
    }

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: lock_domain::SessionQuery,
    ) -> Result<lock_domain::SessionPage, RepositoryError> {
        self.direct.list_sessions(tenant, query).await
    }

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        self.direct.live_sessions(tenant).await
    }

    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<lock_domain::ExpiredHold>, RepositoryError> {
        self.direct.take_expired_holds(limit).await
    }

    async fn count_live_sessions(&self) -> Result<u64, RepositoryError> {
        self.direct.count_live_sessions().await
    }

    async fn sweep_sessions(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        self.direct.sweep_sessions(grace, batch).await
    }

    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        settled: i64,
    ) -> Result<usize, RepositoryError> {
        self.direct.prune_history(before, batch, settled).await
    }
}

fn mismatch() -> RepositoryError {
    RepositoryError::internal("the PostgreSQL batcher answered another kind of operation")
}
