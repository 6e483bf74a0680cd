//! Reading the requests of the lock routes into domain values: an acquire or renew
//! ([`lease_request`]) and a release ([`release_request`]). Each authenticates, reads the body and
//! parses every input through its field definition (`crate::fields`), in the contract's order of
//! precedence, and lists every invalid input in one 422.

use std::time::Duration;

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LockDelay, LockMode, Owner, ResourceName, Tenant};
use lock_service::AcquireRequest;

use crate::authentication::tenant_of;
use crate::body::{
    declares_body, owner_field, parse_object, read_json_body, ttl_field, wait_field,
};
use crate::fields::lock_delay::{self, lock_delay_field};
use crate::fields::mode::mode_field;
use crate::fields::owner::{owner_field_named, owner_text_named};
use crate::fields::semaphore::value_field;
use crate::problem::{FieldError, ProblemKind};
use crate::query_string::form_decode;
use crate::resource_path::resource_of;
use crate::ApiState;

/// The values of two inputs, or a 422 listing every invalid one.
fn valid2<A, B>(a: Result<A, FieldError>, b: Result<B, FieldError>) -> Result<(A, B), ProblemKind> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (a, b) => Err(ProblemKind::Validation(
            a.err().into_iter().chain(b.err()).collect(),
        )),
    }
}

/// The values of three inputs, or a 422 listing every invalid one.
fn valid3<A, B, C>(
    a: Result<A, FieldError>,
    b: Result<B, FieldError>,
    c: Result<C, FieldError>,
) -> Result<(A, B, C), ProblemKind> {
    match (a, b, c) {
        (Ok(a), Ok(b), Ok(c)) => Ok((a, b, c)),
        (a, b, c) => Err(ProblemKind::Validation(
            a.err().into_iter().chain(b.err()).chain(c.err()).collect(),
        )),
    }
}

/// Whether the request's `wait_seconds` is read (acquire) or ignored like any unknown field
/// (renew).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waits {
    Read,
    Ignored,
}

/// Authenticates, reads and validates an acquire or renew (`{owner, ttl_seconds, value?}` on
/// `/locks/{resource}[/renew]`, and on an acquire `wait_seconds`, `mode` and
/// `lock_delay_seconds`), in the contract's order: 401, 415, 413, 408, 400, then one 422 listing
/// every invalid field. A renew's request has no wait, the exclusive mode (the lease keeps its
/// own) and no lock-delay.
pub(crate) async fn lease_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
    waits: Waits,
) -> Result<AcquireRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let (wait, mode) = match waits {
        Waits::Read => (
            wait_field(fields.wait_seconds, state.settings.max_wait_seconds),
            mode_field(fields.mode),
        ),
        Waits::Ignored => (Ok(0), Ok(LockMode::Exclusive)),
    };
    let lease = valid3(
        resource_of(req),
        owner_field(fields.owner),
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
    );
    let value = value_field(fields.value);
    let lock_delay = match (waits, &mode) {
        (Waits::Ignored, _) => Ok(LockDelay::NONE),
        (Waits::Read, Ok(LockMode::Shared)) => match fields.lock_delay_seconds {
            None => Ok(LockDelay::NONE),
            Some(raw) => lock_delay_field(Some(raw), LockDelay::NONE).and_then(|delay| {
                if delay == LockDelay::NONE {
                    Ok(delay)
                } else {
                    Err(FieldError::new(
                        lock_delay::NAME,
                        "invalid_value",
                        "lock_delay_seconds applies to exclusive locks: a shared lease has none",
                    ))
                }
            }),
        },
        (Waits::Read, _) => {
            lock_delay_field(fields.lock_delay_seconds, state.settings.default_lock_delay)
        }
    };
    let ((resource, owner, ttl), wait, mode, value, lock_delay) =
        match (lease, wait, mode, value, lock_delay) {
            (Ok(lease), Ok(wait), Ok(mode), Ok(value), Ok(lock_delay)) => {
                (lease, wait, mode, value, lock_delay)
            }
            (lease, wait, mode, value, lock_delay) => {
                let mut errors = match lease {
                    Err(ProblemKind::Validation(errors)) => errors,
                    Err(other) => return Err(other),
                    Ok(_) => Vec::new(),
                };
                errors.extend(wait.err());
                errors.extend(mode.err());
                errors.extend(value.err());
                errors.extend(lock_delay.err());
                return Err(ProblemKind::Validation(errors));
            }
        };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(AcquireRequest {
        tenant,
        resource,
        owner,
        ttl,
        wait: Duration::from_secs(u64::from(wait)),
        mode,
        value,
        lock_delay,
    })
}

/// A release, parsed.
pub(crate) struct Release {
    pub tenant: Tenant,
    pub resource: ResourceName,
    pub owner: Owner,
}

