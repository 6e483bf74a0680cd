//! The one interface the repository runs its lease operations through ([`Writer`]): one
//! [`LeaseOp`] at a time, whatever the primitive, and the reads and upkeep that must not race
//! a write. Its implementations, one per way of writing (the repository picks one when it
//! opens the store):
//!
//! - SQLite: `SqliteWriter`, the group-commit writer thread of this process (`group_commit`);
//! - PostgreSQL: `PostgresBatcher`, which batches the acquires, releases and renews of
//!   concurrent requests into one statement (`postgres_batch`), or with
//!   `postgres_batch_connections = 0` `PostgresDirect`, which runs each on the request's own
//!   pooled connection.
//!
//! Every writer answers a write only once it has committed, keeps the caller's deadlines, and
//! undoes a grant whose caller has gone by the time it would be answered
//! ([`undo_unheard_grant`]). The reads are here too because they must not answer from a row
//! that a write still in flight is about to change (docs/architecture.md, "Reads and writes
//! still committing"), and how to wait for those writes is the writer's business.

mod group_commit;
pub(crate) mod noted_holds;
pub(crate) mod postgres_batch;
pub(crate) mod postgres_direct;
mod postgres_permits;
pub(crate) mod read_sessions;
mod savepoint;
pub(crate) mod sqlite;
pub(crate) mod wal_limit;

/// The key of one entry of what the SQLite writer keeps between transactions
/// ([`noted_holds`], [`read_sessions`]): each part but the last after its length, so that no
/// two entries share one.
fn kept_key(parts: &[&str]) -> String {
    let mut key = String::with_capacity(parts.iter().map(|part| part.len() + 4).sum());
    if let Some((last, firsts)) = parts.split_last() {
        for part in firsts {
            key.push_str(&part.len().to_string());
            key.push(':');
            key.push_str(part);
        }
        key.push_str(last);
    }
    key
}

/// Runs `test` on a thread of its own made a writer's thread by `install`, as the SQLite
/// writer's thread is.
#[cfg(test)]
fn on_a_writer_thread(install: fn(), test: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        install();
        test();
    })
    .join()
    .expect("the test thread");
}

use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    Applied, Grant, LeaseOp, LeaseOutcome, ListQuery, LockMode, RepositoryError, ResourceName,
    SemaphorePage, StoreEvents, Tenant, UnheardGrant, UnheardKind,
};

use crate::outcome::{SweepPosition, Swept};
use crate::row::{ListedRow, LockRow};

/// `first`, then `then`, each applied on its own by `writer`.
pub(crate) async fn in_turn<W: Writer + ?Sized>(
    writer: &W,
    tenant: Tenant,
    first: LeaseOp,
    then: LeaseOp,
) -> (Applied, Applied) {
    let first = writer.apply(tenant.clone(), first).await;
    (first, writer.apply(tenant, then).await)
}

/// How the lease operations of one store run. The same outcomes on every backend.
#[async_trait]
pub(crate) trait Writer: Send + Sync {
    /// Applies `op` (the port's `LeaseStore::apply`, see its contract). A grant whose caller
    /// has gone (answered 503, or dropped its request) by the time it would be answered is
    /// undone ([`undo_unheard`]).
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError>;

