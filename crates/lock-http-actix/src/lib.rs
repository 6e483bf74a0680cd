//! lockd's REST API on actix-web: the routes, the request and response bodies, one problem+json
//! error type, the OpenAPI document and Swagger UI.
//!
//! The crate knows the domain's port (`Arc<dyn LockRepository>`), never a store: the composition
//! root decides what sits behind it. Request bodies are parsed here into domain values, so the
//! domain never sees JSON.

mod api_doc;
mod api_keys;
mod audit;
mod authentication;
mod body;
mod cursor;
mod dto;
mod fields;
mod listing;
mod lock_request;
mod locks;
mod metrics;
mod operations;
mod peer;
mod problem;
mod query_string;
mod resource_path;
mod server;
mod spin_guard;
mod waiting;

use std::sync::Arc;

use actix_web::middleware::ErrorHandlers;
use actix_web::web::{self, ServiceConfig};
use lock_domain::{LockRepository, DEFAULT_MAX_TTL_SECONDS};

pub use api_doc::{openapi_document, openapi_json, openapi_json_for};
pub use api_keys::{hash_key, ApiKeys, KeysFileError};
pub use metrics::{run_live_lock_counter, AcquireMetric, Metrics};
pub use peer::remember_peer_socket;
pub use problem::{ApiError, FieldError};
pub use server::{serve, ServerOptions};
pub use waiting::{WaiterLimits, Waiting, DEFAULT_MAX_WAITERS};

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
    /// The most acquires that wait at once; one more is answered 429.
    pub waiter_limits: WaiterLimits,
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            max_ttl_seconds: DEFAULT_MAX_TTL_SECONDS,
            body_timeout: std::time::Duration::from_secs(10),
            api_keys: None,
            metrics: Arc::default(),
            max_wait_seconds: DEFAULT_MAX_WAIT_SECONDS,
            waiter_limits: WaiterLimits::default(),
        }
    }
}

/// What every handler shares.
pub(crate) struct ApiState {
    pub repo: Arc<dyn LockRepository>,
    pub settings: ApiSettings,
    pub openapi_json: String,
    pub waiting: Waiting,
}

/// The API of one server: build it once and register it on every worker's `App`, so that all
/// workers share one set of waiting acquires (a release on one worker wakes a waiter on another).
#[derive(Clone)]
pub struct LockApi {
    state: web::Data<ApiState>,
}

impl LockApi {
    pub fn new(repo: Arc<dyn LockRepository>, settings: ApiSettings) -> Self {
        Self {
            state: web::Data::new(ApiState {
                waiting: Waiting::with_limits(Arc::clone(&repo), settings.waiter_limits),
                openapi_json: openapi_json_for(&settings),
                repo,
                settings,
            }),
        }
    }

    /// The waiting acquires, for their counters.
    pub fn waiting(&self) -> &Waiting {
        &self.state.waiting
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
                    // Outermost, so it sees the final status of every answer, errors included.
                    .wrap(actix_web::middleware::from_fn(metrics::record))
                    .configure(listing::routes)
                    .configure(locks::routes)
                    .configure(operations::routes)
                    .default_service(web::to(problem::not_found_route)),
            );
        }
    }
}

/// Registers every route of the API on one actix `App`:
/// `App::new().configure(lock_http_actix::configure(repo, settings))`. A server with several
/// workers builds one [`LockApi`] instead and registers it on each.
pub fn configure(
    repo: Arc<dyn LockRepository>,
    settings: ApiSettings,
) -> impl FnOnce(&mut ServiceConfig) {
    LockApi::new(repo, settings).configure()
}
