//! lockd's telemetry: the outbound adapter of the service's events port
//! ([`lock_service::LockEvents`]). Every outcome a use case reports is counted in [`Metrics`]
//! (typed `prometheus-client` families, rendered as the Prometheus text format) and written to
//! the audit log (tracing target `lockd::audit`) by [`MetricsAndAudit`].
//!
//! The crate knows the service and the domain's values; never the web framework nor the
//! database. The HTTP crate counts requests through [`Metrics::request`] and serves
//! [`Metrics::render`] at `/metrics`; the binary builds one [`Metrics`] and hands it to both.

mod audit;
mod events;
mod metrics;

pub use events::MetricsAndAudit;
pub use metrics::{AcquireMetric, Metrics};