    /// Applies `first`, then `then` (the port's `LeaseStore::apply_then`): by default one after
    /// the other; a writer that can commits them together.
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        in_turn(self, tenant, first, then).await
    }

    /// Whether [`Self::apply_then`] commits both operations together.
    fn applies_together(&self) -> bool {
        false
    }

    /// The live lock row of `resource` (for readers, the row that stands for them), never read
    /// from a row that a write in flight may make live again.
    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError>;

    /// A page of live lock rows and one more row when there are more, read like
    /// [`Self::status`].
    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError>;

    /// A page of semaphores with live holders.
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError>;

    /// One step of a sweep pass from `from`: deletes at most `batch` lock rows whose lease
    /// ended more than `grace` ago.
    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError>;

    /// Deletes at most `batch` semaphore rows whose lease ended more than `grace` ago.
    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError>;

    /// Deletes at most `batch` shared leases that ended more than `grace` ago.
    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError>;

    /// Applies `op` to `tenant`'s sessions in one transaction (see `sessions.rs`).
    async fn apply_session(
        &self,
        tenant: Tenant,
        op: lock_domain::SessionOp,
    ) -> Result<lock_domain::SessionOutcome, RepositoryError>;

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: lock_domain::SessionQuery,
    ) -> Result<lock_domain::SessionPage, RepositoryError>;

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError>;

    /// Takes at most `limit` of the leases that ran out (`StoreHealth::take_expired_holds`).
    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<lock_domain::ExpiredHold>, RepositoryError>;

    /// The live sessions of every tenant.
    async fn count_live_sessions(&self) -> Result<u64, RepositoryError>;

    /// Ends up to `batch` sessions that ran out (with their lock-delay) `grace` ago or more.
    async fn sweep_sessions(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError>;

    /// Deletes at most `batch` of the oldest history records committed before `before`, none
    /// past `settled` (PostgreSQL: the last id known final; SQLite's all are).
    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        settled: i64,
    ) -> Result<usize, RepositoryError>;

    /// A subscription to the hints this writer itself can give of locks freed by other
    /// processes (SQLite: their commits, `foreign_commits`), or `None` when it gives none.
    fn subscribe_freed(&self) -> Option<Box<dyn lock_domain::FreedLocks>> {
        None
    }
}

/// Undoes, with `undo` (a lease operation run on the writer's connection), the grants of
/// `answer` that nobody will hear of, and reports each to `events`. Returns whether no undo
/// failed (the SQLite writer then keeps the history its statements recorded).
pub(crate) fn undo_unheard(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    answer: &LeaseOutcome,
    mut undo: impl FnMut(LeaseOp) -> Result<LeaseOutcome, RepositoryError>,
) -> bool {
    let (grants, in_a_set): (Vec<Grant>, bool) = match answer {
        LeaseOutcome::Granted(grant) => (vec![grant.clone()], false),
        LeaseOutcome::GrantedAll(grants) => (grants.clone(), true),
        _ => return true,
    };
    let mut all_ran = true;
    for grant in grants {
        let kind = match (grant.mode(), in_a_set) {
            (None, _) => UnheardKind::Permits,
            (Some(LockMode::Exclusive), false) => UnheardKind::Lock,
            (Some(mode), _) => UnheardKind::LockInMode(mode),
        };
        let (name, owner, token) = (
            grant.place.name().clone(),
            grant.lease.owner.clone(),
            grant.lease.fencing_token,
        );
        match undo(LeaseOp::Undo(grant)).and_then(LeaseOutcome::undone) {
            Ok(undone) => events.unheard_grant(&UnheardGrant {
                tenant: tenant.clone(),
                kind,
                name,
                owner,
                fencing_token: token,
                undone,
            }),
            Err(error) => {
                all_ran = false;
                tracing::warn!(%error, name = %name, "a grant made after its caller had gone could not be undone; it expires with its lease");
            }
        }
    }
    all_ran
}

/// Undoes an exclusive grant of the lock statement that nobody will hear of (its caller gave up
/// or went away before it was answered) with `undo`, the statement's own undo, and reports it.
pub(crate) fn undo_unheard_grant(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    row: LockRow,
    undo: impl FnOnce(&lock_domain::Lock) -> diesel::QueryResult<bool>,
) -> bool {
    let lock = match lock_domain::Lock::try_from(row) {
        Ok(lock) => lock,
        Err(error) => {
            tracing::error!(%error, "a grant nobody heard of could not be read back; it expires with its lease");
            return true;
        }
    };
    match undo(&lock) {
        Ok(undone) => events.unheard_grant(&UnheardGrant {
            tenant: tenant.clone(),
            kind: UnheardKind::Lock,
            name: lock.resource.clone(),
            owner: lock.owner.clone(),
            fencing_token: lock.fencing_token,
            undone,
        }),
        Err(error) => {
            tracing::warn!(%error, resource = %lock.resource.as_str(), "a grant made after its caller had gone could not be undone; it expires with its lease");
            return false;
        }
    }
    true
}
