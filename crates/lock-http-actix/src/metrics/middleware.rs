//! The actix middleware that counts every answered request by its route pattern, method and
//! status, and observes its latency.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;

use super::families::{RequestLabels, RouteLabel};
use super::Metrics;

/// The route patterns seen so far, each leaked once, so that label sets can hold them as
/// `&'static str`. Their number is bounded by the routes the app registers.
#[derive(Debug, Default)]
pub(super) struct RouteNames(Mutex<Vec<&'static str>>);

impl RouteNames {
    fn intern(&self, route: &str) -> &'static str {
        let mut routes = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = routes.iter().find(|known| **known == route) {
            return known;
        }
        // Bounded by the app's route table (a handful of patterns): leaking them is the
        // cheapest way to key the families by `&'static str`.
        let leaked: &'static str = Box::leak(route.to_owned().into_boxed_str());
        routes.push(leaked);
        leaked
    }
}

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

impl Metrics {
    /// Counts one answered request and its latency.
    fn request(&self, route: Option<&str>, method: &Method, status: u16, elapsed: Duration) {
        let route = match route {
            Some(pattern) => self.routes.intern(pattern),
            None => "unmatched",
        };
        self.families
            .requests
            .get_or_create(&RequestLabels {
                route,
                method: method_label(method),
                status,
            })
            .inc();
        self.families
            .latency
            .get_or_create(&RouteLabel { route })
            .observe(elapsed.as_secs_f64());
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
        metrics.request(route.as_deref(), &method, status, started.elapsed());
    }
    response
}
