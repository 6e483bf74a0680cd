//! The JSON bodies of the history routes and of the event stream's records.

use lock_domain::{HistoryPage, HistoryRecord};
use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;

/// One change to one lease.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HistoryRecordView {
    /// The record's position in the history: larger is later. The event stream's `id:`.
    #[schema(minimum = 1, example = 1742)]
    pub id: i64,
    /// What the lease is of: `lock` (exclusive or shared), `semaphore` or `election`.
    #[schema(example = "lock", pattern = "^(lock|semaphore|election)$")]
    pub kind: &'static str,
    /// The lock's, semaphore's or election's name.
    #[schema(example = "payment:42")]
    pub name: String,
    /// The lease's holder.
    #[schema(example = "worker-7")]
    pub owner: String,
    /// The session the lease is held under, when it is: its holder is then the session (whose
    /// owner label the owner shows) and it ends with the session. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub session: Option<String>,
    /// The lease's fencing token (an election's term).
    #[schema(minimum = 1, example = 17)]
    pub fencing_token: i64,
    /// What happened: `granted` (a new lease), `re-granted` (the holder acquired again),
    /// `renewed`, `released` (by its holder), `expired` (recorded when lockd saw it: at the next
    /// grant, or at a sweep), `force-released` (by an admin), `undone` (a grant nobody heard of).
    #[schema(
        example = "granted",
        pattern = "^(granted|re-granted|renewed|released|expired|force-released|undone)$"
    )]
    pub event: &'static str,
    /// When it was committed (RFC 3339, UTC, milliseconds), by the database's clock.
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:27.123Z")]
    pub at: String,
    /// Why, when someone said: the reason of a force-release. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "worker-9 is wedged (INC-4411)")]
    pub reason: Option<String>,
    /// Whether the lease was a shared (read) lease of a lock.
    #[schema(example = false)]
    pub shared: bool,
}

impl From<HistoryRecord> for HistoryRecordView {
    fn from(record: HistoryRecord) -> Self {
        let (owner, session) = super::holder(&record.owner);
        Self {
            id: record.id.value(),
            kind: record.kind.as_str(),
            name: record.name.into_string(),
            owner,
            session,
            fencing_token: record.fencing_token.value(),
            event: record.event.as_str(),
            at: timestamp(record.at),
            reason: record.reason,
            shared: record.shared,
        }
    }
}

/// A page of history, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HistoryList {
    pub records: Vec<HistoryRecordView>,
    /// Where the next (older) page starts: pass it as `cursor`. Absent on the last page. A page
    /// may hold fewer records than `limit`, even none, and still have one (a request reads a
    /// bounded part of a long history): follow it until it is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "1742")]
    pub next_cursor: Option<String>,
}

impl From<HistoryPage> for HistoryList {
    fn from(page: HistoryPage) -> Self {
        Self {
            records: page
                .records
                .into_iter()
                .map(HistoryRecordView::from)
                .collect(),
            next_cursor: page.next.map(|id| id.value().to_string()),
        }
    }
}
