//! An admin's force-release: `DELETE /locks/{resource}?force=true&reason=...` (and the same on
//! `/semaphores/{name}` and `/elections/{name}/leader`) ends every live lease of the name at
//! once (`lock_service::Locks::force_release`). Only an admin key of the tenant may
//! (403 `/problems/admin-required` otherwise); the reason is kept in the history.

use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{ForceReason, LeaseKind, ResourceName};
use serde::Serialize;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};
use utoipa::{IntoParams, ToSchema};

use crate::authentication::admin_of;
use crate::body::declares_body;
use crate::problem::{FieldError, ProblemKind};
use crate::query_string::{form_decode, parameters};
use crate::resource_path::{election_of, resource_of, semaphore_of};
use crate::ApiState;

/// Whether the request asks for a force-release (it has a `force` parameter).
pub(crate) fn asked(req: &HttpRequest) -> bool {
    req.query_string()
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(key, _)| key))
        .any(|key| form_decode(key).as_deref() == Ok("force"))
}

/// One lease a force-release ended.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EndedLease {
    /// Its holder.
    #[schema(example = "worker-9")]
    pub owner: String,
    /// The session the lease is held under, when it is: its holder is then the session (whose
    /// owner label the owner shows) and it ends with the session. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = "q7Hc0mB1TzK4n9XwVd2aLg")]
    pub session: Option<String>,
    /// Its fencing token (an election's term).
    #[schema(minimum = 1, example = 17)]
    pub fencing_token: i64,
}

/// What a force-release ended: every live lease of the name.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"force_released": [{"owner": "worker-9", "fencing_token": 17}]}))]
pub(crate) struct ForceReleasedResponse {
    pub force_released: Vec<EndedLease>,
}

/// `force=true&reason=...` of a force-release.
pub(crate) struct ForceQuery;

impl IntoParams for ForceQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        // No examples: Swagger UI would fill them in on every plain release it tries out.
        vec![
            ParameterBuilder::new()
                .name("force")
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(
                    "`true` to end every live lease of the name whoever holds it (an admin key \
                     only; 403 `/problems/admin-required` otherwise). Then `reason` is required \
                     and no owner or body is given; the answer is 200 with the leases ended.",
                ))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(["true"])),
                ))
                .build(),
            ParameterBuilder::new()
                .name("reason")
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(
                    "Why (with `force=true` only: a release by its owner with a `reason` is a \
                     422, `unexpected`): 1 to 256 characters, no control characters; kept in the \
                     history with the force-release.",
                ))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1))
                        .max_length(Some(ForceReason::MAX_CHARS))
                        .pattern(Some(crate::fields::pattern::reason())),
                ))
                .build(),
        ]
    }
}

/// The reason of a force-release, with `force=true` and nothing else in the query.
pub(crate) fn reason_of(query: &str) -> Result<ForceReason, Vec<FieldError>> {
    let mut errors = Vec::new();
    let (mut force, mut reason) = (false, None);
    for parameter in parameters(query, &["force", "reason"]) {
        match parameter {
            Err(error) => errors.push(error),
            Ok((key, value)) if key == "force" => {
                if value == "true" {
                    force = true;
                } else {
                    errors.push(FieldError::new(
                        "force",
                        "invalid_value",
                        "force must be true",
                    ));
                }
            }
            Ok((_, value)) => match ForceReason::parse(&value) {
                Ok(parsed) => reason = Some(parsed),
                Err(e) => errors.push(FieldError::new("reason", e.code(), format!("reason {e}"))),
            },
        }
    }
    match reason {
        Some(reason) if force && errors.is_empty() => Ok(reason),
        None if errors.iter().all(|e| e.field != "reason") => {
            errors.push(FieldError::new(
                "reason",
                "required",
                "a force-release needs a reason",
            ));
            Err(errors)
        }
        _ => Err(errors),
    }
}

/// Answers a force-release of the lock, semaphore or election the path names.
pub(crate) async fn answer(
    req: &HttpRequest,
    state: &ApiState,
    kind: LeaseKind,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = admin_of(req, state)?;
    let name = match kind {
        LeaseKind::Lock => resource_of(req),
        LeaseKind::Semaphore => semaphore_of(req),
        LeaseKind::Election => election_of(req),
    };
    let mut errors: Vec<FieldError> = name.as_ref().err().cloned().into_iter().collect();
    let reason = reason_of(req.query_string()).map_err(|more| errors.extend(more));
    if declares_body(req) {
        errors.push(FieldError::new(
            "body",
            "unexpected",
            "a force-release takes no body",
        ));
    }
    let (Ok(name), Ok(reason), true) = (name, reason, errors.is_empty()) else {
        return Err(ProblemKind::Validation(errors));
    };
    let ended: Vec<EndedLease> = match kind {
        LeaseKind::Semaphore => state
            .service
            .semaphores()
            .force_release(tenant, name.clone(), reason)
            .await?
            .into_iter()
            .map(|grant| EndedLease {
                owner: grant.lease.owner.label().to_owned(),
                session: grant.lease.owner.session().map(|id| id.as_str().to_owned()),
                fencing_token: grant.lease.fencing_token.value(),
            })
            .collect(),
        LeaseKind::Lock | LeaseKind::Election => {
            let ended = if kind == LeaseKind::Lock {
                state
                    .service
                    .locks()
                    .force_release(tenant, name.clone(), reason)
                    .await?
            } else {
                state
                    .service
                    .elections()
                    .force_release(tenant, name.clone(), reason)
                    .await?
            };
            ended
                .into_iter()
                .map(|lock| EndedLease {
                    owner: lock.owner.label().to_owned(),
                    session: lock.owner.session().map(|id| id.as_str().to_owned()),
                    fencing_token: lock.fencing_token.value(),
                })
                .collect()
        }
    };
    if ended.is_empty() {
        return Err(nothing_held(kind, &name));
    }
    Ok(HttpResponse::Ok().json(ForceReleasedResponse {
        force_released: ended,
    }))
}

fn nothing_held(kind: LeaseKind, name: &ResourceName) -> ProblemKind {
    ProblemKind::NotFound(format!(
        "no live lease of the {} {:?}: nothing was ended",
        kind.as_str(),
        name.as_str()
    ))
}
