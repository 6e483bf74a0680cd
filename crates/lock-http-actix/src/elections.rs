//! The `/elections/{name}` routes: campaign, proclaim, renew, resign and the leader. An election
//! is a lease like a lock's, in a namespace of its own: its holder is the leader, and the lease's
//! fencing token is the leader's term.

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{ReleaseResult, ResourceName};
use lock_service::{Campaigned, Leading, Looked};

use crate::api_doc::election_requests::{CandidateQuery, ElectionPath};
use crate::authentication::tenant_of;
use crate::dto::{CampaignResponse, LeaderView};
use crate::election_request::{
    campaign_request, leader_renew_request, proclaim_request, LeaderRenew, Proclaim,
};
use crate::lock_request::{release_request_by, Release};
use crate::problem::{method_not_allowed, ProblemKind};
use crate::resource_path::election_of;
use crate::ApiState;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/elections/{name}/campaign")
            .route(web::post().to(campaign))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/elections/{name}/proclaim")
            .route(web::post().to(proclaim))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/elections/{name}/renew")
            .route(web::post().to(renew))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/elections/{name}/leader")
            .route(web::delete().to(resign))
            .default_service(web::to(method_not_allowed("DELETE"))),
    )
    .service(
        web::resource("/elections/{name}")
            .route(web::get().to(leader))
            .route(web::delete().to(resign_at_name))
            .default_service(web::to(method_not_allowed("GET, DELETE"))),
    );
}

fn vacant(election: &ResourceName) -> ProblemKind {
    ProblemKind::NotFound(format!("election {:?} has no leader", election.as_str()))
}

fn not_leader(election: &ResourceName) -> ProblemKind {
    ProblemKind::Forbidden(format!(
        "another candidate leads election {:?}",
        election.as_str()
    ))
}

fn leading(election: &ResourceName, leading: Leading) -> Result<HttpResponse, ProblemKind> {
    match leading {
        Leading::Leader(leader) => Ok(HttpResponse::Ok().json(LeaderView::from(leader))),
        Leading::NotLeader => Err(not_leader(election)),
        Leading::Vacant => Err(vacant(election)),
    }
}

