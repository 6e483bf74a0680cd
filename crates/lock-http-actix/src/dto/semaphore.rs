//! The JSON bodies of the semaphore answers.

use lock_domain::{Lease, Permit, SemaphoreState};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::timestamp;

/// One holder's grant on a semaphore.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 18}))]
pub(crate) struct PermitView {
    /// The semaphore's name.
    #[schema(example = "export")]
    pub name: String,
    /// The holder, as it named itself (trimmed).
    #[schema(example = "worker-7")]
    pub owner: String,
    /// The session the lease is held under, when it is: its holder is then the session (whose
    /// owner label the owner shows) and it ends with the session. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub session: Option<String>,
    /// How many permits this grant holds.
    #[schema(value_type = i64, minimum = 1, example = 2)]
    pub permits: u32,
    /// The semaphore's limit.
    #[schema(value_type = i64, minimum = 1, maximum = 10000, example = 8)]
    pub limit: u32,
    /// When this grant was made (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:27.123Z")]
    pub acquired_at: String,
    /// When the lease ends unless renewed (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:57.123Z")]
    pub expires_at: String,
    /// This grant's own token: larger than every token issued before it. Kept by renewals and
    /// re-grants to the same owner.
    #[schema(minimum = 1, example = 18)]
    pub fencing_token: i64,
    /// The value stored with the grant; absent when never set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = serde_json::Value, nullable = false)]
    pub value: Option<Box<RawValue>>,
}

impl PermitView {
    /// The grant `lease` on semaphore `name`.
    pub(crate) fn of(name: String, lease: Lease) -> Self {
        let (owner, session) = super::holder(&lease.owner);
        Self {
            name,
            owner,
            session,
            permits: lease.weight.get(),
            limit: lease.capacity.get(),
            acquired_at: timestamp(lease.acquired_at),
            expires_at: timestamp(lease.expires_at),
            fencing_token: lease.fencing_token.value(),
            // Stored values were checked as JSON when they were given.
            value: lease
                .value
                .and_then(|value| RawValue::from_string(value.as_str().to_owned()).ok()),
        }
    }
}

impl From<Permit> for PermitView {
    fn from(permit: Permit) -> Self {
        Self::of(permit.name.into_string(), permit.lease)
    }
}

/// The answer to an acquire of permits: granted, or not (too few are free).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum PermitAcquireResponse {
    Granted(PermitGranted),
    Unavailable(PermitUnavailable),
}

/// The caller holds the permits.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PermitGranted {
    /// Always `true` here.
    #[schema(example = true)]
    pub acquired: bool,
    pub permit: PermitView,
}

/// Too few permits are free (or, on this server, earlier waiters come first): retry later. Not
/// an error.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PermitUnavailable {
    /// Always `false` here.
    #[schema(example = false)]
    pub acquired: bool,
    /// The semaphore's name.
    #[schema(example = "export")]
    pub name: String,
    /// The semaphore's limit.
    #[schema(value_type = i64, minimum = 1, maximum = 10000, example = 8)]
    pub limit: u32,
    /// The permits free when the answer was made.
    #[schema(value_type = i64, minimum = 0, example = 1)]
    pub available: u64,
}

/// A semaphore and its live holders.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SemaphoreView {
    /// The semaphore's name.
    #[schema(example = "export")]
    pub name: String,
    /// The limit its live holders use.
    #[schema(value_type = i64, minimum = 1, maximum = 10000, example = 8)]
    pub limit: u32,
    /// The permits the live holders take.
    #[schema(value_type = i64, minimum = 1, example = 2)]
    pub in_use: u64,
    /// `limit - in_use`.
    #[schema(value_type = i64, minimum = 0, example = 6)]
    pub available: u64,
    /// The live holders, by fencing token.
    pub holders: Vec<PermitView>,
    /// Acquires waiting for permits of this semaphore on this server.
    #[schema(value_type = i64, minimum = 0, example = 0)]
    pub waiting: u64,
}

impl SemaphoreView {
    /// `state` as read (its holders were live then), with `waiting` waiters on this server.
    pub(crate) fn of(state: SemaphoreState, waiting: usize) -> Self {
        let in_use = state.in_use();
        let available = u64::from(state.limit.get()).saturating_sub(in_use);
        let name = state.name.into_string();
        Self {
            limit: state.limit.get(),
            in_use,
            available,
            holders: state
                .holders
                .into_iter()
                .map(|lease| PermitView::of(name.clone(), lease))
                .collect(),
            waiting: waiting as u64,
            name,
        }
    }
}

/// One page of a listing of semaphores.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SemaphoreList {
    /// The semaphores of this page that have a live holder, by name, bytewise.
    pub semaphores: Vec<SemaphoreView>,
    /// Pass as `cursor` for the next page. Absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_cursor: Option<String>,
}
