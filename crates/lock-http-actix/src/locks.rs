//! The `/locks/{resource}` routes: acquire, status, release and renew.

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{ReleaseResult, RenewResult, ResourceName};
use lock_service::{AcquireRequest, Acquired, Looked};

use crate::api_doc::requests::{AcquireResourcePath, ReleaseQuery, ResourcePath};
use crate::authentication::tenant_of;
use crate::dto::{AcquireGranted, AcquireHeld, AcquireResponse, LockStatus, LockView};
use crate::lease_terms::Wait;
use crate::lock_request::{lease_request, release_request, Release};
use crate::problem::{method_not_allowed, Conflict, ProblemKind};
use crate::resource_path::resource_of;
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
/// With `mode: shared`, shared holders coexist, each with its own lease and fencing token, and
/// an exclusive holder excludes them all. While an exclusive acquire waits for the lock on a
/// server, later shared acquires on that server queue behind it (`acquired: false` without a
/// wait). Renew and release work as for an exclusive lock.
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
    params(AcquireResourcePath),
    request_body(content = crate::api_doc::requests::AcquireRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 30})),
    responses(
        (status = 200, description = "Granted (`acquired: true` with the lock) or held by another owner (`acquired: false`; after a wait that ended, with `Retry-After`).", body = AcquireResponse,
            headers(("Retry-After" = u32, description = "Only on `acquired: false` after a wait (`wait_seconds` > 0): seconds until the holder's lease ends as last seen (at least 1); or when another owner's lease ran out less than its lock-delay ago: seconds until the delay ends.")), examples(("granted" = (summary = "Granted: you hold the lock", value = json!({"acquired": true, "lock": {"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17, "mode": "exclusive"}}))), ("held" = (summary = "Held by another owner: retry later", value = json!({"acquired": false, "resource": "payment:42"}))))),
        (status = 404, description = "`/problems/session-not-found`: the request names a session (`session`) that is not live; nothing was granted.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 409, description = "The owner holds the lock in the other mode (`/problems/mode-mismatch`); nothing changed. Release it first: there is no upgrade or downgrade in place.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource, owner, ttl_seconds, wait_seconds, mode or value.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 429, description = "With `wait_seconds` > 0: the server already holds as many waiting acquires as it allows (`--max-waiters`, in all, or `--max-waiters-per-tenant`); nothing was attempted or changed. Retry after `Retry-After` seconds, or without `wait_seconds`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn acquire(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let request = lease_request(&req, payload, &state, Wait::Read).await?;
    let (resource, mode) = (request.resource.clone(), request.mode);
    let acquired = state
        .service
        .locks()
        .acquire(request, || crate::peer::has_hung_up(&req))
        .await
        .map_err(ProblemKind::from)?;
    Ok(match acquired {
        Acquired::Granted { lock, .. } => json(&AcquireResponse::Granted(AcquireGranted {
            acquired: true,
            lock: lock.into(),
        })),
        // HungUp: nobody reads this answer.
        Acquired::Held { .. } | Acquired::HungUp => json(&held(resource)),
        Acquired::ModeMismatch => {
            return Err(ProblemKind::Conflict(Conflict::Mode { asked: mode }))
        }
        Acquired::TimedOut {
            retry_after_seconds,
        }
        | Acquired::Delayed {
            retry_after_seconds,
        } => HttpResponse::Ok()
            .insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()))
            .json(held(resource)),
    })
}

fn held(resource: ResourceName) -> AcquireResponse {
    AcquireResponse::Held(AcquireHeld {
        acquired: false,
        resource: resource.into_string(),
    })
}

/// Get a lock's status.
///
/// Returns how the resource is held: the live lock of its exclusive holder, or every live
/// shared holder. A lock whose leases have all ended is gone: 404.
#[utoipa::path(
    get,
    path = "/locks/{resource}",
    operation_id = "getLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ResourcePath),
    responses(
        (status = 200, description = "How the lock is held: by one exclusive holder (the lock, `mode: exclusive`) or by shared holders (`mode: shared`, with `holders`).", body = LockStatus, example = json!({"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17, "mode": "exclusive"})),
        (status = 404, description = "No live lock on this resource (never acquired, released or expired). When the last lease ran out less than its lock-delay ago, the problem has `available_at` (and `Retry-After`): other owners may acquire the lock from then.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource name.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn status(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let resource = resource_of(&req).map_err(|e| ProblemKind::Validation(vec![e]))?;
    match state.service.locks().look(tenant, resource.clone()).await? {
        Looked::Held(hold) => Ok(json(&LockStatus::from(hold))),
        Looked::Delayed {
            available_at,
            retry_after_seconds,
        } => Err(ProblemKind::NotFoundUntil {
            detail: format!(
                "no live lock on resource {:?}; the last lease ran out and keeps its \
                 place until available_at (its lock-delay)",
                resource.as_str()
            ),
            available_at,
            retry_after_seconds,
        }),
        Looked::Free => Err(no_lock(&resource)),
    }
}

/// Release a lock.
///
/// Deletes the caller's live lock (exclusive, or its own shared lease). The owner comes from the JSON body or, when there is no body,
/// from the `owner` query parameter (if both are given they must agree).
#[utoipa::path(
    delete,
    path = "/locks/{resource}",
    operation_id = "releaseLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ResourcePath, ReleaseQuery, crate::force_release::ForceQuery),
    request_body(content = Option<crate::api_doc::requests::ReleaseRequest>, content_type = "application/json", example = json!({"owner": "worker-7"})),
    responses(
        (status = 200, description = "With `force=true` (an admin key): every live lease of the name was ended; each is listed.", body = crate::force_release::ForceReleasedResponse, example = json!({"force_released": [{"owner": "worker-9", "fencing_token": 17}]})),
        (status = 204, description = "Released."),
        (status = 403, description = "Another owner holds the lock, or (`/problems/admin-required`) `force=true` with a key that is not an admin key; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No live lock on this resource (with `force=true`: nothing was ended). Under a session (`session`): the session holds none here, and an ended session always gets 404, whoever holds the lock now.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource or owner, no owner, body and query disagree, or a `reason` without `force=true` or an unknown query parameter; nothing was released.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn release(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    if crate::force_release::asked(&req) {
        return crate::force_release::answer(&req, &state, lock_domain::LeaseKind::Lock).await;
    }
    let Release {
        tenant,
        resource,
        owner,
    } = release_request(&req, payload, &state, resource_of).await?;
    match state
        .service
        .locks()
        .release(tenant, resource.clone(), owner)
        .await?
    {
        ReleaseResult::Released(_) => Ok(HttpResponse::NoContent().finish()),
        ReleaseResult::NotFound => Err(no_lock(&resource)),
        ReleaseResult::Forbidden => Err(not_yours(&resource)),
    }
}

/// Renew a lock.
///
/// Extends the caller's live lock (exclusive or shared: its own lease) to now + `ttl_seconds`,
/// keeping `acquired_at`, the mode and the fencing token; `value` replaces the stored value
/// (absent: kept). An expired lock belongs to nobody:
/// acquire it again instead.
#[utoipa::path(
    post,
    path = "/locks/{resource}/renew",
    operation_id = "renewLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ResourcePath),
    request_body(content = crate::api_doc::requests::RenewRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 60})),
    responses(
        (status = 200, description = "Renewed: the lock with its new `expires_at`.", body = LockView, example = json!({"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:33:27.456Z", "fencing_token": 17, "mode": "exclusive"})),
        (status = 403, description = "Another owner holds the lock; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No live lock on this resource.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 409, description = "`/problems/session-held`: the request names a session: a lease held under a session ends with it, and only a keepalive (`POST /sessions/{id}/keepalive`) moves it. Nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid resource, owner, ttl_seconds or value.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn renew(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let AcquireRequest {
        tenant,
        resource,
        terms,
        ..
    } = lease_request(&req, payload, &state, Wait::Ignored).await?;
    if terms.owner.session().is_some() {
        return Err(ProblemKind::SessionHeld);
    }
    match state
        .service
        .locks()
        .renew(
            tenant,
            resource.clone(),
            terms.owner,
            terms.ttl,
            terms.value,
        )
        .await?
    {
        RenewResult::Renewed(lock) => Ok(json(&LockView::from(lock))),
        RenewResult::NotFound => Err(no_lock(&resource)),
        RenewResult::Forbidden => Err(not_yours(&resource)),
    }
}
