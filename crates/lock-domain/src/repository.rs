//! The repository port: how the service stores locks, whatever the database.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use thiserror::Error;

use crate::{
    AcquireOutcome, FencingToken, FreedLocks, LeaseValue, ListPage, ListQuery, Lock, LockDelay,
    Owner, ReleaseResult, RenewResult, ResourceName, Tenant, Ttl,
};

/// Why a repository could not answer. Lock outcomes (held, forbidden, not found) are never
/// errors: they are the `Ok` values of the operations.
#[derive(Debug, Error)]
pub enum RepositoryError {
    /// The database cannot be reached or refuses work for now (connection refused, pool timeout,
    /// read-only file). Retrying later may succeed; nothing was changed.
    #[error("the lock database is unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database has no room for the write: its disk (or its WAL's) is full. Reads still
    /// work; retrying once space is freed succeeds; nothing was changed.
    #[error("the lock database's storage is full")]
    StorageFull(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Anything else: a bug or corrupt data. Nothing is known to have changed.
    #[error("the lock repository failed")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl RepositoryError {
    pub fn unavailable(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Unavailable(source.into())
    }

    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(source.into())
    }

    pub fn storage_full(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::StorageFull(source.into())
    }
}

/// How busy a connection pool is, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolState {
    /// Connections handed out to requests right now.
    pub in_use: u32,
    /// Open connections waiting in the pool.
    pub idle: u32,
}

/// The lock operations of a store: where locks live. A lock is identified by its tenant and its resource name: the same name in
/// two tenants is two independent locks, and no operation of one tenant can see or change
/// another's. Every implementation MUST be linearizable per lock: each operation takes
/// effect atomically at one instant between its call and its return, across every process that
/// shares the storage. In particular, of many concurrent acquires of a free or expired resource,
/// exactly one is `Granted`.
///
/// "Live" means `now < expires_at`, with `now` taken from the implementation's clock.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LockRepository: Send + Sync {
    /// Acquires `resource` for `owner` for `ttl`, with `value` stored with the lease and
    /// `lock_delay` kept with it: once the lease ends by expiry (not by a release or an undo), its
    /// place stays unavailable to other owners until its `expires_at + lock_delay`.
    ///
    /// MUST return `Granted` with `acquired_at = now`, `expires_at = now + ttl`, the value
    /// `value` and a fencing token larger than every token ever issued for `resource` when
    /// there is no live lock and no lease of another owner in its lock-delay
    /// ([`crate::delayed_until`]); MUST return `Granted` with the same fencing token (re-granted
    /// from `now`, its value replaced only when `value` is `Some`, its lock-delay replaced) when
    /// `owner` already holds the live lock; MUST return `Held` and change nothing when another
    /// owner holds it, or when another owner's lease ran out less than its lock-delay ago.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then no grant was made.
    async fn acquire_with_delay(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    ) -> Result<AcquireOutcome, RepositoryError>;

    /// [`Self::acquire_with_delay`] with no lock-delay of its own (a lease ended by expiry is
    /// free at once), still honouring the lock-delay of the lease it would replace.
    ///
    /// # Errors
    /// As [`Self::acquire_with_delay`].
    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<AcquireOutcome, RepositoryError> {
        self.acquire_with_delay(tenant, resource, owner, ttl, value, LockDelay::NONE)
            .await
    }

    /// When `resource`, which no live lease holds, is available again to owners other than the
    /// last holder: `Some(expires_at + lock_delay)` of a lease that ran out and is still in its
    /// lock-delay, else `None` (held, free, released, or the delay is over).
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn available_at(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<DateTime<Utc>>, RepositoryError>;

    /// Returns the live lock on `resource`, or `None` when there is none (expired locks are none).
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Lock>, RepositoryError>;

    /// The live lock on each of `locks` (a tenant and a resource name each), in order: one
    /// answer per entry, with exactly the meaning of [`Self::status`] for it, each read at some
    /// instant during the call (not one snapshot of all). For pollers that look at many locks
    /// at once; an implementation SHOULD read them all in one round trip.
    ///
    /// The default reads them one after another with [`Self::status`].
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn statuses(
        &self,
        locks: Vec<(Tenant, ResourceName)>,
    ) -> Result<Vec<Option<Lock>>, RepositoryError> {
        let mut found = Vec::with_capacity(locks.len());
        for (tenant, resource) in locks {
            found.push(self.status(tenant, resource).await?);
        }
        Ok(found)
    }

    /// Releases `owner`'s live lock on `resource`.
    ///
    /// MUST return `Released` (with the ended grant's fencing token) only after ending `owner`'s
    /// live lock, `Forbidden` when another
    /// owner holds the live lock (nothing changes), `NotFound` when there is no live lock.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was released.
    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError>;

    /// Undoes one grant that nobody will use (its requester hung up, or was answered 503 before
    /// the grant committed): ends the live lease on `grant.resource` only if it is still exactly
    /// that grant — same owner, fencing token, `acquired_at` and `expires_at`. A later re-grant
    /// to the same owner (a new `acquired_at`), a renewal (a new `expires_at`) or another grant
    /// is never touched, so undoing a grant can never end a lease that someone was told they
    /// hold.
    ///
    /// MUST return `true` when it ended that grant, `false` (changing nothing) when the live
    /// lease, if any, is not exactly that grant.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was undone.
    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError>;

    /// Sets the expiry of `owner`'s live lock on `resource` to `now + ttl` (which may be sooner
    /// than before: a renew with a short TTL shortens the lease) and, when `value` is `Some`,
    /// replaces its value.
    ///
    /// MUST return `Renewed` with `acquired_at` and the fencing token unchanged, `Forbidden` when
    /// another owner holds the live lock, `NotFound` when there is no live lock.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was renewed.
    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError>;

    /// Lists `tenant`'s live locks whose names start with `query.prefix` (literally, bytewise)
    /// and are bytewise greater than `query.after`, in bytewise name order, at most
    /// `query.limit` of them; `has_more` tells whether more matched. Each lock comes with its
    /// remaining lease on the implementation's clock. Expired locks and other tenants' locks
    /// never appear.
    ///
    /// Implementations MUST answer from an ordered index over `(tenant, resource)`, reading no
    /// more than the page (plus one row, plus expired rows not yet swept in the range), so that
    /// a page costs the same with a million locks as with ten. Pages are not a snapshot: a lock
    /// granted behind the cursor while a client pages is not seen, one granted ahead of it is.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn list(&self, tenant: Tenant, query: ListQuery) -> Result<ListPage, RepositoryError>;

    /// Records in the history, now, the expiry of the exclusive lease `owner` holds on the lock
    /// `resource` of `tenant` with `fencing_token`, if that lease is still the lock's and has run
    /// out (an observer saw it end): once, so that the next grant of the name or a sweep records
    /// no second expiry of it. Changes nothing else the rules see: the lock is free for anyone
    /// as it was, its lock-delay still runs, and the next grant draws a new token. Returns
    /// whether it recorded (`false`: another lease is there, it is still live, or its expiry
    /// was recorded already).
    ///
    /// The default records nothing and returns `false`: for stores that keep no history.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was recorded.
    async fn record_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
    ) -> Result<bool, RepositoryError> {
        let _ = (tenant, resource, owner, fencing_token);
        Ok(false)
    }
}

