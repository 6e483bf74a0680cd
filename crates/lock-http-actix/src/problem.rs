//! The one error type of the HTTP layer: every 4xx and 5xx answer, rendered as RFC 9457
//! `application/problem+json`.

mod fallback;
mod refusals;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use lock_domain::{LockMode, RepositoryError};
use lock_service::{Limit, QuotaExceeded};
use serde::Serialize;
use utoipa::ToSchema;

pub(crate) use fallback::{into_problem_json, method_not_allowed, not_found_route};
pub(crate) use refusals::waiters_full_detail;

/// One invalid input of a 422 answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FieldError {
    /// The input: `resource` (the path segment), `owner`, `ttl_seconds`.
    #[schema(example = "ttl_seconds")]
    pub field: String,
    /// A stable machine-readable code: `required`, `invalid_type`, `invalid_utf8`, `empty`,
    /// `too_long`, `control_character`, `out_of_range`, `invalid_value` or `conflict`.
    #[schema(example = "out_of_range")]
    pub code: String,
    /// What is wrong, for people.
    #[schema(example = "must be between 1 and 86400, got 0")]
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, code: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

/// An RFC 9457 problem details object, as every error answer carries it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Problem {
    /// A URI reference identifying the kind of problem; it ends in the problem's slug.
    #[schema(example = "/problems/not-found")]
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the kind of problem.
    #[schema(example = "Not Found")]
    pub title: String,
    /// The HTTP status code of this answer.
    #[schema(example = 404)]
    pub status: u16,
    /// What happened in this occurrence.
    #[schema(example = "no live lock on resource \"payment:42\"")]
    pub detail: String,
    /// The request path.
    #[schema(example = "/locks/payment:42")]
    pub instance: String,
    /// The invalid inputs (422 only; absent otherwise, never `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub errors: Option<Vec<FieldError>>,
    /// `/problems/limit-mismatch` only: the limit the holders use (live, or kept by a lock-delay).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = i64, nullable = false, minimum = 1, example = 8)]
    pub limit: Option<u32>,
    /// `/problems/permits-mismatch` only: the permits the owner's live grant holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = i64, nullable = false, minimum = 1, example = 2)]
    pub permits: Option<u32>,
    /// `/problems/quota-exceeded` only: the tenant's limit the request would go over
    /// (`max_live_leases`, `max_waiters`, `max_observers` or `max_ttl_seconds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, nullable = false, example = "max_live_leases")]
    pub quota: Option<&'static str>,
    /// `/problems/quota-exceeded` only: what that limit allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = i64, nullable = false, minimum = 0, example = 1000)]
    pub allowed: Option<u64>,
    /// A 404 of a lock or an election whose last lease ran out less than its lock-delay ago
    /// only: when others may acquire it again (RFC 3339, UTC, milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, format = DateTime, nullable = false, example = "2026-11-29T21:33:12.123Z")]
    pub available_at: Option<String>,
}

/// Why an acquire conflicts with the live holders (409).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// The holders (live, or kept by a lock-delay) use this other limit.
    Limit { limit: u32 },
    /// The owner's live grant holds these other permits.
    Permits { permits: u32 },
    /// The owner holds the lock in the other mode than it asks for.
    Mode { asked: LockMode },
}

