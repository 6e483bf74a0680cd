//! The problem answers that every operation of a kind shares, written once here rather than on
//! each route: the 401 of every operation that takes an API key, the 400, 408, 413 and 415 of
//! every operation that reads a JSON body, and the 503 of every operation that reaches the lock
//! database. A route that says more about one of them (a 503 after which "nothing was
//! granted") keeps its own row; this adds only what the route left out.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{OpenApi, Ref, RefOr};
use utoipa::Modify;

const PROBLEM_JSON: &str = "application/problem+json";

const UNAUTHORIZED: &str = "API keys are configured and the request has no valid \
`Authorization: Bearer` key (the `WWW-Authenticate` header says so).";
const BODY_REQUIRED: &str = "The body is empty, not JSON, or not a JSON object.";
const BODY_OPTIONAL: &str = "The body is not JSON, or not a JSON object.";
const BODY_TIMEOUT: &str =
    "The body did not arrive within the body timeout; the connection is closed.";
const BODY_TOO_LARGE: &str = "The body is larger than 16 KiB.";
const NOT_JSON: &str = "The body is not `application/json`.";
const UNAVAILABLE: &str = "The lock database is unavailable.";

/// The tags of the operations that reach the lock database.
const STORE_TAGS: [&str; 4] = ["locks", "semaphores", "elections", "history"];

pub(super) struct SharedResponses;

impl Modify for SharedResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for operation in super::operations_of(item) {
                if takes_api_key(operation) {
                    add(operation, 401, UNAUTHORIZED);
                }
                if let Some(body) = &operation.request_body {
                    let required = body.required == Some(utoipa::openapi::Required::True);
                    add(
                        operation,
                        400,
                        if required {
                            BODY_REQUIRED
                        } else {
                            BODY_OPTIONAL
                        },
                    );
                    add(operation, 408, BODY_TIMEOUT);
                    add(operation, 413, BODY_TOO_LARGE);
                    add(operation, 415, NOT_JSON);
                }
                if reaches_the_store(operation) {
                    add(operation, 503, UNAVAILABLE);
                }
            }
        }
    }
}

/// Whether the operation may be sent with the bearer API key.
fn takes_api_key(operation: &Operation) -> bool {
    operation.security.iter().flatten().any(|requirement| {
        serde_json::to_value(requirement).is_ok_and(|v| v.get("bearer").is_some())
    })
}

fn reaches_the_store(operation: &Operation) -> bool {
    operation
        .tags
        .iter()
        .flatten()
        .any(|tag| STORE_TAGS.contains(&tag.as_str()))
}

/// Adds the problem answer `status` with `description`, unless the route gave its own.
fn add(operation: &mut Operation, status: u16, description: &str) {
    operation
        .responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
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
