//! The errors of every store port, and the small ports beside the lease port: a store's health
//! and statistics, and its hints of leases freed by other processes.

use async_trait::async_trait;
use thiserror::Error;

use crate::{ExpiredHold, FreedLocks};

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

    /// How many sessions of every tenant are live now.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn count_live_sessions(&self) -> Result<u64, RepositoryError>;

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

    /// Takes at most `limit` of the leases that ran out and whose end the storage recorded
    /// (`expired` in the history, whether or not it keeps one), and forgets them:
    /// each is handed to one caller once, whichever process sharing the storage takes it first,
    /// so that the holds counted by every process add up to each lease once. A lease whose end
    /// was recorded by a write that did not commit is never handed out. A session's hold ran out
    /// at its session's end; it is handed out once its end is recorded (its place taken over, or
    /// the sweeper ending the session). Like
    /// [`Self::count_live`], callers take them now and then, not per request. For metrics: an
    /// implementation MAY lose the holds of a take whose answer did not reach its caller.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; nothing is forgotten then.
    async fn take_expired_holds(&self, limit: u32) -> Result<Vec<ExpiredHold>, RepositoryError>;
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
    /// [`crate::Freed::Unknown`] MUST follow any interruption during which hints were lost. A
    /// store that cannot name what was freed MAY give only `Unknown`s (one per batch of other
    /// processes' writes, say), and need not hint this process's own releases, which the
    /// caller hears of directly.
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
