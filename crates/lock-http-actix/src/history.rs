//! `GET /locks/{resource}/history`, `GET /semaphores/{name}/history`,
//! `GET /elections/{name}/history` and `GET /history`: the caller's tenant's durable history,
//! newest first, a page at a time (`lock_service::LockService::history`).

use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::LeaseKind;

use crate::api_doc::history_requests::{
    LockHistoryParams, NamedHistoryParams, TenantHistoryParams,
};
use crate::authentication::tenant_of;
use crate::dto::HistoryList;
use crate::history_query;
use crate::problem::{method_not_allowed, ProblemKind};
use crate::resource_path::{election_of, resource_of, semaphore_of};
use crate::ApiState;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    for (path, kind) in [
        ("/locks/{resource}/history", LeaseKind::Lock),
        ("/semaphores/{name}/history", LeaseKind::Semaphore),
        ("/elections/{name}/history", LeaseKind::Election),
    ] {
        let route = match kind {
            LeaseKind::Lock => web::get().to(lock_history),
            LeaseKind::Semaphore => web::get().to(semaphore_history),
            LeaseKind::Election => web::get().to(election_history),
        };
        cfg.service(
            web::resource(path)
                .route(route)
                .default_service(web::to(method_not_allowed("GET"))),
        );
    }
    cfg.service(
        web::resource("/history")
            .route(web::get().to(tenant_history))
            .default_service(web::to(method_not_allowed("GET"))),
    );
}

/// A lock's history.
///
/// Every change to a lease of the lock, newest first: `granted`, `re-granted`, `renewed`,
/// `released`, `expired`, `force-released` and `undone`, each with its holder, fencing token
/// and the database's time, recorded in the same transaction as the change. Shared (read)
/// leases have `shared: true`. An expiry is recorded when lockd sees it: at the next grant, or at
/// a sweep (`--sweep-interval-seconds`, a minute after the lease's end). Records are kept for
/// `--history-retention-hours`. When more follow, `next_cursor` is set: pass it as `cursor`.
#[utoipa::path(
    get,
    path = "/locks/{resource}/history",
    operation_id = "lockHistory",
    tag = "history",
    security((), ("bearer" = [])),
    params(LockHistoryParams),
    responses(
        (status = 200, description = "One page of records, newest first; `next_cursor` only when more follow.", body = HistoryList, example = json!({"records": [{"id": 1743, "kind": "lock", "name": "payment:42", "owner": "worker-7", "fencing_token": 17, "event": "released", "at": "2026-11-29T21:32:31.002Z", "shared": false}, {"id": 1742, "kind": "lock", "name": "payment:42", "owner": "worker-7", "fencing_token": 17, "event": "granted", "at": "2026-11-29T21:32:27.123Z", "shared": false}], "next_cursor": "1742"})),
        (status = 422, description = "An invalid resource name, `limit`, `cursor` or `since`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn lock_history(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    page_of(req, state, LeaseKind::Lock).await
}

/// A semaphore's history.
///
/// As a lock's: every change to a grant of the semaphore, newest first.
#[utoipa::path(
    get,
    path = "/semaphores/{name}/history",
    operation_id = "semaphoreHistory",
    tag = "history",
    security((), ("bearer" = [])),
    params(NamedHistoryParams),
    responses(
        (status = 200, description = "One page of records, newest first; `next_cursor` only when more follow.", body = HistoryList, example = json!({"records": [{"id": 1750, "kind": "semaphore", "name": "export", "owner": "worker-3", "fencing_token": 21, "event": "renewed", "at": "2026-11-29T21:33:02.410Z", "shared": false}]})),
        (status = 422, description = "An invalid name, `limit`, `cursor` or `since`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn semaphore_history(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    page_of(req, state, LeaseKind::Semaphore).await
}

/// An election's history.
///
/// As a lock's: every change to a leader's lease, newest first; the fencing token is the term.
#[utoipa::path(
    get,
    path = "/elections/{name}/history",
    operation_id = "electionHistory",
    tag = "history",
    security((), ("bearer" = [])),
    params(NamedHistoryParams),
    responses(
        (status = 200, description = "One page of records, newest first; `next_cursor` only when more follow.", body = HistoryList, example = json!({"records": [{"id": 1760, "kind": "election", "name": "scheduler", "owner": "node-b", "fencing_token": 43, "event": "granted", "at": "2026-11-29T21:34:00.001Z", "shared": false}, {"id": 1759, "kind": "election", "name": "scheduler", "owner": "node-a", "fencing_token": 42, "event": "expired", "at": "2026-11-29T21:34:00.001Z", "shared": false}]})),
        (status = 422, description = "An invalid name, `limit`, `cursor` or `since`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn election_history(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    page_of(req, state, LeaseKind::Election).await
}

/// The tenant's history.
///
/// Every record of the caller's tenant (locks, semaphores and elections) whose name starts with
/// `prefix`, newest first, from `since` on.
#[utoipa::path(
    get,
    path = "/history",
    operation_id = "tenantHistory",
    tag = "history",
    security((), ("bearer" = [])),
    params(TenantHistoryParams),
    responses(
        (status = 200, description = "One page of records, newest first; `next_cursor` only when more follow.", body = HistoryList, example = json!({"records": [{"id": 1761, "kind": "lock", "name": "payment:42", "owner": "worker-9", "fencing_token": 18, "event": "granted", "at": "2026-11-29T21:34:02.000Z", "shared": false}], "next_cursor": "1761"})),
        (status = 422, description = "An invalid `prefix`, `limit`, `cursor` or `since`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn tenant_history(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = history_query::tenant(req.query_string())?;
    let page = state.service.history().records(tenant, query).await?;
    Ok(HttpResponse::Ok().json(HistoryList::from(page)))
}

async fn page_of(
    req: HttpRequest,
    state: web::Data<ApiState>,
    kind: LeaseKind,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let name = match kind {
        LeaseKind::Lock => resource_of(&req),
        LeaseKind::Semaphore => semaphore_of(&req),
        LeaseKind::Election => election_of(&req),
    };
    let query = history_query::one(req.query_string(), kind, name)?;
    let page = state.service.history().records(tenant, query).await?;
    Ok(HttpResponse::Ok().json(HistoryList::from(page)))
}
