//! Reading the requests of the lock routes into domain values: an acquire or renew
//! ([`lease_request`]) and a release ([`release_request`]). Each authenticates, reads the body and
//! parses every input through its field definition (`crate::fields`), in the contract's order of
//! precedence, and lists every invalid input in one 422.

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LockMode, Owner, ResourceName, Tenant};
use lock_service::AcquireRequest;

use crate::authentication::tenant_of;
use crate::body::{declares_body, parse_object, read_json_body};
use crate::fields::mode::mode_field;
use crate::fields::owner::{owner_field_named, owner_text_named};
use crate::fields::session::{self, session_field};
use crate::lease_terms::{Delay, Holder, Invalid, Terms, Wait};
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

/// Authenticates, reads and validates an acquire or renew (`{owner, ttl_seconds, value?}` on
/// `/locks/{resource}[/renew]`, and on an acquire `wait_seconds`, `mode` and
/// `lock_delay_seconds`), in the contract's order: 401, 415, 413, 408, 400, then one 422 listing
/// every invalid field. A renew's request has no wait, the exclusive mode (the lease keeps its
/// own) and no lock-delay.
pub(crate) async fn lease_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
    wait: Wait,
) -> Result<AcquireRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mode = match wait {
        Wait::Read => mode_field(fields.mode),
        Wait::Ignored => Ok(LockMode::Exclusive),
    };
    let delay = match (wait, &mode) {
        (Wait::Ignored, _) => Delay::Ignored,
        (Wait::Read, Ok(LockMode::Shared)) => {
            Delay::Refused("lock_delay_seconds applies to exclusive locks: a shared lease has none")
        }
        (Wait::Read, _) => Delay::OrDefault,
    };
    let terms = Terms::read(&fields, Holder::Owner, wait, delay, &state.settings);
    let mut invalid = Invalid::default();
    let resource = invalid.take(resource_of(req));
    let owner = invalid.take(terms.holder);
    let ttl = invalid.take(terms.ttl);
    let wait = invalid.take(terms.wait);
    let mode = invalid.take(mode);
    let value = invalid.take(terms.value);
    let lock_delay = invalid.take(terms.lock_delay);
    let (
        Some(resource),
        Some(owner),
        Some(ttl),
        Some(wait),
        Some(mode),
        Some(value),
        Some(lock_delay),
    ) = (resource, owner, ttl, wait, mode, value, lock_delay)
    else {
        return Err(invalid.problem());
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(AcquireRequest {
        tenant,
        resource,
        wait,
        mode,
        terms: lock_domain::LeaseTerms {
            owner,
            ttl,
            value,
            lock_delay,
        },
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
    let (body_owner, body_session) = if declares_body(req) {
        let body = read_json_body(req, payload, state.settings.body_timeout).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            (None, None)
        } else {
            // A body names the owner (or the session): without one it is `required`, as its
            // schema says.
            let fields = parse_object(&body)?;
            let raw = if who == "owner" {
                fields.owner
            } else {
                fields.candidate
            };
            match session_field(fields.session).transpose() {
                Some(session) if raw.is_none() => (None, Some(session)),
                session => (Some(owner_field_named(who, raw)), session),
            }
        }
    } else {
        (None, None)
    };
    let query_owner = query_owner(who, req.query_string());
    let query_session = query_session(req.query_string());
    let stray = stray_parameters(who, req.query_string());
    // A session's hold is released by its session: the session is the holder.
    let (body_owner, query_owner) = match body_session.or(query_session) {
        None => (body_owner, query_owner),
        Some(session) => match (body_owner, query_owner) {
            (None, None) => (Some(session.map(|id| Owner::of_session(&id))), None),
            _ => (
                Some(Err(FieldError::new(
                    who,
                    "conflict",
                    format!("{who} cannot be given with session: the session is the holder"),
                ))),
                None,
            ),
        },
    };
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

/// The `?session=` of a release of a session's hold; `None` when absent.
fn query_session(query: &str) -> Option<Result<lock_domain::SessionId, FieldError>> {
    let mut found = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if form_decode(key).as_deref() != Ok(session::NAME) {
            continue;
        }
        let parsed = form_decode(value)
            .map_err(|_| {
                FieldError::new(
                    session::NAME,
                    "invalid_utf8",
                    "session must be valid UTF-8 once percent-decoded",
                )
            })
            .and_then(|text| session::session_text(&text));
        found = Some(match (found, parsed) {
            (None, parsed) => parsed,
            (Some(Ok(first)), Ok(next)) if first == next => Ok(first),
            (Some(Err(e)), _) | (_, Err(e)) => Err(e),
            (Some(Ok(_)), Ok(_)) => Err(FieldError::new(
                session::NAME,
                "conflict",
                "session is given twice with different values",
            )),
        });
    }
    found
}

/// Every query parameter of a release other than `who` (and `session`), as an error: a `reason`
/// belongs to a force-release (`force=true`), which a request without `force` is not, and any
/// other name is unknown. Ignoring them would let a caller believe its reason was kept, or its
/// misspelt parameter read, while a plain release went ahead.
fn stray_parameters(who: &'static str, query: &str) -> Vec<FieldError> {
    crate::query_string::stray_parameters(
        query,
        &[who, session::NAME],
        &format!("reason goes with force=true; a release by its {who} takes only ?{who}="),
        &format!("a release takes only ?{who}= (or force=true&reason=)"),
    )
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
