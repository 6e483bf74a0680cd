//! The problem answers of the OpenAPI document, completed in one place so that every operation
//! describes them alike: each `application/problem+json` response gets an example of exactly
//! what lockd sends and the headers that come with it, and each lock operation documents the 500
//! it answers when the database fails in an unexpected way.

use serde_json::{json, Value};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ObjectBuilder, OpenApi, Ref, RefOr, Type};
use utoipa::Modify;

const PROBLEM_JSON: &str = "application/problem+json";
/// The resource name the examples use, as in the rest of the document.
const EXAMPLE_RESOURCE: &str = "payment:42";
/// The semaphore name the examples use.
const EXAMPLE_SEMAPHORE: &str = "export";

pub(super) struct ProblemResponses;

impl Modify for ProblemResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let instance = path
                .replace("{resource}", EXAMPLE_RESOURCE)
                .replace("{name}", EXAMPLE_SEMAPHORE);
            for operation in super::operations_of(item) {
                if is_lock_operation(operation) {
                    add_internal_error(operation);
                }
                complete_problems(operation, &instance);
            }
        }
    }
}

/// Lock and semaphore operations go to the lock database, whose unexpected failures answer 500.
fn is_lock_operation(operation: &Operation) -> bool {
    operation
        .tags
        .iter()
        .flatten()
        .any(|tag| tag == "locks" || tag == "semaphores")
}

fn add_internal_error(operation: &mut Operation) {
    operation
        .responses
        .responses
        .entry("500".to_owned())
        .or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(
                        "The lock database failed in an unexpected way; the cause is logged, not \
                         shown. Nothing is known to have changed: retrying is safe.",
                    )
                    .content(
                        PROBLEM_JSON,
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Problem")))
                            .build(),
                    )
                    .build(),
            )
        });
}

fn complete_problems(operation: &mut Operation, instance: &str) {
    let id = operation.operation_id.clone().unwrap_or_default();
    for (status, response) in operation.responses.responses.iter_mut() {
        let RefOr::T(response) = response else {
            continue;
        };
        let Some(content) = response.content.get_mut(PROBLEM_JSON) else {
            continue;
        };
        let Ok(status) = status.parse::<u16>() else {
            continue;
        };
        if let Some(example) = example(status, instance, &id) {
            content.example = Some(example);
        }
        if let Some((name, description)) = header_of(status) {
            response.headers.insert(
                name.to_owned(),
                HeaderBuilder::new()
                    .schema(ObjectBuilder::new().schema_type(Type::String))
                    .description(Some(description))
                    .build(),
            );
        }
    }
}

/// The problem lockd answers with this status, as it renders it (see `ApiError`).
fn example(status: u16, instance: &str, operation_id: &str) -> Option<Value> {
    // Where a 404 can only be about the session: the session routes, and the acquires (a
    // request under a session that is not live).
    const SESSION_404: [&str; 8] = [
        "getSession",
        "endSession",
        "keepSessionAlive",
        "observeSession",
        "acquireLock",
        "acquireLocks",
        "acquirePermits",
        "campaign",
    ];
    if status == 404 && SESSION_404.contains(&operation_id) {
        return Some(json!({
            "type": "/problems/session-not-found",
            "title": "Not Found",
            "status": 404,
            "detail": crate::problem::session_not_found_detail(),
            "instance": instance,
        }));
    }
    if instance.starts_with("/semaphores") {
        if let Some(example) = semaphore_example(status, instance, operation_id) {
            return Some(example);
        }
    }
    let (slug, title, detail) = match status {
        400 => (
            "bad-request",
            "Bad Request",
            "the request body is not valid JSON".to_owned(),
        ),
        401 => (
            "unauthorized",
            "Unauthorized",
            "send a valid API key as `Authorization: Bearer <key>`".to_owned(),
        ),
        403 => (
            "forbidden",
            "Forbidden",
            format!("the lock on resource {EXAMPLE_RESOURCE:?} is held by another owner"),
        ),
        404 => (
            "not-found",
            "Not Found",
            format!("no live lock on resource {EXAMPLE_RESOURCE:?}"),
        ),
        409 => (
            "mode-mismatch",
            "Conflict",
            "this owner holds the lock in shared mode; release it to acquire it in exclusive mode \
             (there is no change of mode in place)"
                .to_owned(),
        ),
        408 => (
            "request-timeout",
            "Request Timeout",
            "the request body did not arrive in time".to_owned(),
        ),
        413 => (
            "payload-too-large",
            "Payload Too Large",
            format!(
                "request bodies are limited to {} bytes",
                crate::MAX_BODY_BYTES
            ),
        ),
        415 => (
            "unsupported-media-type",
            "Unsupported Media Type",
            "request bodies must be application/json, got \"text/plain\"".to_owned(),
        ),
        422 => {
            return Some(json!({
                "type": "/problems/validation-failed",
                "title": "Unprocessable Entity",
                "status": 422,
                "detail": "invalid input: ttl_seconds",
                "instance": instance,
                "errors": [{
                    "field": "ttl_seconds",
                    "code": "out_of_range",
                    "message": "ttl_seconds must be between 1 and 86400, got 0",
                }],
            }))
        }
        429 => (
            "too-many-requests",
            "Too Many Requests",
            crate::problem::waiters_full_detail(false),
        ),
        500 => (
            "internal",
            "Internal Server Error",
            "the server failed to answer; nothing is known to have changed".to_owned(),
        ),
        503 => (
            "service-unavailable",
            "Service Unavailable",
            "the lock database is unavailable; retry later".to_owned(),
        ),
        _ => return None,
    };
    Some(json!({
        "type": format!("/problems/{slug}"),
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
    }))
}

