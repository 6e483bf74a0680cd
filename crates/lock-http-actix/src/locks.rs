//! The `/locks/{resource}` routes: acquire, status, release and renew.

use std::time::Duration;

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{Owner, ReleaseResult, RenewResult, ResourceName, Tenant, Ttl};
use lock_service::{AcquireError, AcquireRequest, Acquired, WaitersFull};
use percent_encoding::percent_decode;

use crate::authentication::tenant_of;
use crate::body::{
    declares_body, owner_field, parse_object, read_json_body, ttl_field, wait_field,
};
use crate::dto::{AcquireGranted, AcquireHeld, AcquireResponse, LockView};
use crate::problem::{method_not_allowed, ApiError, FieldError, ProblemKind};
use crate::resource_path::resource_of;

/// `Retry-After` of a waiting acquire refused because too many already wait.
const WAITERS_FULL_RETRY_AFTER_SECONDS: u64 = 1;
use crate::ApiState;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/locks/{resource}/renew")
            .route(web::post().to(renew))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/locks/{resource}")
            .route(web::post().to(acquire))
            .route(web::get().to(status))
            .route(web::delete().to(release))
            .default_service(web::to(method_not_allowed("GET, POST, DELETE"))),
    );
}

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

/// An acquire or renew, parsed: `{owner, ttl_seconds}` on `/locks/{resource}[/renew]`, and on
/// an acquire the optional `wait_seconds`.
struct LeaseRequest {
    tenant: Tenant,
    resource: ResourceName,
    owner: Owner,
    ttl: Ttl,
    /// How long an acquire may wait for the lock (zero: answer at once; always zero on renew).
    wait: Duration,
}

/// Whether the request's `wait_seconds` is read (acquire) or ignored like any unknown field
/// (renew).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waits {
    Read,
    Ignored,
}

/// Authenticates, reads and validates an acquire or renew, in the contract's order:
/// 401, 415, 413, 408, 400, then one 422 listing every invalid field.
async fn lease_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
    waits: Waits,
) -> Result<LeaseRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let wait = match waits {
        Waits::Read => wait_field(fields.wait_seconds, state.settings.max_wait_seconds),
        Waits::Ignored => Ok(0),
    };
    let lease = valid3(
        resource_of(req),
        owner_field(fields.owner),
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
    );
    let ((resource, owner, ttl), wait) = match (lease, wait) {
        (Ok(lease), Ok(wait)) => (lease, wait),
        (lease, wait) => {
            let mut errors = match lease {
                Err(ProblemKind::Validation(errors)) => errors,
                Err(other) => return Err(other),
                Ok(_) => Vec::new(),
            };
            errors.extend(wait.err());
            return Err(ProblemKind::Validation(errors));
        }
    };
    Ok(LeaseRequest {
        tenant,
        resource,
        owner,
        ttl,
        wait: Duration::from_secs(u64::from(wait)),
    })
}

fn json(body: &impl serde::Serialize) -> HttpResponse {
    HttpResponse::Ok().json(body)
}

fn no_lock(resource: &ResourceName) -> ProblemKind {
    ProblemKind::NotFound(format!("no live lock on resource {:?}", resource.as_str()))
}

fn not_yours(resource: &ResourceName) -> ProblemKind {
    ProblemKind::Forbidden(format!(
        "the lock on resource {:?} is held by another owner",
        resource.as_str()
    ))
}

