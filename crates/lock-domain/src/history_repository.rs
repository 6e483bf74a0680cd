//! The history port: how the service reads the durable history a store records with every write
//! (see [`crate::name_change`]), and how old records are pruned. A port of its own, so a store
//! or a test double implements what it has.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{HistoryId, HistoryPage, HistoryQuery, HistoryRecord, RepositoryError, Tenant};

/// The history of a store. Every write that changes a lease MUST record its changes, named by
/// [`crate::name_change`], in the same transaction as the change: a change is committed with its
/// records or not at all. Records of one tenant are never visible to another.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait HistoryRepository: Send + Sync {
    /// The tenant's records that `query` asks for, newest (largest id) first, with the cursor of
    /// the next page when there may be more.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn history(
        &self,
        tenant: Tenant,
        query: HistoryQuery,
    ) -> Result<HistoryPage, RepositoryError>;

    /// Up to `limit` records of every tenant with an id larger than `after` (all, for `None`),
    /// oldest first, that are final: no record with a smaller id than the last one returned can
    /// still be committed later. So a reader that goes on from the last id it got misses nothing
    /// and sees nothing twice.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn history_after(
        &self,
        after: Option<HistoryId>,
        limit: u32,
    ) -> Result<Vec<HistoryRecord>, RepositoryError>;

    /// The id of the newest final record (see [`Self::history_after`]), `None` when there is none:
    /// where a reader that wants only what happens from now on starts.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn last_history_id(&self) -> Result<Option<HistoryId>, RepositoryError>;

    /// Deletes about `batch` of the oldest records committed before `before`, oldest first;
    /// returns how many (0: none is that old). A store that keeps the records of one transaction
    /// together (SQLite) deletes whole transactions: those within the oldest `batch` ids, and the
    /// oldest one whatever its size, so that pruning goes on.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was deleted.
    async fn prune_history(
        &self,
        before: DateTime<Utc>,
        batch: u32,
    ) -> Result<usize, RepositoryError>;
}
