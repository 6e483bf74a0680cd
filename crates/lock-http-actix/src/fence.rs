//! `GET /locks/{resource}/fence?token=N`, `GET /semaphores/{name}/fence?token=N` and
//! `GET /elections/{name}/fence?term=N`: is `N` the fencing token of a lease that is live right
//! now? For a resource that cannot store tokens itself (see docs/fencing.md).

use actix_web::{web, HttpRequest, HttpResponse};
use lock_domain::{FenceVerdict, FencingToken, ResourceName};

use crate::api_doc::election_requests::{ElectionPath, TermQuery};
use crate::api_doc::requests::{FenceQuery, NamePath, ResourcePath};
use crate::authentication::tenant_of;
use crate::dto::{
    ElectionFenceResponse, ElectionFenceValid, FenceStale, LeaderView, LockFenceResponse,
    LockFenceValid, LockView, PermitFenceResponse, PermitFenceValid, PermitView,
};
use crate::fields::token;
use crate::problem::{method_not_allowed, FieldError, ProblemKind};
use crate::resource_path::{election_of, resource_of, semaphore_of};
use crate::ApiState;

pub(crate) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/locks/{resource}/fence")
            .route(web::get().to(lock_fence))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/semaphores/{name}/fence")
            .route(web::get().to(semaphore_fence))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/elections/{name}/fence")
            .route(web::get().to(election_fence))
            .default_service(web::to(method_not_allowed("GET"))),
    );
}

/// Check a fencing token against a lock.
///
/// Answers whether `token` is the fencing token of a lease on this lock that is live right now
/// (for a shared lock, any live holder's): `valid: true` with that holder's lock, or
/// `valid: false` with the newest live holder's token (`current`, `null` when no one holds the
/// lock). A read: it changes nothing, and is cheap enough to call before every write that the
/// token protects. The answer is true when it is read; a lease can end right after it
/// (docs/fencing.md says what a check followed by a write can promise).
#[utoipa::path(
    get,
    path = "/locks/{resource}/fence",
    operation_id = "checkLockFence",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ResourcePath, FenceQuery),
    responses(
        (status = 200, description = "The verdict: `valid: true` with the live lock that has the token, or `valid: false` with `current`, the newest live holder's token or `null`.", body = LockFenceResponse,
            examples(("valid" = (summary = "The token's holder still holds the lock", value = json!({"valid": true, "lock": {"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17, "mode": "exclusive"}}))), ("stale" = (summary = "The token's lease has ended: refuse the write", value = json!({"valid": false, "current": 18}))), ("no holder" = (summary = "No one holds the lock", value = json!({"valid": false, "current": null}))))),
        (status = 422, description = "Invalid resource name, or `token` missing, given twice, or not a positive integer; or an unknown query parameter.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn lock_fence(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let (resource, token) = target_and_token(resource_of(&req), req.query_string())?;
    let response = match state
        .service
        .locks()
        .check_fence(tenant, resource, token)
        .await?
    {
        FenceVerdict::Valid(lock) => LockFenceResponse::Valid(LockFenceValid {
            valid: true,
            lock: LockView::from(lock),
        }),
        FenceVerdict::Stale { current } => LockFenceResponse::Stale(stale(current)),
    };
    Ok(HttpResponse::Ok().json(response))
}

/// Check a fencing token against a semaphore.
///
/// Answers whether `token` is the fencing token of a grant of this semaphore that is live right
/// now (any holder's): `valid: true` with that grant, or `valid: false` with the newest live
/// grant's token (`current`, `null` when no one holds a permit). A read, as for a lock.
#[utoipa::path(
    get,
    path = "/semaphores/{name}/fence",
    operation_id = "checkSemaphoreFence",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(NamePath, FenceQuery),
    responses(
        (status = 200, description = "The verdict: `valid: true` with the live grant that has the token, or `valid: false` with `current`, the newest live grant's token or `null`.", body = PermitFenceResponse,
            examples(("valid" = (summary = "The token's grant is live", value = json!({"valid": true, "permit": {"name": "export", "owner": "worker-7", "permits": 2, "limit": 8, "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 18}}))), ("stale" = (summary = "The token's grant has ended: refuse the write", value = json!({"valid": false, "current": 21}))))),
        (status = 422, description = "Invalid semaphore name, or `token` missing, given twice, or not a positive integer; or an unknown query parameter.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn semaphore_fence(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let (name, token) = target_and_token(semaphore_of(&req), req.query_string())?;
    let response = match state
        .service
        .semaphores()
        .check_fence(tenant, name.clone(), token)
        .await?
    {
        FenceVerdict::Valid(lease) => PermitFenceResponse::Valid(PermitFenceValid {
            valid: true,
            permit: PermitView::of(name.into_string(), lease),
        }),
        FenceVerdict::Stale { current } => PermitFenceResponse::Stale(stale(current)),
    };
    Ok(HttpResponse::Ok().json(response))
}

/// Check a term against an election.
///
/// Answers whether `term` is the term of the leader in office right now: `valid: true` with that
/// leader, or `valid: false` with the sitting leader's term (`current`, `null` when the office is
/// vacant). A read, as for a lock: a leader that paused past its lease and wakes up believing it
/// still leads is refused here.
#[utoipa::path(
    get,
    path = "/elections/{name}/fence",
    operation_id = "checkElectionFence",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath, TermQuery),
    responses(
        (status = 200, description = "The verdict: `valid: true` with the leader whose term it is, or `valid: false` with `current`, the sitting leader's term or `null`.", body = ElectionFenceResponse,
            examples(("valid" = (summary = "The term's leader still leads", value = json!({"valid": true, "leader": {"election": "scheduler", "candidate": "node-a", "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:42.123Z"}}))), ("stale" = (summary = "Another leader was elected since: refuse the write", value = json!({"valid": false, "current": 43}))), ("vacant" = (summary = "No one leads", value = json!({"valid": false, "current": null}))))),
        (status = 422, description = "Invalid election name, or `term` missing, given twice, or not a positive integer; or an unknown query parameter.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn election_fence(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let (election, term) = target_and(
        election_of(&req),
        token::token_query_named(token::TERM, req.query_string()),
    )?;
    let response = match state
        .service
        .elections()
        .check_term(tenant, election, term)
        .await?
    {
        FenceVerdict::Valid(leader) => ElectionFenceResponse::Valid(ElectionFenceValid {
            valid: true,
            leader: LeaderView::from(leader),
        }),
        FenceVerdict::Stale { current } => ElectionFenceResponse::Stale(stale(current)),
    };
    Ok(HttpResponse::Ok().json(response))
}

fn stale(current: Option<FencingToken>) -> FenceStale {
    FenceStale {
        valid: false,
        current: current.map(FencingToken::value),
    }
}

/// The path's name and the query's token, or one 422 listing every invalid input.
fn target_and_token(
    target: Result<ResourceName, FieldError>,
    query: &str,
) -> Result<(ResourceName, FencingToken), ProblemKind> {
    target_and(target, token::token_query(query))
}

/// The path's name and the query's token, or one 422 listing every invalid input.
fn target_and(
    target: Result<ResourceName, FieldError>,
    token: Result<FencingToken, Vec<FieldError>>,
) -> Result<(ResourceName, FencingToken), ProblemKind> {
    match (target, token) {
        (Ok(target), Ok(token)) => Ok((target, token)),
        (target, token) => {
            let mut errors: Vec<FieldError> = target.err().into_iter().collect();
            errors.extend(token.err().unwrap_or_default());
            Err(ProblemKind::Validation(errors))
        }
    }
}
