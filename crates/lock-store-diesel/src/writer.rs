//! The one interface the repository runs its lock statements through ([`Writer`]), and its
//! implementations (the repository picks one when it opens the store):
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
pub(crate) mod postgres_batch;
pub(crate) mod postgres_direct;
mod postgres_permits;
pub(crate) mod sqlite;
pub(crate) mod wal_limit;

use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    LeaseValue, ListQuery, Lock, LockDelay, LockSet, MultiAcquireOutcome, Owner, RepositoryError,
    ResourceName, StoreEvents, Tenant, Ttl, UnheardGrant, UnheardKind,
};

use crate::outcome::{AcquireRow, ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::row::{ListedRow, LockRow};
use crate::semaphores::{PermitAnswer, PermitOp};
use crate::shared_locks::{SharedAnswer, SharedOp};

/// How the lock statements of one store run. The same outcome types on every backend.
#[async_trait]
pub(crate) trait Writer: Send + Sync {
    /// Grants, re-grants or refuses the lock; a grant keeps its place for `lock_delay` after it
    /// ends by expiry. A grant whose caller has gone (answered 503, or
    /// dropped its request) by the time it would be answered is undone.
    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    ) -> Result<AcquireRow, RepositoryError>;

    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseRow, RepositoryError>;

    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewRow, RepositoryError>;

    /// Ends `grant` if it is still exactly that new grant (`LockRepository::undo_grant`).
    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError>;

    /// Records the expiry of the run-out lease `(owner, fencing_token)` on `resource`, once (see
    /// `history::expiry`): whether it did.
    async fn record_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: i64,
    ) -> Result<bool, RepositoryError>;

    /// One step of a sweep pass from `from`: deletes at most `batch` rows whose lease ended
    /// more than `grace` ago.
    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError>;

    /// The live lock on `resource`, never read from a row that a write in flight may make live
    /// again.
    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError>;

    /// A page of live locks and one more row when there are more, read like [`Self::status`].
    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError>;

    /// Runs one semaphore operation (see `semaphores`) alone against every other write of that
    /// semaphore, reads included. An acquire granted after its caller has gone is undone.
    async fn permits(&self, tenant: Tenant, op: PermitOp) -> Result<PermitAnswer, RepositoryError>;

    /// Deletes at most `batch` semaphore rows whose lease ended more than `grace` ago.
    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError>;
    /// Deletes at most `batch` of the oldest history records committed before `before`, none
    /// past `settled` (PostgreSQL: the last id known final; SQLite's all are).
    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        settled: i64,
    ) -> Result<usize, RepositoryError>;

    /// Runs one shared-lock operation (see `shared_locks`) alone against every other write of
    /// that lock, exclusive ones and reads included. A shared grant made after its caller has
    /// gone is undone.
    async fn shared(&self, tenant: Tenant, op: SharedOp) -> Result<SharedAnswer, RepositoryError>;

    /// Deletes at most `batch` shared leases that ended more than `grace` ago.
    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError>;

    /// Grants every lock of `set` or none, in one transaction (see `shared_locks::multi`). Grants
    /// whose caller has gone are undone.
    async fn acquire_all(
        &self,
        tenant: Tenant,
        set: LockSet,
    ) -> Result<MultiAcquireOutcome, RepositoryError>;
}

/// Undoes, with `undo` (run on the writer's connection), the grants of a multi-lock that nobody
/// will hear of, and reports each to `events`. Every `undo_unheard_*` returns whether no undo
/// failed (the SQLite writer then keeps the history its statements recorded).
pub(crate) fn undo_unheard_set(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    answer: MultiAcquireOutcome,
    undo: impl FnMut(SharedOp) -> Result<SharedAnswer, RepositoryError>,
) -> bool {
    match answer {
        MultiAcquireOutcome::Granted(locks) => undo_unheard_locks(events, tenant, locks, undo),
        _ => true,
    }
}

/// Undoes a shared-lock grant nobody will hear of (see [`undo_unheard_set`]).
pub(crate) fn undo_unheard_shared(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    answer: SharedAnswer,
    undo: impl FnMut(SharedOp) -> Result<SharedAnswer, RepositoryError>,
) -> bool {
    match answer {
        SharedAnswer::Acquired(lock_domain::SharedAcquireOutcome::Granted(grant)) => {
            undo_unheard_locks(events, tenant, vec![grant], undo)
        }
        _ => true,
    }
}

/// Undoes each of `locks` (grants nobody will hear of) with `undo`, and reports each.
fn undo_unheard_locks(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    locks: Vec<Lock>,
    mut undo: impl FnMut(SharedOp) -> Result<SharedAnswer, RepositoryError>,
) -> bool {
    let mut all_ran = true;
    for lock in locks {
        let (resource, owner, token, mode) = (
            lock.resource.clone(),
            lock.owner.clone(),
            lock.fencing_token,
            lock.mode,
        );
        match undo(SharedOp::Undo { grant: lock }) {
            Ok(SharedAnswer::Undone(undone)) => events.unheard_grant(&UnheardGrant {
                tenant: tenant.clone(),
                kind: UnheardKind::LockInMode(mode),
                name: resource,
                owner,
                fencing_token: token,
                undone,
            }),
            Ok(_) => {}
            Err(error) => {
                all_ran = false;
                tracing::warn!(%error, resource = %resource, "a grant made after its caller had gone could not be undone; it expires with its lease")
            }
        }
    }
    all_ran
}

/// Undoes a semaphore grant nobody will hear of with `run` (an undo operation run on the
/// writer's connection), and reports it.
pub(crate) fn undo_unheard_permit(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    answer: PermitAnswer,
    run: impl FnOnce(PermitOp) -> Result<PermitAnswer, RepositoryError>,
) -> bool {
    let PermitAnswer::Acquired(lock_domain::SemaphoreAcquireOutcome::Granted(grant)) = answer
    else {
        return true;
    };
    let (name, owner, token) = (
        grant.name.clone(),
        grant.lease.owner.clone(),
        grant.lease.fencing_token,
    );
    match run(PermitOp::Undo { grant }) {
        Ok(PermitAnswer::Undone(undone)) => events.unheard_grant(&UnheardGrant {
            tenant: tenant.clone(),
            kind: UnheardKind::Permits,
            name,
            owner,
            fencing_token: token,
            undone,
        }),
        Ok(_) => {}
        Err(error) => {
            tracing::warn!(%error, semaphore = %name, "a permit grant made after its caller had gone could not be undone; it expires with its lease");
            return false;
        }
    }
    true
}

/// Undoes a grant that nobody will hear of (its caller gave up or went away before it was
/// answered) with `undo`, and reports it.
pub(crate) fn undo_unheard_grant(
    events: &dyn StoreEvents,
    tenant: &Tenant,
    row: LockRow,
    undo: impl FnOnce(&Lock) -> diesel::QueryResult<bool>,
) -> bool {
    let lock = match Lock::try_from(row) {
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
