//! The `/semaphores` routes: acquire permits, status, release, renew, and the listing. A
//! semaphore's name follows the resource rules, in a namespace of its own.

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{PermitReleaseResult, PermitRenewResult, ResourceName};
use lock_service::{HeldSemaphore, Looked, PermitsAcquired};

use crate::api_doc::requests::{AcquireNamePath, ListParams, NamePath, ReleaseQuery};
use crate::authentication::tenant_of;
use crate::dto::{
    PermitAcquireResponse, PermitGranted, PermitUnavailable, PermitView, SemaphoreList,
    SemaphoreView,
};
use crate::listing::list_query;
use crate::lock_request::{release_request, Release};
use crate::problem::{method_not_allowed, Conflict, ProblemKind};
use crate::resource_path::semaphore_of;
use crate::semaphore_request::{acquire_request, renew_request, PermitRenew};
use crate::{cursor, ApiState};

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/semaphores")
            .route(web::get().to(list))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/semaphores/{name}/renew")
            .route(web::post().to(renew))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/semaphores/{name}")
            .route(web::post().to(acquire))
            .route(web::get().to(status))
            .route(web::delete().to(release))
            .default_service(web::to(method_not_allowed("GET, POST, DELETE"))),
    );
}

fn no_permit(name: &ResourceName) -> ProblemKind {
    ProblemKind::NotFound(format!(
        "no live permit of this owner on semaphore {:?}",
        name.as_str()
    ))
}

