//! `GET /elections`: the caller's tenant's elections that have a leader, a page at a time, in
//! bytewise name order, as `GET /locks` lists locks.

use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};

use crate::api_doc::requests::ListParams;
use crate::authentication::tenant_of;
use crate::dto::{remaining_ms, ElectionList, LeaderView, ListedElectionView};
use crate::listing::list_query;
use crate::problem::{method_not_allowed, ProblemKind};
use crate::{cursor, ApiState};

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/elections")
            .route(web::get().to(list))
            .default_service(web::to(method_not_allowed("GET"))),
    );
}

/// List elections.
///
/// The elections of the caller's tenant that have a leader now, whose names start with
/// `prefix`, ordered by name bytewise, at most `limit` per page, each with its leader, how long
/// the leader's lease still runs and how many campaigns wait on this server. Paging as for
/// `GET /locks`.
#[utoipa::path(
    get,
    path = "/elections",
    operation_id = "listElections",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ListParams),
    responses(
        (status = 200, description = "One page of elections with a leader; `next_cursor` only when more follow.", body = ElectionList, example = json!({"elections": [{"election": "scheduler", "candidate": "node-a", "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:42.123Z", "ttl_remaining_ms": 14873, "waiting": 1}]})),
        (status = 422, description = "An invalid `prefix`, `limit` or `cursor`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = list_query(req.query_string())?;
    let page = state.service.elections().list(&tenant, query).await?;
    let next_cursor = page.next_after().map(cursor::encode);
    let elections = page
        .locks
        .into_iter()
        .map(|listed| {
            let waiting = state
                .service
                .elections()
                .waiters(&tenant, &listed.lock.resource);
            ListedElectionView {
                ttl_remaining_ms: remaining_ms(listed.ttl_remaining),
                waiting: waiting as u64,
                leader: LeaderView::from(lock_domain::Leader::of(listed.lock)),
            }
        })
        .collect();
    Ok(HttpResponse::Ok().json(ElectionList {
        elections,
        next_cursor,
    }))
}