/// Authenticates, reads and validates a release of the lock (or semaphore) that `target` reads
/// from the path, in the contract's order: 401, 415, 413, 408, 400, then one 422 listing every
/// invalid input. The owner comes from the JSON body or, when there is none, from `?owner=`;
/// both must agree when both are given.
pub(crate) async fn release_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
    target: fn(&HttpRequest) -> Result<ResourceName, FieldError>,
) -> Result<Release, ProblemKind> {
    release_request_by(req, payload, state, target, "owner").await
}

/// [`release_request`] with the owner named `who` in the body and the query (`owner`, or an
/// election's `candidate`).
pub(crate) async fn release_request_by(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
    target: fn(&HttpRequest) -> Result<ResourceName, FieldError>,
    who: &'static str,
) -> Result<Release, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body_owner = if declares_body(req) {
        let body = read_json_body(req, payload, state.settings.body_timeout).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            // A body names the owner: without one it is `required`, as its schema says.
            let fields = parse_object(&body)?;
            let raw = if who == "owner" {
                fields.owner
            } else {
                fields.candidate
            };
            Some(owner_field_named(who, raw))
        }
    } else {
        None
    };
    let query_owner = query_owner(who, req.query_string());
    let stray = stray_parameters(who, req.query_string());
    let (resource, owner) = match valid2(target(req), reconcile_owner(who, body_owner, query_owner))
    {
        Ok(valid) if stray.is_empty() => valid,
        Ok(_) => return Err(ProblemKind::Validation(stray)),
        Err(ProblemKind::Validation(mut errors)) => {
            errors.extend(stray);
            return Err(ProblemKind::Validation(errors));
        }
        Err(other) => return Err(other),
    };
    Ok(Release {
        tenant,
        resource,
        owner,
    })
}

/// The `who` query parameter(s), form-decoded (`+` is a space); `None` when absent.
fn query_owner(who: &'static str, query: &str) -> Option<Result<Owner, FieldError>> {
    let mut found: Option<Result<Owner, FieldError>> = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if form_decode(key).as_deref() != Ok(who) {
            continue;
        }
        let parsed = form_decode(value)
            .map_err(|_| {
                FieldError::new(
                    who,
                    "invalid_utf8",
                    format!("{who} must be valid UTF-8 once percent-decoded"),
                )
            })
            .and_then(|text| owner_text_named(who, &text));
        found = Some(match (found, parsed) {
            (None, parsed) => parsed,
            (Some(Ok(first)), Ok(next)) if first == next => Ok(first),
            (Some(Err(e)), _) | (_, Err(e)) => Err(e),
            (Some(Ok(_)), Ok(_)) => Err(FieldError::new(
                who,
                "conflict",
                format!("{who} is given twice with different values"),
            )),
        });
    }
    found
}

/// Every query parameter of a release other than `who`, as an error: a `reason` belongs to a
/// force-release (`force=true`), which a request without `force` is not, and any other name is
/// unknown. Ignoring them would let a caller believe its reason was kept, or its misspelt
/// parameter read, while a plain release went ahead.
fn stray_parameters(who: &'static str, query: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let raw_key = pair.split_once('=').map_or(pair, |(key, _)| key);
        let error = match form_decode(raw_key).as_deref() {
            Ok(key) if key == who => continue,
            Ok("reason") => FieldError::new(
                "reason",
                "unexpected",
                format!("reason goes with force=true; a release by its {who} takes only ?{who}="),
            ),
            Ok(key) => FieldError::new(
                key,
                "unknown_parameter",
                format!("unknown parameter {key:?}: a release takes only ?{who}= (or force=true&reason=)"),
            ),
            Err(_) => FieldError::new(
                "query",
                "invalid_utf8",
                "a parameter name is not valid UTF-8 once percent-decoded",
            ),
        };
        if !errors.contains(&error) {
            errors.push(error);
        }
    }
    errors
}

fn reconcile_owner(
    who: &'static str,
    body: Option<Result<Owner, FieldError>>,
    query: Option<Result<Owner, FieldError>>,
) -> Result<Owner, FieldError> {
    match (body, query) {
        (None, None) => Err(FieldError::new(
            who,
            "required",
            format!("{who} is required: in the JSON body, or as ?{who}= when there is no body"),
        )),
        (Some(one), None) | (None, Some(one)) => one,
        (Some(Err(e)), _) | (_, Some(Err(e))) => Err(e),
        (Some(Ok(body)), Some(Ok(query))) if body == query => Ok(body),
        (Some(Ok(_)), Some(Ok(_))) => Err(FieldError::new(
            who,
            "conflict",
            format!("the {who} in the body and the {who} in the query disagree"),
        )),
    }
}
