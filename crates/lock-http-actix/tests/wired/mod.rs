//! The API over a store's ports for this crate's tests, wired as the binary's composition root
//! (`lockd::application::compose`, which these tests cannot reach) wires it: a service reporting
//! to the settings' metrics and the audit log, on the system clock, without hints of other
//! processes' releases. Each test binary uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use actix_web::web::ServiceConfig;
use lock_domain::{LockStore, StoreHealth, SystemClock};
use lock_http_actix::{ApiSettings, LockApi};
use lock_service::{LockService, ServicePorts, StorePorts, WaiterLimits};
use lock_telemetry::MetricsAndAudit;

/// A store's ports, each of which a test may replace with a double of its own, and its health.
pub struct Ports {
    pub store: StorePorts,
    pub health: Arc<dyn StoreHealth>,
}

/// The API over `ports`, holding at most `limits` waiting acquires.
pub fn api(ports: Ports, settings: ApiSettings, limits: WaiterLimits) -> LockApi {
    let service = LockService::new(
        ServicePorts {
            store: ports.store,
            hints: None,
            clock: Arc::new(SystemClock),
            events: Arc::new(MetricsAndAudit::new(Arc::clone(&settings.metrics))),
        },
        limits,
    );
    LockApi::new(service, ports.health, settings)
}

/// Every route of [`api`] with the default waiter limits, for one `App`.
pub fn configure(ports: Ports, settings: ApiSettings) -> impl FnOnce(&mut ServiceConfig) {
    api(ports, settings, WaiterLimits::default()).configure()
}

/// The API over every port of one store.
pub fn over<S>(store: Arc<S>, settings: ApiSettings, limits: WaiterLimits) -> LockApi
where
    S: LockStore + StoreHealth + 'static,
{
    api(
        Ports {
            store: StorePorts::of(Arc::clone(&store)),
            health: store,
        },
        settings,
        limits,
    )
}
