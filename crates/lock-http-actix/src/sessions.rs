//! The `/sessions` routes: open a session, keep it alive, look at it and its holds, list the
//! tenant's live sessions, and end one (closing it, or an admin's force) with every hold at once.
//! What a session holds is taken on the other routes with `"session": id` in place of the
//! holder, its TTL and lock-delay (`crate::fields::session`).

use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::{ResourceName, SessionId, SessionQuery};
use lock_service::{OpenSession, OpenSessionError};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};
use utoipa::IntoParams;

use crate::api_doc::requests::ListParams;
use crate::authentication::{admin_of, tenant_of};
use crate::body::{declares_body, parse_object, read_json_body};
use crate::dto::{
    HoldView, ListedSessionView, SessionHoldsResponse, SessionList, SessionResponse, SessionView,
};
use crate::fields::lock_delay::lock_delay_field;
use crate::fields::owner::owner_field;
use crate::fields::seconds::ttl_field;
use crate::fields::session::session_text;
use crate::lease_terms::Invalid;
use crate::listing::list_query;
use crate::problem::{method_not_allowed, FieldError, ProblemKind};
use crate::{cursor, ApiState};

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/sessions")
            .route(web::post().to(open))
            .route(web::get().to(list))
            .default_service(web::to(method_not_allowed("GET, POST"))),
    )
    .service(
        web::resource("/sessions/{id}/keepalive")
            .route(web::post().to(keep_alive))
            .default_service(web::to(method_not_allowed("POST"))),
    )
    .service(
        web::resource("/sessions/{id}")
            .route(web::get().to(look))
            .route(web::delete().to(end))
            .default_service(web::to(method_not_allowed("GET, DELETE"))),
    );
}

/// The `{id}` of the session routes.
pub(crate) struct SessionPath;

impl IntoParams for SessionPath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![ParameterBuilder::new()
            .name("id")
            .parameter_in(ParameterIn::Path)
            .required(Required::True)
            .description(Some("The session's id, as `POST /sessions` answered it."))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^[A-Za-z0-9_-]{22}$")),
            ))
            .build()]
    }
}

/// Every query parameter of a close, as an error: a `reason` belongs to an admin's end
/// (`force=true`), and any other name is unknown.
fn stray_parameters(query: &str) -> Vec<FieldError> {
    crate::query_string::stray_parameters(
        query,
        &[],
        "reason goes with force=true; closing a session takes no parameters",
        "closing a session takes none (an admin's end: force=true&reason=)",
    )
}

/// The session `{id}` of the path; a malformed id is no session this server made (404).
pub(crate) fn session_of(req: &HttpRequest) -> Result<SessionId, ProblemKind> {
    let raw = req.match_info().get("id").unwrap_or_default();
    session_text(raw).map_err(|_| ProblemKind::SessionNotFound)
}