/// The health and statistics of a store, for readiness probes and metrics: nothing here changes
/// a lock, and nothing here is on a request's path except [`Self::ping`] (readiness).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait StoreHealth: Send + Sync {
    /// Checks that storage answers (for readiness probes).
    ///
    /// # Errors
    /// [`RepositoryError::Unavailable`] when it does not.
    async fn ping(&self) -> Result<(), RepositoryError>;

    /// Counts the live locks of every tenant. This may read every live row: callers cache it
    /// (metrics refresh it every few seconds), never run it per request.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn count_live(&self) -> Result<u64, RepositoryError>;

    /// How busy the storage's connection pool is right now, or `None` when there is no pool.
    /// Never blocks.
    fn pool_state(&self) -> Option<PoolState>;

    /// How many grants, over the whole life of the storage and across every process sharing
    /// it, took a resource over from another owner whose lease had expired (rather than been
    /// released): leases their holders let run out. Grants of free or released resources, of
    /// resources whose expired record was already swept, and re-grants to the same owner are not
    /// counted. Like [`Self::count_live`], callers read it now and then, not per request. For
    /// metrics: an implementation MAY count a takeover whose transaction then failed.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn count_expired_takeovers(&self) -> Result<u64, RepositoryError>;
}

/// Hints from a store that locks may have been freed by any process sharing it. A store that
/// never gives them (the in-memory store) need not implement this trait; one that gives them on
/// some backends only answers `Ok(None)` on the others.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait FreedHints: Send + Sync {
    /// Subscribes to hints that a lock may have been freed (released, or its lease shortened by a
    /// renew) by any process sharing the storage, so that waiting acquires need not poll. Once
    /// this returns `Some`, every later release and renew SHOULD produce a hint promptly, and a
    /// [`crate::Freed::Unknown`] MUST follow any interruption during which hints were lost.
    /// Hints are best effort (a process that dies between its release and the hint sends none):
    /// subscribers still look for themselves now and then. Expiries produce no hint: a waiter
    /// knows when the lease it waits for ends.
    ///
    /// The default returns `Ok(None)`: the store gives no hints (a single process knows its own
    /// releases; other processes' releases must be polled for).
    ///
    /// # Errors
    /// [`RepositoryError`] when the subscription could not be opened now (retrying later may
    /// succeed).
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        Ok(None)
    }
}