/// What went wrong, before it is tied to a request path.
#[derive(Debug)]
pub(crate) enum ProblemKind {
    BadRequest(String),
    /// API keys are configured and the request has no valid one.
    Unauthorized,
    /// 403: the operation takes an admin key of the tenant, and the request's is not one.
    AdminRequired,
    Forbidden(String),
    NotFound(String),
    /// 404: nothing holds it, but the lease that ran out keeps its place until `available_at`
    /// (its lock-delay); `Retry-After` says when.
    NotFoundUntil {
        detail: String,
        available_at: chrono::DateTime<chrono::Utc>,
        /// Seconds until then, by the service's clock (`LockService::retry_after_seconds`).
        retry_after_seconds: u64,
    },
    MethodNotAllowed(&'static str),
    PayloadTooLarge,
    /// The client did not send its body in time.
    RequestTimeout,
    UnsupportedMediaType(String),
    Validation(Vec<FieldError>),
    /// 409: the request conflicts with the live holders of a semaphore or a lock.
    Conflict(Conflict),
    /// 404: the session the request names is not live (never the tenant's, closed, forced or
    /// run out); nothing was changed.
    SessionNotFound,
    /// 409: a hold under a session ends with its session; only a keepalive moves it.
    SessionHeld,
    /// A limit of the server is reached (waiting acquires); retry after this many seconds.
    TooManyRequests {
        detail: String,
        retry_after_seconds: u64,
    },
    /// 429: the request would go over a limit of its tenant; nothing was changed.
    QuotaExceeded(QuotaExceeded),
    Unavailable(RepositoryError),
    /// 503: the server has as many connections open as it serves at once (`crate::connection_limit`);
    /// the answer closes the connection.
    TooManyConnections {
        max: usize,
    },
    Internal(Box<dyn std::error::Error + Send + Sync>),
    /// An error answer made elsewhere (actix, Swagger UI) with no problem body: keep its status.
    Other(StatusCode),
}

impl ProblemKind {
    /// Ties the problem to the request it answers.
    pub fn at(self, req: &HttpRequest) -> ApiError {
        ApiError {
            kind: self,
            instance: req.path().to_owned(),
        }
    }
}

impl From<RepositoryError> for ProblemKind {
    fn from(error: RepositoryError) -> Self {
        match error {
            RepositoryError::Unavailable(_) | RepositoryError::StorageFull(_) => {
                ProblemKind::Unavailable(error)
            }
            RepositoryError::Internal(_) => ProblemKind::Internal(Box::new(error)),
        }
    }
}

/// The detail of a 429 `/problems/quota-exceeded`.
pub(crate) fn quota_detail(exceeded: QuotaExceeded) -> String {
    format!("{exceeded}: nothing was changed")
}

/// An error answer of the API. Internal causes are logged, never shown to the client.
#[derive(Debug)]
pub struct ApiError {
    kind: ProblemKind,
    instance: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.kind.slug(), self.instance)
    }
}

impl std::error::Error for ApiError {}