/// Open a session.
///
/// A session is one lease that keeps many holds alive: take locks, shared locks, permits and
/// leaderships with `"session": id` in place of `owner` (or `candidate`), `ttl_seconds` and
/// `lock_delay_seconds`. Each hold keeps its own fencing token and history, and ends with the
/// session: when it is closed (`DELETE /sessions/{id}`, all at once), or when it runs out because
/// no keepalive came in time (then each hold's place stays kept for the session's
/// `lock_delay_seconds`). A keepalive costs the same whatever the session holds.
#[utoipa::path(
    post,
    path = "/sessions",
    operation_id = "openSession",
    tag = "sessions",
    security((), ("bearer" = [])),
    request_body(content = crate::api_doc::requests::SessionOpenRequest, content_type = "application/json", example = json!({"ttl_seconds": 10, "owner": "worker-7"})),
    responses(
        (status = 201, description = "Opened; `Location` is the session's URL.", body = SessionResponse,
            headers(("Location" = String, description = "`/sessions/{id}`")),
            example = json!({"session": {"id": "q7Hc0mB1TzK4n9XwVd2aLg", "owner": "worker-7", "ttl_seconds": 10, "lock_delay_seconds": 0, "created_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:37.123Z"}})),
        (status = 422, description = "Invalid ttl_seconds, owner or lock_delay_seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn open(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let body = read_json_body(&req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut invalid = Invalid::default();
    let ttl = invalid.take(ttl_field(
        fields.ttl_seconds,
        state.settings.max_ttl_seconds,
    ));
    // Absent: the id is the label. `null` is no owner (a 422, as everywhere).
    let owner = match fields.owner {
        Some(raw) if raw.get() == "null" => invalid.take(Err(FieldError::new(
            "owner",
            "invalid_type",
            "owner must be a JSON string; leave it out for the session's id",
        ))),
        Some(raw) => invalid.take(owner_field(Some(raw)).map(Some)),
        None => Some(None),
    };
    let lock_delay = invalid.take(lock_delay_field(
        fields.lock_delay_seconds,
        state.settings.default_lock_delay,
    ));
    let (Some(ttl), Some(owner), Some(lock_delay)) = (ttl, owner, lock_delay) else {
        return Err(invalid.problem());
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    let request = OpenSession {
        owner,
        ttl,
        lock_delay,
    };
    let session = match state.service.sessions().open(tenant, request).await {
        Ok(session) => session,
        Err(OpenSessionError::Store(error)) => return Err(error.into()),
        Err(OpenSessionError::QuotaExceeded(exceeded)) => return Err(exceeded.into()),
    };
    let location = format!("/sessions/{}", session.id);
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::LOCATION, location))
        .json(SessionResponse {
            session: session.into(),
        }))
}

/// Keep a session alive.
///
/// Moves the session's end, and so every hold's, to now plus its TTL; with `ttl_seconds`, the
/// session takes that TTL from now on. An ended session (closed, forced or run out) is never
/// revived: 404. The body may be empty.
#[utoipa::path(
    post,
    path = "/sessions/{id}/keepalive",
    operation_id = "keepSessionAlive",
    tag = "sessions",
    security((), ("bearer" = [])),
    params(SessionPath),
    request_body(content = Option<crate::api_doc::requests::SessionKeepAliveRequest>, content_type = "application/json", example = json!({"ttl_seconds": 20})),
    responses(
        (status = 200, description = "Kept alive: the session as it is now.", body = SessionResponse,
            example = json!({"session": {"id": "q7Hc0mB1TzK4n9XwVd2aLg", "owner": "worker-7", "ttl_seconds": 10, "lock_delay_seconds": 0, "created_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:37.123Z"}})),
        (status = 404, description = "`/problems/session-not-found`: no live session of this tenant has this id.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid ttl_seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn keep_alive(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let ttl = if declares_body(&req) {
        let body = read_json_body(&req, payload, state.settings.body_timeout).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            let fields = parse_object(&body)?;
            match fields.ttl_seconds {
                Some(raw) => Some(
                    ttl_field(Some(raw), state.settings.max_ttl_seconds)
                        .map_err(|e| ProblemKind::Validation(vec![e]))?,
                ),
                None => None,
            }
        }
    } else {
        None
    };
    let id = session_of(&req)?;
    if let Some(ttl) = ttl {
        state.service.tenants().check_ttl(&tenant, ttl)?;
    }
    match state.service.sessions().keep_alive(tenant, id, ttl).await? {
        Some(session) => Ok(HttpResponse::Ok().json(SessionResponse {
            session: session.into(),
        })),
        None => Err(ProblemKind::SessionNotFound),
    }
}