/// Campaign to lead an election.
///
/// Elects the candidate when the office is vacant (never held, resigned, or the leader's lease
/// ended): its term is a new fencing token, larger than every earlier leader's. The sitting
/// leader campaigning again is granted its lease anew from now, keeping its term (and its value
/// unless given one). When another candidate leads, the answer is still 200, with
/// `elected: false` and that leader.
///
/// With `wait_seconds`, the campaign waits up to that long instead: waiting candidates are
/// served in arrival order (on each server), and the answer comes as soon as the candidate is
/// elected (the leader resigned on any server sharing the database, or its lease ended), or with
/// `elected: false` and `Retry-After` when the wait ends. A candidate whose client closes the
/// connection leaves the line at once and is never elected.
#[utoipa::path(
    post,
    path = "/elections/{name}/campaign",
    operation_id = "campaign",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath),
    request_body(content = crate::api_doc::election_requests::CampaignRequest, content_type = "application/json", example = json!({"candidate": "node-a", "ttl_seconds": 15, "value": {"address": "10.0.0.7:8080"}})),
    responses(
        (status = 200, description = "Elected (`elected: true` with the candidate as leader), or another candidate leads (`elected: false` with that leader, or `null` if the office fell vacant just after; after a wait that ended, with `Retry-After`).", body = CampaignResponse,
            headers(("Retry-After" = u32, description = "Only on `elected: false` after a wait (`wait_seconds` > 0): seconds until the leader's lease ends as last seen (at least 1).")),
            examples(("elected" = (summary = "Elected: you lead", value = json!({"elected": true, "leader": {"election": "scheduler", "candidate": "node-a", "value": {"address": "10.0.0.7:8080"}, "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:42.123Z"}}))), ("not elected" = (summary = "Another candidate leads", value = json!({"elected": false, "leader": {"election": "scheduler", "candidate": "node-b", "term": 41, "elected_at": "2026-11-29T21:32:20.000Z", "expires_at": "2026-11-29T21:32:35.000Z"}}))))),
        (status = 404, description = "`/problems/session-not-found`: the request names a session (`session`) that is not live; nothing was granted.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name, candidate, ttl_seconds, wait_seconds or value.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 429, description = "With `wait_seconds` > 0: the server already holds as many waiting acquires and campaigns as it allows; nothing was attempted or changed. Retry after `Retry-After` seconds, or without `wait_seconds`.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn campaign(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let request = campaign_request(&req, payload, &state).await?;
    let campaigned = state
        .service
        .elections()
        .campaign(request, || crate::peer::has_hung_up(&req))
        .await
        .map_err(ProblemKind::from)?;
    let (body, retry_after) = match campaigned {
        Campaigned::Elected { leader, .. } => (
            CampaignResponse {
                elected: true,
                leader: Some(leader.into()),
            },
            None,
        ),
        Campaigned::NotElected {
            leader,
            retry_after_seconds,
        } => (
            CampaignResponse {
                elected: false,
                leader: leader.map(LeaderView::from),
            },
            retry_after_seconds,
        ),
        // Nobody reads this answer.
        Campaigned::HungUp => (
            CampaignResponse {
                elected: false,
                leader: None,
            },
            None,
        ),
    };
    let mut response = HttpResponse::Ok();
    if let Some(seconds) = retry_after {
        response.insert_header((header::RETRY_AFTER, seconds.to_string()));
    }
    Ok(response.json(body))
}

/// Get an election's leader.
///
/// Returns the leader in office, or 404 when the office is vacant (never held, resigned, or the
/// leader's lease ended).
#[utoipa::path(
    get,
    path = "/elections/{name}",
    operation_id = "getLeader",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath),
    responses(
        (status = 200, description = "The leader in office.", body = LeaderView, example = json!({"election": "scheduler", "candidate": "node-a", "value": {"address": "10.0.0.7:8080"}, "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:42.123Z"})),
        (status = 404, description = "The office is vacant. When the last leader's lease ran out less than its lock-delay ago, the problem has `available_at` (and `Retry-After`): other candidates may be elected from then.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid election name.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn leader(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let election = election_of(&req).map_err(|e| ProblemKind::Validation(vec![e]))?;
    match state.service.elections().look(&tenant, &election).await? {
        Looked::Held(leader) => Ok(HttpResponse::Ok().json(LeaderView::from(leader))),
        Looked::Delayed {
            available_at,
            retry_after_seconds,
        } => Err(ProblemKind::NotFoundUntil {
            detail: format!(
                "election {:?} has no leader; the last leader's lease ran out and keeps \
                 the office until available_at (its lock-delay)",
                election.as_str()
            ),
            available_at,
            retry_after_seconds,
        }),
        Looked::Free => Err(vacant(&election)),
    }
}

/// Proclaim a new value as the leader.
///
/// The leader replaces its value without being elected again: the term and the lease's end stay
/// as they are (renew to keep the lease alive).
#[utoipa::path(
    post,
    path = "/elections/{name}/proclaim",
    operation_id = "proclaim",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath),
    request_body(content = crate::api_doc::election_requests::ProclaimRequest, content_type = "application/json", example = json!({"candidate": "node-a", "value": {"address": "10.0.0.8:8080"}})),
    responses(
        (status = 200, description = "Proclaimed: the leader with its new value.", body = LeaderView, example = json!({"election": "scheduler", "candidate": "node-a", "value": {"address": "10.0.0.8:8080"}, "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:42.123Z"})),
        (status = 403, description = "Another candidate leads; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "The office is vacant; or `/problems/session-not-found`: the request names a session (`session`) that is not live. Nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name, candidate or value, or no value.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn proclaim(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let Proclaim {
        tenant,
        election,
        candidate,
        value,
    } = proclaim_request(&req, payload, &state).await?;
    let answer = state
        .service
        .elections()
        .proclaim(tenant, election.clone(), candidate, value)
        .await?;
    leading(&election, answer)
}

/// Renew the leader's lease.
///
/// Keeps the leader's lease alive: it now ends at now + `ttl_seconds`; the term and value are
/// kept. A leader whose lease has ended leads no more: campaign again.
#[utoipa::path(
    post,
    path = "/elections/{name}/renew",
    operation_id = "renewLeader",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath),
    request_body(content = crate::api_doc::election_requests::LeaderRenewRequest, content_type = "application/json", example = json!({"candidate": "node-a", "ttl_seconds": 15})),
    responses(
        (status = 200, description = "Renewed: the leader with its new `expires_at`.", body = LeaderView, example = json!({"election": "scheduler", "candidate": "node-a", "term": 42, "elected_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:47.456Z"})),
        (status = 403, description = "Another candidate leads; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "The office is vacant; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 409, description = "`/problems/session-held`: the request names a session: a lease held under a session ends with it, and only a keepalive (`POST /sessions/{id}/keepalive`) moves it. Nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name, candidate or ttl_seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn renew(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let LeaderRenew {
        tenant,
        election,
        candidate,
        ttl,
    } = leader_renew_request(&req, payload, &state).await?;
    let answer = state
        .service
        .elections()
        .renew(tenant, election.clone(), candidate, ttl)
        .await?;
    leading(&election, answer)
}

/// Resign as the leader.
///
/// Ends the leader's lease: the office is vacant at once, and the first waiting candidate is
/// elected. The candidate comes from the JSON body or, when there is no body, from the
/// `candidate` query parameter (if both are given they must agree).
#[utoipa::path(
    delete,
    path = "/elections/{name}/leader",
    operation_id = "resign",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath, CandidateQuery, crate::force_release::ForceQuery),
    request_body(content = Option<crate::api_doc::election_requests::ResignRequest>, content_type = "application/json", example = json!({"candidate": "node-a"})),
    responses(
        (status = 200, description = "With `force=true` (an admin key): every live lease of the name was ended; each is listed.", body = crate::force_release::ForceReleasedResponse, example = json!({"force_released": [{"owner": "worker-9", "fencing_token": 17}]})),
        (status = 204, description = "Resigned."),
        (status = 403, description = "Another candidate leads, or (`/problems/admin-required`) `force=true` with a key that is not an admin key; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "The office is vacant (with `force=true`: nothing was ended); under a session (`session`), an ended session always gets 404.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid name or candidate, no candidate, body and query disagree, or a `reason` without `force=true` or an unknown query parameter; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn resign(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    if crate::force_release::asked(&req) {
        return crate::force_release::answer(&req, &state, lock_domain::LeaseKind::Election).await;
    }
    let Release {
        tenant,
        resource: election,
        owner: candidate,
    } = release_request_by(&req, payload, &state, election_of, "candidate").await?;
    match state
        .service
        .elections()
        .resign(tenant, election.clone(), candidate)
        .await?
    {
        ReleaseResult::Released(_) => Ok(HttpResponse::NoContent().finish()),
        ReleaseResult::NotFound => Err(vacant(&election)),
        ReleaseResult::Forbidden => Err(not_leader(&election)),
    }
}

/// Resign, or force-end the leadership: the same as `DELETE /elections/{name}/leader`.
///
/// A release at the election's own path, as `DELETE /locks/{resource}` and
/// `DELETE /semaphores/{name}` are: the candidate resigns (from the JSON body or the `candidate`
/// query parameter), or with `force=true&reason=...` an admin key ends every live lease of the
/// name. Every answer is the one `DELETE /elections/{name}/leader` gives.
#[utoipa::path(
    delete,
    path = "/elections/{name}",
    operation_id = "resignAtName",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath, CandidateQuery, crate::force_release::ForceQuery),
    request_body(content = Option<crate::api_doc::election_requests::ResignRequest>, content_type = "application/json", example = json!({"candidate": "node-a"})),
    responses(
        (status = 200, description = "With `force=true` (an admin key): every live lease of the name was ended; each is listed.", body = crate::force_release::ForceReleasedResponse, example = json!({"force_released": [{"owner": "node-a", "fencing_token": 42}]})),
        (status = 204, description = "Resigned."),
        (status = 401, description = "API keys are configured and the request has no valid `Authorization: Bearer` key.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 403, description = "Another candidate leads, or (`/problems/admin-required`) `force=true` with a key that is not an admin key; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "The office is vacant (with `force=true`: nothing was ended); under a session (`session`), an ended session always gets 404.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive within the body timeout.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "As `DELETE /elections/{name}/leader`; nothing changed.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn resign_at_name(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    resign(req, payload, state).await
}
