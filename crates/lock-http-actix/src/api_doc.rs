//! The OpenAPI document of the API, generated from the handlers' annotations.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{dto, listing, locks, operations, problem};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "lockd",
        description = "A distributed lock service: leases with a TTL, owner checks, and fencing tokens that strictly increase with every grant of a resource.\n\nErrors are RFC 9457 `application/problem+json` documents.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        listing::list,
        locks::acquire,
        locks::status,
        locks::release,
        locks::renew,
        operations::healthz,
        operations::readyz,
        operations::metrics,
        operations::openapi,
    ),
    components(schemas(
        dto::LockView,
        dto::LockList,
        dto::ListedLockView,
        dto::AcquireResponse,
        dto::AcquireGranted,
        dto::AcquireHeld,
        dto::AcquireRequest,
        dto::RenewRequest,
        dto::ReleaseRequest,
        dto::HealthStatus,
        problem::Problem,
        problem::FieldError,
    )),
    modifiers(&BearerKeys),
    tags(
        (name = "locks", description = "Acquire, inspect, list, renew and release locks."),
        (name = "operations", description = "Health, readiness, metrics and this document."),
    )
)]
struct ApiDoc;

/// Declares the bearer API-key scheme that every lock operation requires when the server has
/// API keys, so that Swagger UI's "Authorize" sends the key.
struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API key of your tenant (only when the server runs with --api-keys-file).",
                    ))
                    .build(),
            ),
        );
    }
}

/// The OpenAPI document as a value.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    // The version is the crate's, so the committed document changes only with a release.
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

/// The OpenAPI document exactly as served at `/openapi.json` and committed as
/// `openapi/openapi.json` (pretty-printed, with a final newline).
pub fn openapi_json() -> String {
    let mut json = openapi_document()
        .to_pretty_json()
        .expect("the OpenAPI document serializes");
    json.push('\n');
    json
}
