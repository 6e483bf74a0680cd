//! lockd's REST API on actix-web: the routes, the request and response bodies, one problem+json
//! error type, the OpenAPI document, Swagger UI and the dashboard (`/ui/`, static files built
//! into the binary).
//!
//! A handler parses the request into domain values, makes one call to the application layer
//! (`lock_service::LockService`), and renders the answer. The crate knows the service, the
//! domain's values and its `StoreHealth` port (readiness, pool metrics), never a store: the
//! composition root decides what sits behind them. It counts every request in the
//! `lock_telemetry::Metrics` it is given and serves them at `/metrics`; the service's events
//! (metrics of outcomes, the audit log) are `lock-telemetry`'s to record.

mod api_doc;
mod api_keys;
mod authentication;
mod body;
mod connection_limit;
mod cursor;
mod dashboard;
mod dto;
mod election_listing;
mod election_request;
mod elections;
mod event_stream;
mod fence;
mod fields;
mod force_release;
mod history;
mod history_query;
mod lease_terms;
mod listing;
mod lock_request;
mod locks;
mod multi_locks;
mod multi_request;
mod observe;
mod operations;
mod peer;
mod problem;
mod query_string;
mod request_metrics;
mod resource_path;
mod semaphore_request;
mod semaphores;
mod server;
mod sessions;
mod spin_guard;

use std::sync::Arc;

use actix_web::middleware::ErrorHandlers;
use actix_web::web::{self, ServiceConfig};
use lock_domain::{StoreHealth, DEFAULT_MAX_TTL_SECONDS};
use lock_service::LockService;
use lock_telemetry::Metrics;

pub use api_doc::{openapi_document, openapi_json, openapi_json_for};
pub use api_keys::{hash_key, ApiKeys, KeysFileError};
pub use peer::remember_peer_socket;
pub use problem::{ApiError, FieldError};
pub use server::{serve, ServerOptions};

/// The most bytes a request body may have: larger bodies answer 413.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The default largest `wait_seconds` of an acquire.
pub const DEFAULT_MAX_WAIT_SECONDS: u32 = 60;

/// Settings of the API that are not the repository.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// The largest `ttl_seconds` accepted on acquire and renew (the served document says so).
    pub max_ttl_seconds: u32,
    /// How long a client may take to send a request body once its headers are in; a client
    /// that stalls mid-body (slowloris) gets 408 and its connection is closed.
    pub body_timeout: std::time::Duration,
    /// API keys. `None`: every request belongs to the default tenant and `Authorization` is
    /// ignored. `Some`: every `/locks` request needs `Authorization: Bearer <key>`.
    pub api_keys: Option<Arc<ApiKeys>>,
    /// What `/metrics` reports; share it with whatever else updates it (the live-lock counter,
    /// the waiting acquires).
    pub metrics: Arc<Metrics>,
    /// The largest `wait_seconds` accepted on acquire (0: acquires never wait; the served
    /// document says so).
    pub max_wait_seconds: u32,
    /// The lock-delay of an exclusive acquire or a campaign that does not ask for one.
    pub default_lock_delay: lock_domain::LockDelay,
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            max_ttl_seconds: DEFAULT_MAX_TTL_SECONDS,
            body_timeout: std::time::Duration::from_secs(10),
            api_keys: None,
            metrics: Arc::default(),
            max_wait_seconds: DEFAULT_MAX_WAIT_SECONDS,
            default_lock_delay: lock_domain::LockDelay::NONE,
        }
    }
}

/// What every handler shares.
pub(crate) struct ApiState {
    pub service: LockService,
    pub health: Arc<dyn StoreHealth>,
    pub settings: ApiSettings,
    pub openapi_json: String,
}

/// The API of one server: build it once and register it on every worker's `App`, so that all
/// workers share one service, and so one set of waiting acquires (a release on one worker wakes
/// a waiter on another).
#[derive(Clone)]
pub struct LockApi {
    state: web::Data<ApiState>,
}

impl LockApi {
    /// The API over `service`, with `health` for `/readyz` and the pool's metrics.
    pub fn new(service: LockService, health: Arc<dyn StoreHealth>, settings: ApiSettings) -> Self {
        Self {
            state: web::Data::new(ApiState {
                service,
                health,
                openapi_json: openapi_json_for(&settings),
                settings,
            }),
        }
    }

    /// The service behind the API.
    pub fn service(&self) -> &LockService {
        &self.state.service
    }

    /// Registers every route of the API on an actix `App`:
    /// `App::new().configure(api.configure())`.
    pub fn configure(&self) -> impl FnOnce(&mut ServiceConfig) {
        let state = self.state.clone();
        move |cfg: &mut ServiceConfig| {
            cfg.app_data(state).service(
                // One scope around every route, so that any error answer that did not come from
                // `ApiError` (a missing Swagger UI file, an actix default) is still problem+json.
                web::scope("")
                    .wrap(ErrorHandlers::new().default_handler(problem::into_problem_json))
                    .wrap(actix_web::middleware::from_fn(connection_limit::shed))
                    // Outermost, so it sees the final status of every answer, errors included.
                    .wrap(actix_web::middleware::from_fn(request_metrics::record))
                    .configure(listing::routes)
                    .configure(locks::routes)
                    .configure(semaphores::routes)
                    .configure(sessions::routes)
                    .configure(fence::routes)
                    .configure(elections::routes)
                    .configure(election_listing::routes)
                    .configure(observe::routes)
                    .configure(history::routes)
                    .configure(event_stream::routes)
                    .configure(operations::routes)
                    .configure(dashboard::routes)
                    .default_service(web::to(problem::not_found_route)),
            );
        }
    }
}
