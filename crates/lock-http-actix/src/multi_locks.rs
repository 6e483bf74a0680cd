//! `POST /locks` and `DELETE /locks`: several locks acquired together or not at all, and
//! released in one request. (`GET /locks` lists; see `listing`.)

use actix_web::http::header;
use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use lock_service::MultiAcquired;

use crate::dto::{
    MultiAcquireResponse, MultiGranted, MultiUnavailable, ReleaseManyResponse, ReleaseOne,
};
use crate::multi_request::{acquire_all_request, release_all_request, ReleaseMany};
use crate::problem::ProblemKind;
use crate::ApiState;

/// Acquire several locks at once.
///
/// Grants every lock of `locks` (each `exclusive` or `shared`) in one transaction, or none:
/// `acquired: true` with the locks in request order, each with its own fencing token; or
/// `acquired: false` with the ones that could not be granted, and nothing changed. With
/// `wait_seconds` the request waits until all of them are available together (holding none
/// meanwhile, so two such requests can never deadlock), or until the wait ends (then with
/// `Retry-After`). A lock the owner holds in the same mode is re-granted; one it holds in the
/// other mode is unavailable.
#[utoipa::path(
    post,
    path = "/locks",
    operation_id = "acquireLocks",
    tag = "locks",
    security((), ("bearer" = [])),
    request_body(content = crate::api_doc::multi_requests::MultiAcquireRequest, content_type = "application/json", example = json!({"owner": "transfer-7", "ttl_seconds": 30, "locks": [{"resource": "account:1"}, {"resource": "account:2"}, {"resource": "rates", "mode": "shared"}]})),
    responses(
        (status = 200, description = "Every lock (`acquired: true`), or none and the unavailable ones (`acquired: false`; after a wait that ended, with `Retry-After`).", body = MultiAcquireResponse,
            headers(("Retry-After" = u32, description = "Only on `acquired: false` after a wait: seconds until the last of the unavailable locks' leases ends, as last seen (at least 1).")),
            examples(("granted" = (summary = "Every lock granted", value = json!({"acquired": true, "locks": [{"resource": "account:1", "owner": "transfer-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 41, "mode": "exclusive"}, {"resource": "account:2", "owner": "transfer-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 42, "mode": "exclusive"}]}))),
                      ("unavailable" = (summary = "None granted: these are held", value = json!({"acquired": false, "unavailable": ["account:2"]}))))),
        (status = 404, description = "`/problems/session-not-found`: the request names a session (`session`) that is not live; nothing was granted.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid owner, ttl_seconds, wait_seconds, value, or locks (not 1 to 64 entries, a resource named twice: `duplicate`, or an invalid `locks[i].resource` / `locks[i].mode`).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 429, description = "With `wait_seconds` > 0: the server already holds as many waiting acquires as it allows; nothing was attempted.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds. Nothing was granted.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn acquire_all(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let request = acquire_all_request(&req, payload, &state).await?;
    let acquired = state
        .service
        .locks()
        .acquire_all(request, || crate::peer::has_hung_up(&req))
        .await
        .map_err(ProblemKind::from)?;
    Ok(match acquired {
        MultiAcquired::Granted { locks, .. } => {
            HttpResponse::Ok().json(MultiAcquireResponse::Granted(MultiGranted {
                acquired: true,
                locks: locks.into_iter().map(Into::into).collect(),
            }))
        }
        MultiAcquired::Unavailable { resources } => HttpResponse::Ok().json(
            MultiAcquireResponse::Unavailable(MultiUnavailable::of(resources)),
        ),
        MultiAcquired::TimedOut {
            resources,
            retry_after_seconds,
        } => HttpResponse::Ok()
            .insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()))
            .json(MultiAcquireResponse::Unavailable(MultiUnavailable::of(
                resources,
            ))),
        // Nobody reads this answer.
        MultiAcquired::HungUp => HttpResponse::Ok().json(MultiAcquireResponse::Unavailable(
            MultiUnavailable::of(Vec::new()),
        )),
    })
}

/// Release several locks.
///
/// Releases each of `resources` that `owner` holds (in either mode), one after another, each
/// exactly as `DELETE /locks/{resource}` would, and says what happened to each, in request
/// order. Answers 200 even when some were not released.
#[utoipa::path(
    delete,
    path = "/locks",
    operation_id = "releaseLocks",
    tag = "locks",
    security((), ("bearer" = [])),
    request_body(content = crate::api_doc::multi_requests::ReleaseManyRequest, content_type = "application/json", example = json!({"owner": "transfer-7", "resources": ["account:1", "account:2"]})),
    responses(
        (status = 200, description = "What happened to each lock, in request order.", body = ReleaseManyResponse, example = json!({"results": [{"resource": "account:1", "result": "released", "fencing_token": 41}, {"resource": "account:2", "result": "not_found"}]})),
        (status = 422, description = "Invalid owner, or resources (not 1 to 64 names, a name given twice: `duplicate`, or an invalid `resources[i]`).", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; the locks before the failure may have been released.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn release_all(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let ReleaseMany {
        tenant,
        owner,
        resources,
    } = release_all_request(&req, payload, &state).await?;
    let results = state
        .service
        .locks()
        .release_all(tenant, owner, resources)
        .await?;
    Ok(HttpResponse::Ok().json(ReleaseManyResponse {
        results: results
            .into_iter()
            .map(|(resource, result)| ReleaseOne::of(resource, result))
            .collect(),
    }))
}
