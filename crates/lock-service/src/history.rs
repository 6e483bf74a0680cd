//! Durable history: a tenant's records a page at a time, and the tenant's event stream
//! ([`HistoryFeed`]): every record as it becomes final in the store, resumable from any id the
//! retention still holds, with nothing lost and nothing twice.

pub(crate) mod feed;

use lock_domain::{HistoryPage, HistoryQuery, RepositoryError, Tenant};

pub use feed::{FeedFilter, FeedStart, HistoryFeed};

use crate::core::Core;
use crate::quota::OpenError;

/// The durable history's use cases: a view over the process's [`Core`], from
/// [`crate::LockService::history`].
#[derive(Clone, Copy)]
pub struct History<'a> {
    pub(crate) core: &'a Core,
}

impl History<'_> {
    /// The tenant's records `query` asks for, newest first.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store fails.
    pub async fn records(
        &self,
        tenant: Tenant,
        query: HistoryQuery,
    ) -> Result<HistoryPage, RepositoryError> {
        self.core.history.history(tenant, query).await
    }

    /// The records `filter` admits, oldest first, from `start`. Must be called inside a tokio
    /// runtime.
    ///
    /// # Errors
    /// [`OpenError::QuotaExceeded`] when the tenant has as many observers as its
    /// `max_observers` allows (an event stream counts as one); [`OpenError::Store`] when the
    /// store fails to say where "now" is.
    pub async fn follow(
        &self,
        filter: FeedFilter,
        start: FeedStart,
    ) -> Result<HistoryFeed, OpenError> {
        let seat = self.core.observer_seat(&filter.tenant)?;
        let mut feed = self.core.history_hub.follow(filter, start).await?;
        feed.seat = Some(seat);
        Ok(feed)
    }

    /// Streams of the event feed open in this process.
    pub fn followers(&self) -> usize {
        self.core.history_hub.followers()
    }
}

#[cfg(test)]
mod tests;
