//! The answers of the `/sessions` routes: a session, its holds, and the listing.

use lock_domain::{LeaseKind, Session, SessionHold};
use serde::Serialize;
use utoipa::ToSchema;

use super::{timestamp, Mode};

/// A session: one lease that keeps every hold taken under it alive.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SessionView {
    /// The session's id: opaque and unguessable (128 random bits, URL-safe base64). Send it as
    /// `session` to hold under the session, and keep it secret as you would a key.
    #[schema(example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub id: String,
    /// The label every hold of the session shows as its owner (the id when none was given).
    #[schema(example = "worker-7")]
    pub owner: String,
    /// The session's TTL: each keepalive moves its end to now plus this.
    #[schema(minimum = 1, example = 10)]
    pub ttl_seconds: u32,
    /// Once the session runs out (not when it is closed or forced), each hold's place stays kept
    /// from others for this long.
    #[schema(minimum = 0, maximum = 60, example = 0)]
    pub lock_delay_seconds: u32,
    /// When it was opened (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:27.123Z")]
    pub created_at: String,
    /// When it ends, and every hold with it, unless kept alive (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:37.123Z")]
    pub expires_at: String,
}

impl From<Session> for SessionView {
    fn from(session: Session) -> Self {
        Self {
            id: session.id.as_str().to_owned(),
            owner: session.owner.into_string(),
            ttl_seconds: session.ttl.seconds(),
            lock_delay_seconds: session.lock_delay.seconds(),
            created_at: timestamp(session.created_at),
            expires_at: timestamp(session.expires_at),
        }
    }
}

/// The answer of an open or a keepalive.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SessionResponse {
    pub session: SessionView,
}

/// What a session holds: `lock` (with its `mode`), `semaphore` (with its `permits`) or
/// `election` (a leadership, with its `term`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HoldView {
    #[schema(example = "lock", pattern = "^(lock|semaphore|election)$")]
    pub kind: &'static str,
    /// The lock's, semaphore's or election's name.
    #[schema(example = "payment:42")]
    pub name: String,
    /// The hold's own fencing token (an election's: its term).
    #[schema(minimum = 1, example = 17)]
    pub fencing_token: i64,
    /// A lock's mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub mode: Option<Mode>,
    /// A semaphore's permits held.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, example = 2)]
    pub permits: Option<u32>,
    /// An election's term (the leader's fencing token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, example = 42)]
    pub term: Option<i64>,
}

impl From<SessionHold> for HoldView {
    fn from(hold: SessionHold) -> Self {
        let SessionHold { kind, grant } = hold;
        let token = grant.lease.fencing_token.value();
        let (mode, permits, term) = match kind {
            LeaseKind::Lock => (grant.mode().map(Mode::from), None, None),
            LeaseKind::Semaphore => (None, Some(grant.lease.weight.get()), None),
            LeaseKind::Election => (None, None, Some(token)),
        };
        Self {
            kind: kind.as_str(),
            name: grant.place.name().as_str().to_owned(),
            fencing_token: token,
            mode,
            permits,
            term,
        }
    }
}

/// A live session and its live holds.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SessionHoldsResponse {
    pub session: SessionView,
    pub holds: Vec<HoldView>,
}

/// A live session as listed.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListedSessionView {
    #[serde(flatten)]
    pub session: SessionView,
    /// How many live holds it has.
    #[schema(minimum = 0, example = 3)]
    pub holds: u64,
    /// Milliseconds until `expires_at`, measured by the server when it read the page.
    #[schema(minimum = 0, example = 8312)]
    pub ttl_remaining_ms: u64,
}

/// A page of the tenant's live sessions, by id.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SessionList {
    pub sessions: Vec<ListedSessionView>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_cursor: Option<String>,
}
