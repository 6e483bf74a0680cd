//! Operations routes: liveness, readiness, metrics, the OpenAPI document and Swagger UI.

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::HttpResponse;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::dto::HealthStatus;
use crate::problem::{method_not_allowed, ProblemKind};
use crate::ApiState;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/healthz")
            .route(web::get().to(healthz))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/readyz")
            .route(web::get().to(readyz))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/metrics")
            .route(web::get().to(metrics))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(
        web::resource("/openapi.json")
            .route(web::get().to(openapi))
            .default_service(web::to(method_not_allowed("GET"))),
    )
    .service(web::redirect("/swagger-ui", "/swagger-ui/"))
    // Swagger UI's files are compiled into the binary (the `vendored` feature); it loads the
    // document from our own /openapi.json route.
    .service(SwaggerUi::new("/swagger-ui/{_:.*}").config(Config::new(["/openapi.json"])));
}

/// Liveness: 200 while the process serves requests.
///
/// Does not touch the database: a failing check means the process itself is stuck or gone, and
/// restarting it is the remedy. Open even when API keys are configured.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "operations",
    responses((status = 200, description = "The process is alive.", body = HealthStatus, example = json!({"status": "ok"})))
)]
pub(crate) async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(HealthStatus { status: "ok" })
}

/// Readiness: 200 when the lock database answers, else 503.
///
/// Send lock traffic to this instance only while this passes. A 503 is a database problem
/// (unreachable, out of connections): restarting lockd does not fix it. Open even when API keys
/// are configured.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "operations",
    responses(
        (status = 200, description = "The lock database answers.", body = HealthStatus, example = json!({"status": "ready"})),
        (status = 503, description = "The lock database does not answer.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn readyz(state: web::Data<ApiState>) -> Result<HttpResponse, ProblemKind> {
    match state.health.ping().await {
        Ok(()) => Ok(HttpResponse::Ok().json(HealthStatus { status: "ready" })),
        Err(error) => Err(ProblemKind::Unavailable(match error {
            lock_domain::RepositoryError::Internal(source) => {
                lock_domain::RepositoryError::Unavailable(source)
            }
            unavailable => unavailable,
        })),
    }
}

/// Prometheus metrics.
///
/// Counters and gauges of this process in the Prometheus text exposition format 0.0.4: requests
/// by route pattern, method and status (`lockd_http_requests_total`), request latency
/// (`lockd_http_request_duration_seconds`), acquires by outcome, releases and renewals by
/// result, live waiters, database pool connections, and the number of live locks (counted in
/// the background every few seconds; `lockd_live_locks_age_seconds` says how long ago). Like
/// `/healthz` it needs no API key: it carries no resource names, owners, tenants or keys.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "operations",
    responses((status = 200, description = "The metrics, one sample per line.", content_type = "text/plain; version=0.0.4", body = String, example = "# HELP lockd_acquire_total Acquires by outcome.\n# TYPE lockd_acquire_total counter\nlockd_acquire_total{outcome=\"granted\"} 12\n"))
)]
pub(crate) async fn metrics(state: web::Data<ApiState>) -> HttpResponse {
    let metrics = &state.settings.metrics;
    metrics.set_live_waiters(state.service.waiting_stats().live);
    metrics.set_observers(state.service.observers());
    metrics.set_quota_usage(&state.service.tenants().usage().await);
    let text = metrics.render(state.health.pool_state());
    HttpResponse::Ok()
        .insert_header((
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        ))
        .body(text)
}

/// This API's OpenAPI 3.1 document.
///
/// The same as `openapi/openapi.json` in the repository: generate a client from it, or read it
/// in Swagger UI at `/swagger-ui/`. Open even when API keys are configured.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapiDocument",
    tag = "operations",
    responses((status = 200, description = "The OpenAPI document.", body = Object, content_type = "application/json"))
)]
pub(crate) async fn openapi(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .body(state.openapi_json.clone())
}