/// Look at a session and its holds.
///
/// The live session and every live hold it has, read at one instant: each with its kind
/// (`lock` with its `mode`, `semaphore` with its `permits`, `election` with its `term`), its
/// name and its own fencing token. An ended session is 404.
#[utoipa::path(
    get,
    path = "/sessions/{id}",
    operation_id = "getSession",
    tag = "sessions",
    security((), ("bearer" = [])),
    params(SessionPath),
    responses(
        (status = 200, description = "The session and its live holds.", body = SessionHoldsResponse,
            example = json!({"session": {"id": "q7Hc0mB1TzK4n9XwVd2aLg", "owner": "worker-7", "ttl_seconds": 10, "lock_delay_seconds": 0, "created_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:37.123Z"}, "holds": [{"kind": "lock", "name": "payment:42", "fencing_token": 17, "mode": "exclusive"}, {"kind": "semaphore", "name": "export", "fencing_token": 18, "permits": 2}, {"kind": "election", "name": "scheduler", "fencing_token": 19, "term": 19}]})),
        (status = 404, description = "`/problems/session-not-found`: no live session of this tenant has this id.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn look(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let id = session_of(&req)?;
    match state.service.sessions().look(tenant, id).await? {
        Some((session, holds)) => Ok(HttpResponse::Ok().json(SessionHoldsResponse {
            session: session.into(),
            holds: holds.into_iter().map(HoldView::from).collect(),
        })),
        None => Err(ProblemKind::SessionNotFound),
    }
}

/// List live sessions.
///
/// The tenant's live sessions whose ids start with `prefix`, by id, at most `limit` per page,
/// each with its count of live holds; `next_cursor` as for `GET /locks`.
#[utoipa::path(
    get,
    path = "/sessions",
    operation_id = "listSessions",
    tag = "sessions",
    security((), ("bearer" = [])),
    params(ListParams),
    responses(
        (status = 200, description = "A page of live sessions.", body = SessionList,
            example = json!({"sessions": [{"id": "q7Hc0mB1TzK4n9XwVd2aLg", "owner": "worker-7", "ttl_seconds": 10, "lock_delay_seconds": 0, "created_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:37.123Z", "holds": 3, "ttl_remaining_ms": 8312}]})),
        (status = 422, description = "Invalid prefix, limit or cursor, or an unknown or repeated parameter.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = list_query(req.query_string())?;
    let query = SessionQuery {
        prefix: query.prefix,
        after: query.after,
        limit: query.limit,
    };
    let page = state.service.sessions().list(tenant, query).await?;
    let now = chrono::Utc::now();
    let next_cursor = if page.has_more {
        page.sessions
            .last()
            .and_then(|last| ResourceName::parse(last.session.id.as_str()).ok())
            .map(|last| cursor::encode(&last))
    } else {
        None
    };
    let sessions = page
        .sessions
        .into_iter()
        .map(|listed| ListedSessionView {
            ttl_remaining_ms: (listed.session.expires_at - now).num_milliseconds().max(0) as u64,
            holds: listed.holds,
            session: SessionView::from(listed.session),
        })
        .collect();
    Ok(HttpResponse::Ok().json(SessionList {
        sessions,
        next_cursor,
    }))
}

/// End a session.
///
/// Ends the session and releases every hold under it in one transaction: any reader sees all of
/// its holds or none. Waiters of the freed places are served as after a release. An admin key
/// may end any session of its tenant with `?force=true&reason=` (each hold is recorded
/// force-released with the reason).
#[utoipa::path(
    delete,
    path = "/sessions/{id}",
    operation_id = "endSession",
    tag = "sessions",
    security((), ("bearer" = [])),
    params(SessionPath, crate::force_release::ForceQuery),
    responses(
        (status = 204, description = "Ended, with every hold."),
        (status = 403, description = "`/problems/admin-required`: `force=true` takes an admin key of the tenant.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "`/problems/session-not-found`: no live session of this tenant has this id.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid force or reason, or an unknown parameter.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable; retry after `Retry-After` seconds.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn end(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let (tenant, force) = if crate::force_release::asked(&req) {
        let tenant = admin_of(&req, &state)?;
        let reason =
            crate::force_release::reason_of(req.query_string()).map_err(ProblemKind::Validation)?;
        (tenant, Some(reason))
    } else {
        let tenant = tenant_of(&req, &state)?;
        let stray = stray_parameters(req.query_string());
        if !stray.is_empty() {
            return Err(ProblemKind::Validation(stray));
        }
        (tenant, None)
    };
    let id = session_of(&req)?;
    match state.service.sessions().end(tenant, id, force).await? {
        Some(_) => Ok(HttpResponse::NoContent().finish()),
        None => Err(ProblemKind::SessionNotFound),
    }
}
