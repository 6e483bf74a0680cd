//! The answers of the routing layer, as problems: an error answer made without a problem body
//! (by actix or Swagger UI), a path no route has, and a method a path does not allow.

use actix_web::dev::ServiceResponse;
use actix_web::http::header;
use actix_web::middleware::ErrorHandlerResponse;
use actix_web::{HttpRequest, HttpResponse, ResponseError};

use super::ProblemKind;

/// Middleware hook: turns an error answer without a problem body into one, keeping its status
/// and headers such as `Allow`. Answers that already are problem+json pass unchanged.
pub(crate) fn into_problem_json<B>(
    res: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    // A handler's problem, rendered without its path: answered again here at the request's
    // path, the one place every route's `instance` is set (and a 500's cause logged).
    let at_path = res
        .response()
        .error()
        .and_then(|error| error.as_error::<ProblemKind>())
        .map(|kind| kind.answer_at(res.request()));
    if let Some(answer) = at_path {
        let (req, _) = res.into_parts();
        return Ok(ErrorHandlerResponse::Response(
            ServiceResponse::new(req, answer).map_into_right_body(),
        ));
    }
    let is_problem = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if is_problem {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let (req, original) = res.into_parts();
    let mut problem = ProblemKind::Other(status).at(&req).error_response();
    for (name, value) in original.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            problem.headers_mut().insert(name.clone(), value.clone());
        }
    }
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(req, problem).map_into_right_body(),
    ))
}

/// The default service: no route has this path.
pub(crate) async fn not_found_route(req: HttpRequest) -> HttpResponse {
    ProblemKind::NotFound(format!("no route for {} {}", req.method(), req.path()))
        .at(&req)
        .error_response()
}

/// A resource's default service: the path exists, the method does not.
pub(crate) fn method_not_allowed(
    allow: &'static str,
) -> impl Fn(HttpRequest) -> std::future::Ready<HttpResponse> + Clone + 'static {
    move |req: HttpRequest| {
        std::future::ready(
            ProblemKind::MethodNotAllowed(allow)
                .at(&req)
                .error_response(),
        )
    }
}