/// The problems of the semaphore routes that differ from the locks'.
fn semaphore_example(status: u16, instance: &str, operation_id: &str) -> Option<Value> {
    match status {
        404 if operation_id == "getSemaphore" => Some(json!({
            "type": "/problems/not-found",
            "title": "Not Found",
            "status": 404,
            "detail": format!("no live holder of semaphore {EXAMPLE_SEMAPHORE:?}"),
            "instance": instance,
        })),
        404 => Some(json!({
            "type": "/problems/not-found",
            "title": "Not Found",
            "status": 404,
            "detail": format!("no live permit of this owner on semaphore {EXAMPLE_SEMAPHORE:?}"),
            "instance": instance,
        })),
        409 => Some(json!({
            "type": "/problems/limit-mismatch",
            "title": "Conflict",
            "status": 409,
            "detail": "the semaphore's holders use limit 8 (its live grants, and those that ran out whose lock-delay still keeps their places); it can change once none is left",
            "instance": instance,
            "limit": 8,
        })),
        _ => None,
    }
}

/// The header that comes with a problem of this status.
fn header_of(status: u16) -> Option<(&'static str, &'static str)> {
    match status {
        401 => Some((
            "WWW-Authenticate",
            "`Bearer`: send an API key of your tenant.",
        )),
        408 => Some(("Connection", "`close`: the server closes the connection.")),
        429 | 503 => Some(("Retry-After", "Seconds to wait before retrying (`1`).")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ProblemKind;
    use actix_web::test::TestRequest;
    use actix_web::ResponseError;

    /// The examples are what `ApiError` really renders, field for field.
    #[actix_web::test]
    async fn examples_match_the_rendered_problems() {
        let req = TestRequest::with_uri("/locks/payment:42").to_http_request();
        let kinds = [
            ProblemKind::BadRequest("the request body is not valid JSON".to_owned()),
            ProblemKind::Unauthorized,
            ProblemKind::Forbidden(format!(
                "the lock on resource {EXAMPLE_RESOURCE:?} is held by another owner"
            )),
            ProblemKind::NotFound(format!("no live lock on resource {EXAMPLE_RESOURCE:?}")),
            ProblemKind::RequestTimeout,
            ProblemKind::Conflict(crate::problem::Conflict::Mode {
                asked: lock_domain::LockMode::Exclusive,
            }),
            ProblemKind::PayloadTooLarge,
            ProblemKind::UnsupportedMediaType(
                "request bodies must be application/json, got \"text/plain\"".to_owned(),
            ),
            ProblemKind::Validation(vec![crate::problem::FieldError::new(
                "ttl_seconds",
                "out_of_range",
                "ttl_seconds must be between 1 and 86400, got 0",
            )]),
            ProblemKind::TooManyRequests {
                detail: crate::problem::waiters_full_detail(false),
                retry_after_seconds: 1,
            },
            ProblemKind::Internal("disk on fire".into()),
            ProblemKind::Unavailable(lock_domain::RepositoryError::Unavailable(
                "connection refused".into(),
            )),
        ];
        for kind in kinds {
            let response = kind.at(&req).error_response();
            let status = response.status().as_u16();
            let body = actix_web::body::to_bytes(response.into_body())
                .await
                .unwrap_or_default();
            let rendered: Value = serde_json::from_slice(&body).unwrap_or_default();
            assert_eq!(
                Some(rendered),
                example(status, "/locks/payment:42", "renewLock"),
                "status {status}"
            );
        }
        let response = ProblemKind::SessionNotFound.at(&req).error_response();
        let body = actix_web::body::to_bytes(response.into_body())
            .await
            .unwrap_or_default();
        let rendered: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(
            Some(rendered),
            example(404, "/locks/payment:42", "acquireLock")
        );
    }
}
