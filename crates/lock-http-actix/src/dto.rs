//! The JSON bodies of the API's answers, as served and as documented in the OpenAPI document,
//! built from domain values. (Requests are parsed and documented field by field from
//! `crate::fields`.)

mod election;
mod fence;
mod history;
mod hold;
mod multi;
mod semaphore;
mod session;

pub(crate) use election::{
    CampaignResponse, ElectionFenceResponse, ElectionFenceValid, ElectionList, LeaderView,
    ListedElectionView,
};
pub(crate) use fence::{
    FenceStale, LockFenceResponse, LockFenceValid, PermitFenceResponse, PermitFenceValid,
};
pub(crate) use history::{HistoryList, HistoryRecordView};
pub(crate) use hold::LockStatus;
pub(crate) use multi::{
    MultiAcquireResponse, MultiGranted, MultiUnavailable, ReleaseManyResponse, ReleaseOne,
    ReleaseOutcome,
};

pub(crate) use semaphore::{
    PermitAcquireResponse, PermitGranted, PermitUnavailable, PermitView, SemaphoreList,
    SemaphoreView,
};
pub(crate) use session::{
    HoldView, ListedSessionView, SessionHoldsResponse, SessionList, SessionResponse, SessionView,
};

use chrono::{DateTime, SecondsFormat, Utc};
use lock_domain::{ListedLock, Lock, LockMode};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

/// A live lock.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LockView {
    /// The locked resource name.
    #[schema(example = "payment:42")]
    pub resource: String,
    /// The holder, as it named itself (trimmed).
    #[schema(example = "worker-7")]
    pub owner: String,
    /// The session the lease is held under, when it is: its holder is then the session (whose
    /// owner label the owner shows) and it ends with the session. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub session: Option<String>,
    /// When this grant was made (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:27.123Z")]
    pub acquired_at: String,
    /// When the lease ends unless renewed (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:57.123Z")]
    pub expires_at: String,
    /// Strictly increases with every new grant of the resource; kept by renewals and same-owner
    /// re-acquires. Pass it to downstream systems so they can reject a stale holder.
    #[schema(minimum = 1, example = 17)]
    pub fencing_token: i64,
    /// How the lock is held: `exclusive` (alone) or `shared` (beside other shared holders, each
    /// with its own lease and token).
    pub mode: Mode,
    /// The value stored with this holder's lease; absent when never set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = serde_json::Value, nullable = false)]
    pub value: Option<Box<RawValue>>,
}

/// How a lock is held: `exclusive` (one holder excludes every other) or `shared` (shared holders
/// coexist, each with its own lease and fencing token).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    Exclusive,
    Shared,
}

impl From<LockMode> for Mode {
    fn from(mode: LockMode) -> Self {
        match mode {
            LockMode::Exclusive => Mode::Exclusive,
            LockMode::Shared => Mode::Shared,
        }
    }
}

pub(crate) fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// How a lease's holder shows: its owner (a session's owner label) and its session, if any.
pub(crate) fn holder(owner: &lock_domain::Owner) -> (String, Option<String>) {
    (
        owner.label().to_owned(),
        owner.session().map(|id| id.as_str().to_owned()),
    )
}

impl From<Lock> for LockView {
    fn from(lock: Lock) -> Self {
        let (owner, session) = holder(&lock.owner);
        Self {
            resource: lock.resource.into_string(),
            owner,
            session,
            acquired_at: timestamp(lock.acquired_at),
            expires_at: timestamp(lock.expires_at),
            fencing_token: lock.fencing_token.value(),
            mode: lock.mode.into(),
            // Stored values were checked as JSON when they were given.
            value: lock
                .value
                .and_then(|value| RawValue::from_string(value.as_str().to_owned()).ok()),
        }
    }
}

/// A live lock as listed: the lock and how long its lease still runs.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListedLockView {
    #[serde(flatten)]
    pub lock: LockView,
    /// Milliseconds until `expires_at`, measured by the server when it read the page (on
    /// PostgreSQL by the database clock). Use it rather than comparing `expires_at` with your
    /// own clock.
    #[schema(minimum = 0, example = 29_873)]
    pub ttl_remaining_ms: u64,
    /// Acquires waiting for this lock on this server.
    #[schema(value_type = i64, minimum = 0, example = 0)]
    pub waiting: u64,
}

impl ListedLockView {
    /// `listed`, with `waiting` acquires waiting for it on this server.
    pub(crate) fn of(listed: ListedLock, waiting: usize) -> Self {
        Self {
            lock: listed.lock.into(),
            ttl_remaining_ms: remaining_ms(listed.ttl_remaining),
            waiting: waiting as u64,
        }
    }
}

/// A remaining lease in whole milliseconds.
pub(crate) fn remaining_ms(remaining: std::time::Duration) -> u64 {
    u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX)
}

/// One page of a listing.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "locks": [{
        "resource": "payment:42",
        "owner": "worker-7",
        "acquired_at": "2026-11-29T21:32:27.123Z",
        "expires_at": "2026-11-29T21:32:57.123Z",
        "fencing_token": 17,
        "mode": "exclusive",
        "ttl_remaining_ms": 29873,
        "waiting": 0
    }],
    "next_cursor": "AXBheW1lbnQ6NDI"
}))]
pub(crate) struct LockList {
    /// The live locks of this page, by resource name, bytewise.
    pub locks: Vec<ListedLockView>,
    /// Pass as `cursor` for the next page. Absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_cursor: Option<String>,
}

/// The answer to an acquire: granted with the lock, or not (someone else holds it).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum AcquireResponse {
    Granted(AcquireGranted),
    Held(AcquireHeld),
}

/// The caller holds the lock.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AcquireGranted {
    /// Always `true` here.
    #[schema(example = true)]
    pub acquired: bool,
    pub lock: LockView,
}

/// Another owner holds a live lock on the resource: retry later. Not an error.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AcquireHeld {
    /// Always `false` here.
    #[schema(example = false)]
    pub acquired: bool,
    /// The resource that is held.
    #[schema(example = "payment:42")]
    pub resource: String,
}

/// Liveness or readiness.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HealthStatus {
    /// `ok` from `/healthz`, `ready` from `/readyz`.
    #[schema(example = "ok")]
    pub status: &'static str,
}
