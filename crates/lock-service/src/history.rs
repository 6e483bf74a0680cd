//! Durable history: a tenant's records a page at a time, and the tenant's event stream
//! ([`HistoryFeed`]): every record as it becomes final in the store, resumable from any id the
//! retention still holds, with nothing lost and nothing twice.

mod feed;

use lock_domain::{
    HistoryPage, HistoryQuery, HistoryRecord, LeaseKind, RepositoryError, ResourcePrefix, Tenant,
};

pub use feed::HistoryFeed;
pub(crate) use feed::HistoryHub;

use crate::core::Core;
use crate::quota::OpenError;

/// Where a feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedStart {
    /// With the first record committed from now on.
    Now,
    /// After the record with this id (one the client last saw; 0: with the oldest record the
    /// retention still holds).
    After(u64),
}

/// Which records a feed passes on: the tenant's, whose name starts with the prefix, of the
/// kinds asked for (every kind when none is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedFilter {
    pub tenant: Tenant,
    pub prefix: ResourcePrefix,
    pub kinds: Vec<LeaseKind>,
}

impl FeedFilter {
    /// Whether `record` is one this filter passes on.
    pub fn admits(&self, record: &HistoryRecord) -> bool {
        record.tenant == self.tenant
            && self.prefix.matches(&record.name)
            && (self.kinds.is_empty() || self.kinds.contains(&record.kind))
    }
}

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
