//! The JSON bodies of the election routes.

use lock_domain::Leader;
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{ObjectBuilder, Ref, Type};
use utoipa::ToSchema;

use super::{timestamp, FenceStale};

/// The leader of an election.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LeaderView {
    /// The election's name.
    #[schema(example = "scheduler")]
    pub election: String,
    /// The leader, as it named itself (trimmed).
    #[schema(example = "node-a")]
    pub candidate: String,
    /// The session the lease is held under, when it is: its holder is then the session (whose
    /// owner label the candidate shows) and it ends with the session. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub session: Option<String>,
    /// What the leader proclaims (set by its campaign or a proclaim); absent when never set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = serde_json::Value, nullable = false)]
    pub value: Option<Box<RawValue>>,
    /// The leader's fencing token: larger than every earlier leader's. Kept while the same leader
    /// renews, proclaims or campaigns again.
    #[schema(minimum = 1, example = 42)]
    pub term: i64,
    /// When the leader's lease was last granted (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:27.123Z")]
    pub elected_at: String,
    /// When the leader's lease ends unless renewed (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-11-29T21:32:42.123Z")]
    pub expires_at: String,
}

impl From<Leader> for LeaderView {
    fn from(leader: Leader) -> Self {
        let (candidate, session) = super::holder(&leader.candidate);
        Self {
            election: leader.election.into_string(),
            candidate,
            session,
            // Stored values were checked as JSON when they were given.
            value: leader
                .value
                .and_then(|value| RawValue::from_string(value.as_str().to_owned()).ok()),
            term: leader.term.value(),
            elected_at: timestamp(leader.elected_at),
            expires_at: timestamp(leader.expires_at),
        }
    }
}

/// The answer to a campaign: `elected: true` with the candidate as leader, or `elected: false`
/// with whoever leads (`null` when the office fell vacant just after).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CampaignResponse {
    /// Whether the candidate leads now.
    #[schema(example = true)]
    pub elected: bool,
    /// The leader: the candidate when elected, another candidate or `null` when not.
    #[schema(schema_with = leader_or_null, required = true)]
    pub leader: Option<LeaderView>,
}

/// `leader`: always present, a leader or `null` (a vacant office is a value, not a member left
/// out), as `oneOf`.
fn leader_or_null() -> Schema {
    Schema::OneOf(
        OneOfBuilder::new()
            .item(Ref::from_schema_name("LeaderView"))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .description(Some(
                "The leader: the candidate when elected; otherwise whoever leads, or `null` when \
                 no one does.",
            ))
            .build(),
    )
}

/// The answer to an election's fence check: the term is the sitting leader's (with the leader),
/// or it is not.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum ElectionFenceResponse {
    Valid(ElectionFenceValid),
    Stale(FenceStale),
}

/// The term is the term of the leader in office right now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ElectionFenceValid {
    /// Always `true` here.
    #[schema(example = true)]
    pub valid: bool,
    /// The leader in office, whose term it is.
    pub leader: LeaderView,
}

/// An election with a leader, as listed.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListedElectionView {
    #[serde(flatten)]
    pub leader: LeaderView,
    /// Milliseconds until the leader's `expires_at`, measured by the server when it read the
    /// page (on PostgreSQL by the database clock).
    #[schema(minimum = 0, example = 14_873)]
    pub ttl_remaining_ms: u64,
    /// Campaigns waiting for the office on this server.
    #[schema(value_type = i64, minimum = 0, example = 1)]
    pub waiting: u64,
}

/// One page of the elections that have a leader.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ElectionList {
    pub elections: Vec<ListedElectionView>,
    /// Where the next page starts: pass it as `cursor`. Absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "AXNjaGVkdWxlcg")]
    pub next_cursor: Option<String>,
}
