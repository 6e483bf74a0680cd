//! `/ui/`: the dashboard, a page of hand-written HTML, CSS and JavaScript modules compiled into
//! the binary, so it needs no CDN, no build step and no files next to the binary.
//!
//! The routes need no API key: the files hold no data. The page asks for a key, keeps it in the
//! tab's `sessionStorage` and sends it with the API requests it makes itself. Like Swagger UI the
//! page is not part of the OpenAPI document: it is not an API.

use actix_web::http::header;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};

use crate::problem::{method_not_allowed, ProblemKind};

/// One file of the page, as it is served.
struct UiFile {
    /// Its name under `/ui/`; the empty name is the page itself.
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// A file of `ui/`, served under its own name.
macro_rules! ui_file {
    ($name:literal, $content_type:expr) => {
        UiFile {
            name: $name,
            content_type: $content_type,
            body: include_str!(concat!("../ui/", $name)),
        }
    };
}

/// Every file the page loads; anything else under `/ui/` is a 404.
const FILES: &[UiFile] = &[
    UiFile {
        name: "",
        content_type: HTML,
        body: include_str!("../ui/index.html"),
    },
    ui_file!("dashboard.css", CSS),
    ui_file!("dashboard.js", JAVASCRIPT),
    ui_file!("api.js", JAVASCRIPT),
    ui_file!("element.js", JAVASCRIPT),
    ui_file!("format.js", JAVASCRIPT),
    ui_file!("event_stream.js", JAVASCRIPT),
    ui_file!("live_table.js", JAVASCRIPT),
    ui_file!("lease_tables.js", JAVASCRIPT),
    ui_file!("event_feed.js", JAVASCRIPT),
    ui_file!("history_dialog.js", JAVASCRIPT),
    ui_file!("force_release.js", JAVASCRIPT),
    ui_file!("sessions.js", JAVASCRIPT),
];

/// The page may load and contact only lockd itself: a script injected through a server string
/// that slipped past `textContent` could neither run inline nor send the key elsewhere.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; connect-src 'self'; \
     img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'";

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(web::redirect("/ui", "/ui/").permanent())
        .service(
            web::resource("/ui/{file:.*}")
                .route(web::get().to(file))
                .default_service(web::to(method_not_allowed("GET"))),
        );
}

async fn file(req: HttpRequest) -> Result<HttpResponse, ProblemKind> {
    let name = req.match_info().get("file").unwrap_or_default();
    let Some(found) = FILES.iter().find(|file| file.name == name) else {
        return Err(ProblemKind::NotFound(format!(
            "the dashboard has no file {}",
            req.path()
        )));
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, found.content_type))
        // The files change with the binary: a browser asks again rather than run an old page
        // against a new API.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(found.body))
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::test::{call_service, init_service, read_body, TestRequest};
    use actix_web::App;

    use super::*;

    /// The dashboard's routes under the API's error handler, which sets every problem's
    /// `instance` (as `LockApi::configure` mounts them).
    async fn get(
        path: &str,
    ) -> actix_web::dev::ServiceResponse<actix_web::body::EitherBody<actix_web::body::BoxBody>>
    {
        let app = init_service(
            App::new()
                .wrap(
                    actix_web::middleware::ErrorHandlers::new()
                        .default_handler(crate::problem::into_problem_json),
                )
                .configure(routes),
        )
        .await;
        call_service(&app, TestRequest::get().uri(path).to_request()).await
    }

    fn header_of<'a, B>(res: &'a actix_web::dev::ServiceResponse<B>, name: &str) -> &'a str {
        res.headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }

    #[actix_web::test]
    async fn every_file_is_served_with_its_type_and_the_strict_headers() {
        for (path, content_type) in [
            ("/ui/", HTML),
            ("/ui/dashboard.css", CSS),
            ("/ui/dashboard.js", JAVASCRIPT),
            ("/ui/history_dialog.js", JAVASCRIPT),
        ] {
            let res = get(path).await;
            assert_eq!(res.status(), StatusCode::OK, "{path}");
            assert_eq!(header_of(&res, "content-type"), content_type, "{path}");
            assert_eq!(header_of(&res, "cache-control"), "no-cache");
            assert_eq!(header_of(&res, "x-content-type-options"), "nosniff");
            assert_eq!(
                header_of(&res, "content-security-policy"),
                CONTENT_SECURITY_POLICY
            );
        }
    }

    #[actix_web::test]
    async fn ui_without_its_slash_redirects_permanently() {
        let res = get("/ui").await;
        assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(header_of(&res, "location"), "/ui/");
    }

    #[actix_web::test]
    async fn other_paths_are_problem_404s_and_other_methods_405s() {
        for path in ["/ui/nothing.js", "/ui/index.html", "/ui/a/dashboard.js"] {
            let res = get(path).await;
            assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(header_of(&res, "content-type"), "application/problem+json");
            let body: serde_json::Value = serde_json::from_slice(&read_body(res).await).unwrap();
            assert_eq!(body["type"], "/problems/not-found");
            assert_eq!(body["instance"], path);
        }
        let app = init_service(App::new().configure(routes)).await;
        let res = call_service(&app, TestRequest::post().uri("/ui/").to_request()).await;
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header_of(&res, "allow"), "GET");
    }

    /// A file the page refers to but the server does not list would only fail in a browser.
    #[test]
    fn every_file_the_page_refers_to_is_served() {
        let served: Vec<&str> = FILES.iter().map(|file| file.name).collect();
        for file in FILES {
            for quote in ['"', '\''] {
                for marker in [
                    format!("from {quote}./"),
                    format!("src={quote}"),
                    format!("href={quote}"),
                ] {
                    for (at, _) in file.body.match_indices(marker.as_str()) {
                        let rest = &file.body[at + marker.len()..];
                        let end = rest.find(quote).unwrap_or(rest.len());
                        let referred = rest[..end].trim_start_matches("./");
                        if referred.starts_with("data:") || referred.starts_with('#') {
                            continue;
                        }
                        assert!(
                            served.contains(&referred),
                            "{} refers to {referred}, which is not served",
                            file.name
                        );
                    }
                }
            }
        }
    }
}