/// Acquire permits of a semaphore.
///
/// Grants `permits` (default 1) of semaphore `name` when that many are free out of `limit`:
/// `acquired: true` with the permit and its own fencing token. When too few are free the answer
/// is still 200, with `acquired: false` and how many are free. An owner holds at most one grant
/// per semaphore: acquiring again with the same permits re-grants it (the lease restarts, the
/// token is kept).
///
/// With `wait_seconds`, the request waits up to that long: waiters of one semaphore are served
/// in arrival order on each server, and a later waiter never overtakes an earlier one that
/// needs more permits (nor does a new acquire without a wait). When the wait ends without
/// permits the answer is `acquired: false` with a `Retry-After` header.
#[utoipa::path(
    post,
    path = "/semaphores/{name}",
    operation_id = "acquirePermits",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(AcquireNamePath),
    request_body(content = crate::api_doc::requests::PermitAcquireRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 30, "limit": 8, "permits": 2})),
    responses(
        (status = 200, description = "Granted (`acquired: true` with the permit) or too few permits free (`acquired: false`; after a wait that ended, with `Retry-After`).", body = PermitAcquireResponse,
            headers(("Retry-After" = u32, description = "Only on `acquired: false` after a wait (`wait_seconds` > 0): seconds until the earliest live lease ends (at least 1); or, without a wait, when grants that ran out keep permits in their lock-delay: seconds until the first of those delays ends.")), examples(("granted" = (summary = "Granted: you hold the permits", value = json!({"acquired": true, "permit": {"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 18}}))), ("unavailable" = (summary = "Too few permits free: retry later", value = json!({"acquired": false, "name": "export", "limit": 8, "available": 1}))))),
        (status = 404, description = "`/problems/session-not-found`: the request names a session (`session`) that is not live; nothing was granted.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 409, description = "`/problems/limit-mismatch`: the holders use another limit (given as `limit`): the live ones, and grants that ran out whose lock-delay still keeps their places; or `/problems/permits-mismatch`: this owner holds a live grant of other permits (given as `permits`). Nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name, owner, ttl_seconds, limit, permits, wait_seconds or value.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 429, description = "With `wait_seconds` > 0: the server already holds as many waiting acquires as it allows; nothing was attempted or changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn acquire(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let request = acquire_request(&req, payload, &state).await?;
    let (name, asked_limit) = (request.name.clone(), request.permit.limit.get());
    let acquired = state
        .service
        .semaphores()
        .acquire(request, || crate::peer::has_hung_up(&req))
        .await
        .map_err(ProblemKind::from)?;
    let unavailable = |limit: u32, available: u64| {
        PermitAcquireResponse::Unavailable(PermitUnavailable {
            acquired: false,
            name: name.as_str().to_owned(),
            limit,
            available,
        })
    };
    Ok(match acquired {
        PermitsAcquired::Granted { permit, .. } => {
            HttpResponse::Ok().json(PermitAcquireResponse::Granted(PermitGranted {
                acquired: true,
                permit: permit.into(),
            }))
        }
        PermitsAcquired::Unavailable {
            limit,
            available,
            retry_after_seconds,
        } => {
            let mut response = HttpResponse::Ok();
            if let Some(seconds) = retry_after_seconds {
                response.insert_header((header::RETRY_AFTER, seconds.to_string()));
            }
            response.json(unavailable(limit.get(), available))
        }
        PermitsAcquired::TimedOut {
            limit,
            available,
            retry_after_seconds,
        } => HttpResponse::Ok()
            .insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()))
            .json(unavailable(limit.get(), available)),
        PermitsAcquired::LimitMismatch(limit) => {
            return Err(ProblemKind::Conflict(Conflict::Limit {
                limit: limit.get(),
            }))
        }
        PermitsAcquired::PermitsMismatch(permits) => {
            return Err(ProblemKind::Conflict(Conflict::Permits {
                permits: permits.get(),
            }))
        }
        // Nobody reads this answer.
        PermitsAcquired::HungUp => HttpResponse::Ok().json(unavailable(asked_limit, 0)),
    })
}

/// Get a semaphore.
///
/// Its limit, the permits in use and free, its live holders (by fencing token) and how many
/// acquires wait for it on this server. A semaphore with no live holder has no limit: 404.
#[utoipa::path(
    get,
    path = "/semaphores/{name}",
    operation_id = "getSemaphore",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(NamePath),
    responses(
        (status = 200, description = "The semaphore and its live holders.", body = SemaphoreView, example = json!({"name": "export", "limit": 8, "in_use": 3, "available": 5, "holders": [{"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 18}, {"name": "export", "owner": "worker-9", "permits": 1, "limit": 8, "acquired_at": "2026-11-29T21:32:28.001Z", "expires_at": "2026-11-29T21:32:58.001Z", "fencing_token": 19, "value": {"batch": 12}}], "waiting": 0})),
        (status = 404, description = "No live holder of this semaphore. When grants that ran out keep permits in their lock-delay, the problem has `available_at` (and `Retry-After`): when the first of them come back.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn status(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let name = semaphore_of(&req).map_err(|e| ProblemKind::Validation(vec![e]))?;
    match state
        .service
        .semaphores()
        .look(tenant, name.clone())
        .await?
    {
        Looked::Held(HeldSemaphore { state, waiting }) => {
            Ok(HttpResponse::Ok().json(SemaphoreView::of(state, waiting)))
        }
        Looked::Delayed {
            available_at,
            retry_after_seconds,
        } => Err(ProblemKind::NotFoundUntil {
            detail: format!(
                "no live holder of semaphore {:?}; grants that ran out keep their \
                 places (their permits, and the limit) until available_at (their \
                 lock-delay)",
                name.as_str()
            ),
            available_at,
            retry_after_seconds,
        }),
        Looked::Free => Err(ProblemKind::NotFound(format!(
            "no live holder of semaphore {:?}",
            name.as_str()
        ))),
    }
}

/// Release permits.
///
/// Ends the caller's live grant on the semaphore. The owner comes from the JSON body or, when
/// there is no body, from the `owner` query parameter (if both are given they must agree).
/// Other holders are no conflict: a caller without a live grant gets 404.
#[utoipa::path(
    delete,
    path = "/semaphores/{name}",
    operation_id = "releasePermits",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(NamePath, ReleaseQuery, crate::force_release::ForceQuery),
    request_body(content = Option<crate::api_doc::requests::ReleaseRequest>, content_type = "application/json", example = json!({"owner": "worker-7"})),
    responses(
        (status = 200, description = "With `force=true` (an admin key): every live lease of the name was ended; each is listed.", body = crate::force_release::ForceReleasedResponse, example = json!({"force_released": [{"owner": "worker-9", "fencing_token": 17}]})),
        (status = 204, description = "Released."),
        (status = 403, description = "`force=true` with a key that is not an admin key (`/problems/admin-required`); nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "This owner holds no live permit of the semaphore (with `force=true`: nobody does; nothing was ended). Under a session (`session`): the session holds none, and an ended session always gets 404.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name or owner, no owner, body and query disagree, or a `reason` without `force=true` or an unknown query parameter; nothing was released.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn release(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    if crate::force_release::asked(&req) {
        return crate::force_release::answer(&req, &state, lock_domain::LeaseKind::Semaphore).await;
    }
    let Release {
        tenant,
        resource: name,
        owner,
    } = release_request(&req, payload, &state, semaphore_of).await?;
    match state
        .service
        .semaphores()
        .release(tenant, name.clone(), owner)
        .await?
    {
        PermitReleaseResult::Released(_) => Ok(HttpResponse::NoContent().finish()),
        PermitReleaseResult::NotFound => Err(no_permit(&name)),
    }
}

/// Renew permits.
///
/// Extends the caller's live grant to now + `ttl_seconds`, keeping its permits, `acquired_at`
/// and fencing token; a `value` replaces the stored one, no `value` keeps it. An expired grant
/// belongs to nobody: acquire again instead.
#[utoipa::path(
    post,
    path = "/semaphores/{name}/renew",
    operation_id = "renewPermits",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(NamePath),
    request_body(content = crate::api_doc::requests::PermitRenewRequest, content_type = "application/json", example = json!({"owner": "worker-7", "ttl_seconds": 60})),
    responses(
        (status = 200, description = "Renewed: the permit with its new `expires_at`.", body = PermitView, example = json!({"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:33:27.456Z", "fencing_token": 18})),
        (status = 404, description = "This owner holds no live permit of the semaphore.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 409, description = "`/problems/session-held`: the request names a session: a lease held under a session ends with it, and only a keepalive (`POST /sessions/{id}/keepalive`) moves it. Nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name, owner, ttl_seconds or value.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn renew(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let PermitRenew {
        tenant,
        name,
        owner,
        ttl,
        value,
    } = renew_request(&req, payload, &state).await?;
    match state
        .service
        .semaphores()
        .renew(tenant, name.clone(), owner, ttl, value)
        .await?
    {
        PermitRenewResult::Renewed(permit) => Ok(HttpResponse::Ok().json(PermitView::from(permit))),
        PermitRenewResult::NotFound => Err(no_permit(&name)),
    }
}

/// List semaphores.
///
/// The semaphores of the caller's tenant that have a live holder, whose names start with
/// `prefix`, ordered by name bytewise, at most `limit` per page, each with its holders. Paging
/// works as for `GET /locks`.
#[utoipa::path(
    get,
    path = "/semaphores",
    operation_id = "listSemaphores",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(ListParams),
    responses(
        (status = 200, description = "One page of semaphores; `next_cursor` only when more follow.", body = SemaphoreList, example = json!({"semaphores": [{"name": "export", "limit": 8, "in_use": 2, "available": 6, "holders": [{"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 18}], "waiting": 0}], "next_cursor": "AWV4cG9ydA"})),
        (status = 422, description = "An invalid `prefix`, `limit` or `cursor`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = list_query(req.query_string())?;
    let page = state
        .service
        .semaphores()
        .list(tenant.clone(), query)
        .await?;
    let next_cursor = if page.has_more {
        page.semaphores
            .last()
            .map(|last| cursor::encode(&last.name))
    } else {
        None
    };
    let semaphores = page
        .semaphores
        .into_iter()
        .map(|held| {
            let waiting = state.service.semaphores().waiters(&tenant, &held.name);
            SemaphoreView::of(held, waiting)
        })
        .collect();
    Ok(HttpResponse::Ok().json(SemaphoreList {
        semaphores,
        next_cursor,
    }))
}