/// Acquire a lock.
///
/// Grants the lock when the resource is free, its lock has expired, or the caller already holds
/// it (then the lease restarts from now and the fencing token is kept). When another owner holds
/// a live lock the answer is still 200, with `acquired: false`: retry later.
///
/// With `wait_seconds`, the request waits up to that long for the lock instead: waiters of one
/// lock are served in arrival order (on each server), and the answer comes as soon as the lock
/// is granted (released on any server sharing the database, or expired), or with
/// `acquired: false` and a `Retry-After` header when the wait ends. A waiter whose client closes
/// the connection leaves the queue at once and is never granted the lock.
#[utoipa::path(
    post,
    path = "/locks/{resource}",
    operation_id = "acquireLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(("resource" = String, Path, description = "The resource name: 1 to 255 bytes of UTF-8 once percent-decoded, no control characters (`%2F` is a `/`, `+` is a plus).", min_length = 1, max_length = 255, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$", example = "payment:42")),
    request_body(content = crate::dto::AcquireRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 30})),
    responses(
        (status = 200, description = "Granted (`acquired: true` with the lock) or held by another owner (`acquired: false`; after a wait that ended, with `Retry-After`).", body = AcquireResponse,
            headers(("Retry-After" = u32, description = "Only on `acquired: false` after a wait (`wait_seconds` > 0): seconds until the holder's lease ends as last seen (at least 1).")), examples(("granted" = (summary = "Granted: you hold the lock", value = json!({"acquired": true, "lock": {"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17}}))), ("held" = (summary = "Held by another owner: retry later", value = json!({"acquired": false, "resource": "payment:42"}))))),
        (status = 401, description = "API keys are configured and the request has no valid `Authorization: Bearer` key (the `WWW-Authenticate` header says so).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 400, description = "The body is empty, not JSON, or not a JSON object.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive within the body timeout; the connection is closed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than 16 KiB.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not `application/json`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource, owner, ttl_seconds or wait_seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 429, description = "With `wait_seconds` > 0: the server already holds as many waiting acquires as it allows (`--max-waiters`, in all, or `--max-waiters-per-tenant`); nothing was attempted or changed. Retry after `Retry-After` seconds, or without `wait_seconds`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn acquire(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    async {
        let LeaseRequest {
            tenant,
            resource,
            owner,
            ttl,
            wait,
        } = lease_request(&req, payload, &state, Waits::Read).await?;
        let request = AcquireRequest {
            tenant,
            resource: resource.clone(),
            owner,
            ttl,
            wait,
        };
        let acquired = state
            .service
            .acquire(request, || crate::peer::has_hung_up(&req))
            .await
            .map_err(|error| match error {
                AcquireError::Store(error) => ProblemKind::from(error),
                AcquireError::WaitersFull(full) => {
                    let per_tenant = full == WaitersFull::Tenant;
                    ProblemKind::TooManyRequests {
                        detail: waiters_full_detail(per_tenant),
                        retry_after_seconds: WAITERS_FULL_RETRY_AFTER_SECONDS,
                    }
                }
            })?;
        Ok(match acquired {
            Acquired::Granted { lock, .. } => json(&AcquireResponse::Granted(AcquireGranted {
                acquired: true,
                lock: lock.into(),
            })),
            // HungUp: nobody reads this answer.
            Acquired::Held | Acquired::HungUp => json(&held(resource)),
            Acquired::TimedOut {
                retry_after_seconds,
            } => HttpResponse::Ok()
                .insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()))
                .json(held(resource)),
        })
    }
    .await
    .map_err(|kind: ProblemKind| kind.at(&req))
}

fn held(resource: ResourceName) -> AcquireResponse {
    AcquireResponse::Held(AcquireHeld {
        acquired: false,
        resource: resource.into_string(),
    })
}

/// The detail of the 429 answered to a waiter beyond the limit (of its tenant, or in all).
pub(crate) fn waiters_full_detail(per_tenant: bool) -> String {
    let whose = if per_tenant { "of this tenant " } else { "" };
    format!(
        "too many acquires {whose}are waiting on this server; retry later, or without wait_seconds"
    )
}

/// Get a lock's status.
///
/// Returns the live lock on the resource. A lock whose lease has ended is gone: 404.
#[utoipa::path(
    get,
    path = "/locks/{resource}",
    operation_id = "getLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(("resource" = String, Path, description = "The resource name (see acquireLock).", min_length = 1, max_length = 255, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$", example = "payment:42")),
    responses(
        (status = 200, description = "The live lock.", body = LockView, example = json!({"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17})),
        (status = 401, description = "API keys are configured and the request has no valid `Authorization: Bearer` key (the `WWW-Authenticate` header says so).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No live lock on this resource (never acquired, released or expired).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource name.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn status(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    async {
        let tenant = tenant_of(&req, &state)?;
        let resource = resource_of(&req).map_err(|e| ProblemKind::Validation(vec![e]))?;
        match state.service.status(tenant, resource.clone()).await? {
            Some(lock) => Ok(json(&LockView::from(lock))),
            None => Err(no_lock(&resource)),
        }
    }
    .await
    .map_err(|kind: ProblemKind| kind.at(&req))
}

/// Release a lock.
///
/// Deletes the caller's live lock. The owner comes from the JSON body or, when there is no body,
/// from the `owner` query parameter (if both are given they must agree).
#[utoipa::path(
    delete,
    path = "/locks/{resource}",
    operation_id = "releaseLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(
        ("resource" = String, Path, description = "The resource name (see acquireLock).", min_length = 1, max_length = 255, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$", example = "payment:42"),
        ("owner" = Option<String>, Query, description = "The owner, when the request has no body (form-encoded: `+` is a space).", min_length = 1, max_length = 255, pattern = "^\\s*[^\\s\\u0000-\\u001F\\u007F-\\u009F](?:[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F])?\\s*$", example = "worker-7"),
    ),
    request_body(content = Option<crate::dto::ReleaseRequest>, content_type = "application/json", example = json!({"owner": "worker-7"})),
    responses(
        (status = 204, description = "Released."),
        (status = 401, description = "API keys are configured and the request has no valid `Authorization: Bearer` key (the `WWW-Authenticate` header says so).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 400, description = "The body is not JSON, or not a JSON object.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 403, description = "Another owner holds the lock; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No live lock on this resource.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive within the body timeout; the connection is closed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than 16 KiB.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not `application/json`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource or owner, no owner, or body and query disagree.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn release(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    async {
        let tenant = tenant_of(&req, &state)?;
        let body_owner = if declares_body(&req) {
            let body = read_json_body(&req, payload, state.settings.body_timeout).await?;
            if body.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                parse_object(&body)?.owner.map(|raw| owner_field(Some(raw)))
            }
        } else {
            None
        };
        let query_owner = query_owner(req.query_string());
        let (resource, owner) =
            valid2(resource_of(&req), reconcile_owner(body_owner, query_owner))?;
        match state
            .service
            .release(tenant, resource.clone(), owner)
            .await?
        {
            ReleaseResult::Released(_) => Ok(HttpResponse::NoContent().finish()),
            ReleaseResult::NotFound => Err(no_lock(&resource)),
            ReleaseResult::Forbidden => Err(not_yours(&resource)),
        }
    }
    .await
    .map_err(|kind: ProblemKind| kind.at(&req))
}

/// The `owner` query parameter(s), form-decoded (`+` is a space); `None` when absent.
fn query_owner(query: &str) -> Option<Result<Owner, FieldError>> {
    let mut found: Option<Result<Owner, FieldError>> = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if form_decode(key).as_deref() != Ok("owner") {
            continue;
        }
        let parsed = form_decode(value)
            .map_err(|_| {
                FieldError::new(
                    "owner",
                    "invalid_utf8",
                    "owner must be valid UTF-8 once percent-decoded",
                )
            })
            .and_then(|text| {
                Owner::parse(&text)
                    .map_err(|e| FieldError::new("owner", e.code(), format!("owner {e}")))
            });
        found = Some(match (found, parsed) {
            (None, parsed) => parsed,
            (Some(Ok(first)), Ok(next)) if first == next => Ok(first),
            (Some(Err(e)), _) | (_, Err(e)) => Err(e),
            (Some(Ok(_)), Ok(_)) => Err(FieldError::new(
                "owner",
                "conflict",
                "owner is given twice with different values",
            )),
        });
    }
    found
}

/// A form-encoded query value, decoded (`+` is a space).
pub(crate) fn form_decode(raw: &str) -> Result<String, std::str::Utf8Error> {
    let spaced = raw.replace('+', " ");
    percent_decode(spaced.as_bytes())
        .decode_utf8()
        .map(|s| s.into_owned())
}

fn reconcile_owner(
    body: Option<Result<Owner, FieldError>>,
    query: Option<Result<Owner, FieldError>>,
) -> Result<Owner, FieldError> {
    match (body, query) {
        (None, None) => Err(FieldError::new(
            "owner",
            "required",
            "owner is required: in the JSON body, or as ?owner= when there is no body",
        )),
        (Some(one), None) | (None, Some(one)) => one,
        (Some(Err(e)), _) | (_, Some(Err(e))) => Err(e),
        (Some(Ok(body)), Some(Ok(query))) if body == query => Ok(body),
        (Some(Ok(_)), Some(Ok(_))) => Err(FieldError::new(
            "owner",
            "conflict",
            "the owner in the body and the owner in the query disagree",
        )),
    }
}

/// Renew a lock.
///
/// Extends the caller's live lock to now + `ttl_seconds`, keeping `acquired_at` and the fencing
/// token. An expired lock belongs to nobody: acquire it again instead.
#[utoipa::path(
    post,
    path = "/locks/{resource}/renew",
    operation_id = "renewLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(("resource" = String, Path, description = "The resource name (see acquireLock).", min_length = 1, max_length = 255, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$", example = "payment:42")),
    request_body(content = crate::dto::RenewRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 60})),
    responses(
        (status = 200, description = "Renewed: the lock with its new `expires_at`.", body = LockView, example = json!({"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:33:27.456Z", "fencing_token": 17})),
        (status = 401, description = "API keys are configured and the request has no valid `Authorization: Bearer` key (the `WWW-Authenticate` header says so).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 400, description = "The body is empty, not JSON, or not a JSON object.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 403, description = "Another owner holds the lock; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No live lock on this resource.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive within the body timeout; the connection is closed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than 16 KiB.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not `application/json`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource, owner or ttl_seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn renew(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    async {
        let LeaseRequest {
            tenant,
            resource,
            owner,
            ttl,
            ..
        } = lease_request(&req, payload, &state, Waits::Ignored).await?;
        match state
            .service
            .renew(tenant, resource.clone(), owner, ttl)
            .await?
        {
            RenewResult::Renewed(lock) => Ok(json(&LockView::from(lock))),
            RenewResult::NotFound => Err(no_lock(&resource)),
            RenewResult::Forbidden => Err(not_yours(&resource)),
        }
    }
    .await
    .map_err(|kind: ProblemKind| kind.at(&req))
}
