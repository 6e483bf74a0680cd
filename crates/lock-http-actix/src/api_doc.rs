//! The OpenAPI document of the API, generated from the handlers' annotations.
//!
//! The document is a product of its own: clients are generated from it (the live tests generate
//! one with openapi-python-client) and people read it in Swagger UI. So it stays within what
//! generators handle (no boolean `const`, no `null` where a value is simply absent) and says
//! every status each operation answers, with an example.

pub(crate) mod election_requests;
pub(crate) mod history_requests;
pub(crate) mod multi_requests;
mod problem_responses;
mod quota_responses;
mod request_limits;
pub(crate) mod requests;
mod shared_responses;
mod storage_full_responses;

use problem_responses::ProblemResponses;
use quota_responses::QuotaResponses;
pub(crate) use request_limits::RequestLimits;
use shared_responses::SharedResponses;
use storage_full_responses::StorageFullResponses;

use utoipa::openapi::request_body::RequestBody;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Type};
use utoipa::{Modify, OpenApi};

use crate::{
    dto, election_listing, elections, event_stream, fence, history, listing, locks, multi_locks,
    observe, operations, problem, semaphores, sessions,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "lockd",
        description = "A distributed lock service. Take a **lease** on a named resource with `POST /locks/{resource}`; it ends by itself after `ttl_seconds` unless you renew it, only you (the `owner`) may renew or release it, and every grant carries a **fencing token** that strictly increases with every grant of the resource: send it with your writes so a store can refuse a holder that paused past its lease.\n\nAn acquire that finds the lock held by someone else is not an error: the answer is `200` with `acquired: false`, and you retry later.\n\nErrors are RFC 9457 `application/problem+json` documents with a stable `type` (`/problems/not-found`, ...); a `422` lists every invalid input in `errors`. Any request may answer `503` `/problems/too-many-connections` (with `Retry-After: 1`, and its connection closed) when the server has as many connections open as it serves at once; `/healthz` and `/readyz` are answered all the same.\n\n**Semaphores** (`/semaphores/{name}`) let up to `limit` permits be held at once, each grant with its own lease and fencing token; a semaphore and a lock of the same name are unrelated.\n\n**Elections** (`/elections/{name}`) have one leader at a time: its lease's fencing token is its `term`. An election is unrelated to the lock and the semaphore of the same name.\n\nWhen the server runs with API keys, every `/locks`, `/semaphores` and `/elections` request needs `Authorization: Bearer <key>` (use **Authorize**) and sees only its tenant's locks.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        listing::list,
        multi_locks::acquire_all,
        multi_locks::release_all,
        locks::acquire,
        locks::status,
        locks::release,
        locks::renew,
        fence::lock_fence,
        observe::observe_lock,
        semaphores::list,
        semaphores::acquire,
        semaphores::status,
        semaphores::release,
        semaphores::renew,
        fence::semaphore_fence,
        observe::observe_semaphore,
        election_listing::list,
        elections::campaign,
        elections::leader,
        elections::proclaim,
        elections::renew,
        elections::resign,
        elections::resign_at_name,
        fence::election_fence,
        observe::observe_election,
        history::lock_history,
        history::semaphore_history,
        history::election_history,
        history::tenant_history,
        event_stream::follow,
        sessions::open,
        sessions::list,
        sessions::look,
        sessions::keep_alive,
        sessions::end,
        observe::session::observe_session,
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
        requests::AcquireRequest,
        requests::RenewRequest,
        requests::ReleaseRequest,
        multi_requests::MultiAcquireRequest,
        multi_requests::ReleaseManyRequest,
        dto::MultiAcquireResponse,
        dto::MultiGranted,
        dto::MultiUnavailable,
        dto::ReleaseManyResponse,
        dto::ReleaseOne,
        dto::ReleaseOutcome,
        dto::PermitView,
        dto::PermitAcquireResponse,
        dto::PermitGranted,
        dto::PermitUnavailable,
        dto::SemaphoreView,
        dto::SemaphoreList,
        requests::PermitAcquireRequest,
        requests::PermitRenewRequest,
        dto::LockFenceResponse,
        dto::LockFenceValid,
        dto::PermitFenceResponse,
        dto::PermitFenceValid,
        dto::FenceStale,
        dto::LeaderView,
        dto::ListedElectionView,
        dto::ElectionList,
        dto::CampaignResponse,
        dto::ElectionFenceResponse,
        dto::ElectionFenceValid,
        election_requests::CampaignRequest,
        election_requests::ProclaimRequest,
        election_requests::LeaderRenewRequest,
        election_requests::ResignRequest,
        dto::SessionView,
        dto::SessionResponse,
        dto::HoldView,
        dto::SessionHoldsResponse,
        dto::ListedSessionView,
        dto::SessionList,
        requests::SessionOpenRequest,
        requests::SessionKeepAliveRequest,
        crate::force_release::ForceReleasedResponse,
        crate::force_release::EndedLease,
        dto::HistoryRecordView,
        dto::HistoryList,
        dto::HealthStatus,
        problem::Problem,
        problem::FieldError,
    )),
    modifiers(
        &SharedResponses,
        &BearerKeys,
        &AbsentNotNull,
        &ProblemResponses,
        &QuotaResponses,
        &StorageFullResponses
    ),
    tags(
        (name = "locks", description = "Acquire, inspect, list, renew and release locks."),
        (name = "semaphores", description = "Counting semaphores: take permits out of a limit, inspect, list, renew and release them. Every grant has its own fencing token."),
        (name = "elections", description = "Leader election: campaign for an office, lead it (proclaim a value, renew the lease), resign, and see who leads. The leader's term is a fencing token, larger than every earlier leader's."),
        (name = "sessions", description = "Sessions: one lease that keeps many locks, permits and leaderships alive with one keepalive, and ends them all at once. Take a hold under a session with `\"session\": id` in place of the holder, its TTL and lock-delay."),
        (name = "history", description = "Who held what, when: every change to every lease, recorded with the change, a page at a time or as a live event stream."),
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

/// Every operation of one path, for the modifiers that complete them all alike.
fn operations_of(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.patch,
    ]
    .into_iter()
    .flatten()
}

