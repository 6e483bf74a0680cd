//! The history port over the store's pool: pages of a tenant's records, the stream's read of
//! every final record after an id (see `history::PostgresFrontier`), and pruning through the
//! writer.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lock_domain::{
    HistoryId, HistoryPage, HistoryQuery, HistoryRecord, HistoryRepository, RepositoryError, Tenant,
};

use super::DieselLockRepository;
use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::history::{self, PostgresFrontier};

/// How many records past a gap a read looks at for the newest final id.
const LAST_ID_SCAN: u32 = 10_000;

impl DieselLockRepository {
    /// Every final record after `after`, oldest first, at most `limit`.
    async fn final_after(
        &self,
        after: i64,
        limit: u32,
    ) -> Result<Vec<HistoryRecord>, RepositoryError> {
        let inner = self.inner.clone();
        self.inner
            .pooled
            .run(move |conn, _| {
                let settled = match conn {
                    // One writer at a time: ids are committed in order, every one is final.
                    DbConnection::Sqlite(_) => i64::MAX,
                    DbConnection::Postgres(c) => {
                        inner.history_frontier.advance(c).map_err(from_query)?
                    }
                };
                let rows = history::after(conn, after, limit)?;
                Ok(PostgresFrontier::keep_final(after, settled, rows))
            })
            .await
    }

    /// Writes the segment entries of the history batches not indexed yet, on PostgreSQL, as
    /// many as hold fewer than `records` records before them (at least one): how many records
    /// it read (`Some(n)` with `n >= records`: there may be more). A read finds the records of
    /// batches not indexed yet all the same, by reading them all; indexing keeps that part
    /// small. `None` on SQLite, whose writer indexes as it writes.
    ///
    /// # Errors
    /// The database's, as [`RepositoryError`].
    pub async fn index_history(&self, records: u32) -> Result<Option<usize>, RepositoryError> {
        let inner = self.inner.clone();
        self.inner
            .pooled
            .run(move |conn, _| match conn {
                DbConnection::Sqlite(_) => Ok(None),
                DbConnection::Postgres(c) => {
                    let settled = inner.history_frontier.advance(c).map_err(from_query)?;
                    history::index_postgres(c, settled, records)
                        .map(Some)
                        .map_err(from_query)
                }
            })
            .await
    }
}

/// PostgreSQL: the last id up to which every id is final.
fn final_through(
    frontier: &PostgresFrontier,
    conn: &mut DbConnection,
) -> Result<i64, RepositoryError> {
    let settled = frontier.advance(conn.postgres()?).map_err(from_query)?;
    let rows = history::after(conn, settled, LAST_ID_SCAN)?;
    let kept = PostgresFrontier::keep_final(settled, settled, rows);
    match kept.last() {
        Some(record) => Ok(record.id.value()),
        // `settled` ends a batch number's id range: the last record is at or below it.
        None => history::last_id_through_postgres(conn.postgres()?, settled, settled)
            .map_err(from_query),
    }
}

#[async_trait]
impl HistoryRepository for DieselLockRepository {
    async fn history(
        &self,
        tenant: Tenant,
        query: HistoryQuery,
    ) -> Result<HistoryPage, RepositoryError> {
        let limit = query.limit;
        let read = self
            .inner
            .pooled
            .run(move |conn, _| history::page(conn, &tenant, &query))
            .await?;
        Ok(match read.stopped_at {
            // A page the store cut short: go on below where it stopped.
            Some(at) if read.records.len() <= limit.get() => HistoryPage {
                records: read.records,
                next: HistoryId::new(at).ok(),
            },
            _ => HistoryPage::from_overfetch(read.records, limit),
        })
    }

    async fn history_after(
        &self,
        after: Option<HistoryId>,
        limit: u32,
    ) -> Result<Vec<HistoryRecord>, RepositoryError> {
        self.final_after(after.map_or(0, HistoryId::value), limit)
            .await
    }

    async fn last_history_id(&self) -> Result<Option<HistoryId>, RepositoryError> {
        let inner = self.inner.clone();
        let last = self
            .inner
            .pooled
            .run(move |conn, _| match conn {
                DbConnection::Sqlite(c) => history::last_id_sqlite(c).map_err(from_query),
                DbConnection::Postgres(_) => final_through(&inner.history_frontier, conn),
            })
            .await?;
        Ok(HistoryId::new(last).ok())
    }

    async fn prune_history(
        &self,
        before: DateTime<Utc>,
        batch: u32,
    ) -> Result<usize, RepositoryError> {
        let inner = self.inner.clone();
        let settled = self
            .inner
            .pooled
            .run(move |conn, _| match conn {
                DbConnection::Sqlite(_) => Ok(i64::MAX),
                DbConnection::Postgres(_) => final_through(&inner.history_frontier, conn),
            })
            .await?;
        self.inner
            .writer
            .prune_history(before, batch, settled)
            .await
    }
}