impl ProblemKind {
    fn slug(&self) -> &'static str {
        match self {
            ProblemKind::BadRequest(_) => "bad-request",
            ProblemKind::Unauthorized => "unauthorized",
            ProblemKind::AdminRequired => "admin-required",
            ProblemKind::Forbidden(_) => "forbidden",
            ProblemKind::NotFound(_) | ProblemKind::NotFoundUntil { .. } => "not-found",
            ProblemKind::MethodNotAllowed(_) => "method-not-allowed",
            ProblemKind::PayloadTooLarge => "payload-too-large",
            ProblemKind::RequestTimeout => "request-timeout",
            ProblemKind::UnsupportedMediaType(_) => "unsupported-media-type",
            ProblemKind::Validation(_) => "validation-failed",
            ProblemKind::Conflict(Conflict::Limit { .. }) => "limit-mismatch",
            ProblemKind::Conflict(Conflict::Permits { .. }) => "permits-mismatch",
            ProblemKind::Conflict(Conflict::Mode { .. }) => "mode-mismatch",
            ProblemKind::SessionNotFound => "session-not-found",
            ProblemKind::SessionHeld => "session-held",
            ProblemKind::TooManyRequests { .. } => "too-many-requests",
            ProblemKind::QuotaExceeded(_) => "quota-exceeded",
            ProblemKind::Unavailable(RepositoryError::StorageFull(_)) => "storage-full",
            ProblemKind::Unavailable(_) => "service-unavailable",
            ProblemKind::TooManyConnections { .. } => "too-many-connections",
            ProblemKind::Internal(_) => "internal",
            ProblemKind::Other(status) => match status.as_u16() {
                400 => "bad-request",
                401 => "unauthorized",
                404 => "not-found",
                405 => "method-not-allowed",
                408 => "request-timeout",
                409 => "conflict",
                413 => "payload-too-large",
                415 => "unsupported-media-type",
                429 => "too-many-requests",
                503 => "service-unavailable",
                _ if status.is_server_error() => "internal",
                _ => "bad-request",
            },
        }
    }

    fn detail(&self) -> String {
        match self {
            ProblemKind::BadRequest(detail)
            | ProblemKind::Forbidden(detail)
            | ProblemKind::NotFound(detail)
            | ProblemKind::NotFoundUntil { detail, .. }
            | ProblemKind::UnsupportedMediaType(detail)
            | ProblemKind::TooManyRequests { detail, .. } => detail.clone(),
            ProblemKind::MethodNotAllowed(allow) => format!("this path allows {allow}"),
            ProblemKind::TooManyConnections { max } => format!(
                "lockd has {max} connections open, as many as it serves at once \
                 (--max-connections): this one is closed; retry in a second"
            ),
            ProblemKind::Conflict(Conflict::Limit { limit }) => format!(
                "the semaphore's holders use limit {limit} (its live grants, and those that ran out \
                 whose lock-delay still keeps their places); it can change once none is left"
            ),
            ProblemKind::Conflict(Conflict::Mode { asked }) => {
                let held = match asked {
                    LockMode::Exclusive => "shared",
                    LockMode::Shared => "exclusive",
                };
                format!(
                    "this owner holds the lock in {held} mode; release it to acquire it in {} \
                     mode (there is no change of mode in place)",
                    asked.as_str()
                )
            }
            ProblemKind::Conflict(Conflict::Permits { permits }) => format!(
                "this owner holds {permits} permits of the semaphore; release them to take another \
                 number"
            ),
            ProblemKind::Unauthorized => {
                "send a valid API key as `Authorization: Bearer <key>`".to_owned()
            }
            ProblemKind::SessionNotFound => session_not_found_detail().to_owned(),
            ProblemKind::SessionHeld => {
                "this lease is held under a session and ends with it: keep the session alive \
                 (POST /sessions/{id}/keepalive) instead of renewing the lease"
                    .to_owned()
            }
            ProblemKind::QuotaExceeded(exceeded) => quota_detail(*exceeded),
            ProblemKind::AdminRequired => {
                "this key is not an admin key of its tenant; a force-release takes one (the keys \
                 file marks it with `admin` after its digest)"
                    .to_owned()
            }
            ProblemKind::RequestTimeout => "the request body did not arrive in time".to_owned(),
            ProblemKind::PayloadTooLarge => {
                format!(
                    "request bodies are limited to {} bytes",
                    crate::MAX_BODY_BYTES
                )
            }
            ProblemKind::Validation(errors) => {
                let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
                format!("invalid input: {}", fields.join(", "))
            }
            ProblemKind::Unavailable(RepositoryError::StorageFull(_)) => {
                "the lock database's disk is full: nothing was changed, and reads still work; \
                 retry once space is freed"
                    .to_owned()
            }
            ProblemKind::Unavailable(_) => {
                "the lock database is unavailable; retry later".to_owned()
            }
            ProblemKind::Internal(_) => {
                "the server failed to answer; nothing is known to have changed".to_owned()
            }
            ProblemKind::Other(status) => status.canonical_reason().unwrap_or("error").to_owned(),
        }
    }
    /// The status this problem is answered with.
    fn status(&self) -> StatusCode {
        match self {
            ProblemKind::BadRequest(_) => StatusCode::BAD_REQUEST,
            ProblemKind::Unauthorized => StatusCode::UNAUTHORIZED,
            ProblemKind::AdminRequired | ProblemKind::Forbidden(_) => StatusCode::FORBIDDEN,
            ProblemKind::NotFound(_)
            | ProblemKind::NotFoundUntil { .. }
            | ProblemKind::SessionNotFound => StatusCode::NOT_FOUND,
            ProblemKind::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ProblemKind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ProblemKind::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ProblemKind::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ProblemKind::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ProblemKind::Conflict(_) | ProblemKind::SessionHeld => StatusCode::CONFLICT,
            ProblemKind::TooManyRequests { .. } | ProblemKind::QuotaExceeded(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ProblemKind::Unavailable(_) | ProblemKind::TooManyConnections { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ProblemKind::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ProblemKind::Other(status) => *status,
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.kind.status()
    }

    fn error_response(&self) -> HttpResponse {
        render(&self.kind, &self.instance, true)
    }
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}

/// A handler's problem, answered without its path: the scope's error handler
/// (`fallback::into_problem_json`) renders it again at the request's path, so every route's
/// `instance` is set there, in one place.
impl ResponseError for ProblemKind {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        render(self, "", false)
    }
}

impl ProblemKind {
    /// This problem answered at `req`'s path, its cause logged.
    pub(crate) fn answer_at(&self, req: &HttpRequest) -> HttpResponse {
        render(self, req.path(), true)
    }
}

/// The problem+json answer of `kind` at `instance` (the request's path); with `log`, the cause of
/// a 500 or a 503 is logged (once: by whoever renders it with its path).
fn render(kind: &ProblemKind, instance: &str, log: bool) -> HttpResponse {
    let status = kind.status();
    match kind {
        _ if !log => {}
        ProblemKind::Internal(cause) => {
            tracing::error!(instance = %instance, cause = %cause_chain(cause.as_ref()), "request failed");
        }
        ProblemKind::Unavailable(cause) => {
            tracing::warn!(instance = %instance, cause = %cause_chain(cause), "database unavailable");
        }
        _ => {}
    }
    let problem = Problem {
        kind: format!("/problems/{}", kind.slug()),
        title: status.canonical_reason().unwrap_or("Error").to_owned(),
        status: status.as_u16(),
        detail: kind.detail(),
        instance: instance.to_owned(),
        errors: match kind {
            ProblemKind::Validation(errors) => Some(errors.clone()),
            _ => None,
        },
        limit: match kind {
            ProblemKind::Conflict(Conflict::Limit { limit }) => Some(*limit),
            _ => None,
        },
        permits: match kind {
            ProblemKind::Conflict(Conflict::Permits { permits }) => Some(*permits),
            _ => None,
        },
        quota: match kind {
            ProblemKind::QuotaExceeded(exceeded) => Some(exceeded.limit.key()),
            _ => None,
        },
        allowed: match kind {
            ProblemKind::QuotaExceeded(exceeded) => Some(exceeded.allowed),
            _ => None,
        },
        available_at: match kind {
            ProblemKind::NotFoundUntil { available_at, .. } => {
                Some(crate::dto::timestamp(*available_at))
            }
            _ => None,
        },
    };
    let mut response = HttpResponse::build(status);
    response.insert_header((header::CONTENT_TYPE, "application/problem+json"));
    match kind {
        ProblemKind::MethodNotAllowed(allow) => {
            response.insert_header((header::ALLOW, *allow));
        }
        ProblemKind::RequestTimeout => {
            response.insert_header((header::CONNECTION, "close"));
        }
        ProblemKind::Unauthorized => {
            response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
        }
        ProblemKind::Unavailable(_) => {
            response.insert_header((header::RETRY_AFTER, "1"));
        }
        ProblemKind::TooManyConnections { .. } => {
            response.insert_header((header::RETRY_AFTER, "1"));
            response.insert_header((header::CONNECTION, "close"));
        }
        ProblemKind::TooManyRequests {
            retry_after_seconds,
            ..
        } => {
            response.insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()));
        }
        ProblemKind::NotFoundUntil {
            retry_after_seconds,
            ..
        } => {
            response.insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()));
        }
        // Usage falls as leases end; a lease length over the limit never passes.
        ProblemKind::QuotaExceeded(exceeded) if exceeded.limit != Limit::MaxTtlSeconds => {
            response.insert_header((header::RETRY_AFTER, "1"));
        }
        _ => {}
    }
    let body = serde_json::to_vec(&problem).unwrap_or_else(|_| b"{}".to_vec());
    response.body(body)
}

fn cause_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The detail of every `/problems/session-not-found`.
pub(crate) fn session_not_found_detail() -> &'static str {
    "no live session of this tenant has this id: it was never opened, or it was closed, forced \
     or ran out (a session is never revived); nothing was changed"
}
