//! The JSON bodies of the multi-lock answers.

use lock_domain::{ReleaseResult, ResourceName};
use serde::Serialize;
use utoipa::ToSchema;

use super::LockView;

/// The answer to a multi-lock acquire: every lock, or none and the ones that were unavailable.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum MultiAcquireResponse {
    Granted(MultiGranted),
    Unavailable(MultiUnavailable),
}

/// The caller holds every lock it asked for.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MultiGranted {
    /// Always `true` here.
    #[schema(example = true)]
    pub acquired: bool,
    /// The locks, in request order, each with its own fencing token.
    pub locks: Vec<LockView>,
}

/// Some locks could not be granted: none was, and nothing changed.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct MultiUnavailable {
    /// Always `false` here.
    #[schema(example = false)]
    pub acquired: bool,
    /// The locks that could not be granted (held by others, or by the caller in the other mode),
    /// in request order.
    #[schema(example = json!(["account:2"]))]
    pub unavailable: Vec<String>,
}

impl MultiUnavailable {
    pub(crate) fn of(resources: Vec<ResourceName>) -> Self {
        Self {
            acquired: false,
            unavailable: resources
                .into_iter()
                .map(ResourceName::into_string)
                .collect(),
        }
    }
}

/// What a release of several locks did with each.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"results": [
    {"resource": "account:1", "result": "released", "fencing_token": 41},
    {"resource": "account:2", "result": "not_found"}
]}))]
pub(crate) struct ReleaseManyResponse {
    /// One entry per resource, in request order.
    pub results: Vec<ReleaseOne>,
}

/// What a release did with one lock: `released` (as `204` alone), `forbidden` (`403`: another
/// owner holds it), or `not_found` (`404`: no one does).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReleaseOne {
    #[schema(example = "account:1")]
    pub resource: String,
    pub result: ReleaseOutcome,
    /// The ended lease's token (`released` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, example = 41)]
    pub fencing_token: Option<i64>,
}

/// What a release did with one lock.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReleaseOutcome {
    Released,
    Forbidden,
    NotFound,
}

impl ReleaseOne {
    pub(crate) fn of(resource: ResourceName, result: ReleaseResult) -> Self {
        let (result, fencing_token) = match result {
            ReleaseResult::Released(token) => (ReleaseOutcome::Released, Some(token.value())),
            ReleaseResult::Forbidden => (ReleaseOutcome::Forbidden, None),
            ReleaseResult::NotFound => (ReleaseOutcome::NotFound, None),
        };
        Self {
            resource: resource.into_string(),
            result,
            fencing_token,
        }
    }
}
