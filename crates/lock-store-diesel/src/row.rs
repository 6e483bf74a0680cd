//! A `distributed_locks` row and its conversion into the domain's `Lock`.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use std::time::Duration;

use lock_domain::{
    FencingToken, LeaseValue, ListedLock, Lock, LockMode, Owner, RepositoryError, ResourceName,
};

use crate::schema::distributed_locks;

/// A row as every lock statement returns it (`RETURNING` / `SELECT` of all five columns).
#[derive(Debug, Clone, QueryableByName)]
#[diesel(table_name = distributed_locks)]
pub(crate) struct LockRow {
    pub resource: String,
    pub owner: String,
    pub acquired_at_ms: i64,
    pub expires_at_ms: i64,
    pub fencing_token: i64,
    /// The value stored with the lease (compact JSON), or NULL.
    pub value: Option<String>,
}

/// A row of a listing: the lock and the database's "now" it was read at (PostgreSQL's clock;
/// on SQLite the caller knows its own).
#[derive(Debug, QueryableByName)]
pub(crate) struct ListedRow {
    #[diesel(embed)]
    pub lock: LockRow,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub now_ms: i64,
}

/// A live lock and the database's "now" at which it was seen live (read, granted or renewed):
/// what the domain's decisions (`lock_domain::decide_*`) take.
#[derive(Debug)]
pub(crate) struct SeenLive {
    pub lock: LockRow,
    pub now_ms: i64,
}

impl SeenLive {
    /// The lock and the moment, as the domain's decisions take them.
    pub(crate) fn into_domain(self) -> Result<(Lock, DateTime<Utc>), RepositoryError> {
        let now = millis(self.now_ms)
            .ok_or_else(|| RepositoryError::internal(CorruptRow(format!("now {}", self.now_ms))))?;
        Ok((Lock::try_from(self.lock)?, now))
    }
}

/// How many rows a count matched.
#[derive(Debug, QueryableByName)]
pub(crate) struct CountRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub count: i64,
}

/// A row whose values the domain would not accept: the data is corrupt, never the caller's fault.
#[derive(Debug, thiserror::Error)]
#[error("corrupt row for a lock: {0}")]
pub(crate) struct CorruptRow(pub(crate) String);

impl TryFrom<LockRow> for Lock {
    type Error = RepositoryError;

    fn try_from(row: LockRow) -> Result<Self, Self::Error> {
        let corrupt = |what: String| RepositoryError::internal(CorruptRow(what));
        // The row of a lock held in shared mode stands for its shared holders (see the domain's
        // `shared.rs`): its owner is the marker no client can name itself.
        let owner = Owner::from_stored(&row.owner).map_err(|e| corrupt(format!("owner {e}")))?;
        let mode = if owner.is_shared_holders() {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        };
        Ok(Lock {
            resource: ResourceName::parse(row.resource)
                .map_err(|e| corrupt(format!("resource {e}")))?,
            owner,
            acquired_at: millis(row.acquired_at_ms).ok_or_else(|| corrupt("acquired_at".into()))?,
            expires_at: millis(row.expires_at_ms).ok_or_else(|| corrupt("expires_at".into()))?,
            fencing_token: FencingToken::new(row.fencing_token)
                .map_err(|value| corrupt(format!("fencing token {value}")))?,
            mode,
            value: row
                .value
                .map(LeaseValue::parse)
                .transpose()
                .map_err(|e| corrupt(format!("value {e}")))?,
        })
    }
}

impl ListedRow {
    /// The listed lock with its remaining lease at the row's `now_ms`.
    pub(crate) fn into_listed(self) -> Result<ListedLock, RepositoryError> {
        let remaining_ms = (self.lock.expires_at_ms - self.now_ms).max(0);
        Ok(ListedLock {
            lock: Lock::try_from(self.lock)?,
            ttl_remaining: Duration::from_millis(remaining_ms as u64),
        })
    }
}

pub(crate) fn millis(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}