/// An optional request body (`request_body(content = Option<T>)`) is one that may be left out,
/// but utoipa also makes its schema `oneOf: [null, T]`, which says a JSON `null` body is fine (it
/// is a 400) and which generators turn into a client that cannot send no body. Keep just `T`.
struct AbsentNotNull;

impl Modify for AbsentNotNull {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for operation in operations_of(item) {
                if let Some(body) = operation.request_body.as_mut() {
                    drop_null_alternative(body);
                }
            }
        }
    }
}

fn drop_null_alternative(body: &mut RequestBody) {
    for content in body.content.values_mut() {
        let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema else {
            continue;
        };
        let mut others = one_of.items.iter().filter(|item| !is_null(item));
        if let (Some(only), None) = (others.next(), others.next()) {
            content.schema = Some(only.clone());
        }
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(schema, RefOr::T(Schema::Object(object)) if object.schema_type == Type::Null.into())
}

/// The OpenAPI document of a server with the default settings, as a value.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    document(RequestLimits::default())
}

fn document(limits: RequestLimits) -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    limits.modify(&mut doc);
    // The version is the crate's, so the committed document changes only with a release.
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

/// The OpenAPI document of a server with the default settings, as committed as
/// `openapi/openapi.json` (pretty-printed, with a final newline).
pub fn openapi_json() -> String {
    pretty(document(RequestLimits::default()))
}

/// The OpenAPI document exactly as a server with `settings` serves it at `/openapi.json`: the
/// limits of `ttl_seconds` and `wait_seconds` are the settings'.
pub fn openapi_json_for(settings: &crate::ApiSettings) -> String {
    pretty(document(RequestLimits {
        max_ttl_seconds: settings.max_ttl_seconds,
        max_wait_seconds: settings.max_wait_seconds,
    }))
}

fn pretty(doc: utoipa::openapi::OpenApi) -> String {
    let mut json = doc
        .to_pretty_json()
        .expect("the OpenAPI document serializes");
    json.push('\n');
    json
}
