//! The actix middleware that counts every answered request by its route pattern, method and
//! status, and observes its latency.

use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;

/// The `method` label: the usual methods by name, any other as `other` (a client can send any
/// token as a method; it must not create series).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The middleware that counts every answered request by its route pattern and status.
pub(crate) async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let metrics = req
        .app_data::<actix_web::web::Data<crate::ApiState>>()
        .map(|state| Arc::clone(&state.settings.metrics));
    let method = req.method().clone();
    let route = req.match_pattern();
    let response = next.call(req).await;
    if let Some(metrics) = metrics {
        let status = match &response {
            Ok(response) => response.status().as_u16(),
            Err(error) => error.as_response_error().status_code().as_u16(),
        };
        metrics.request(
            route.as_deref(),
            method_label(&method),
            status,
            started.elapsed(),
        );
    }
    response
}
