//! Operations routes: healthz, readyz, the document and Swagger UI.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use lock_domain::{MockLeaseStore, MockStoreHealth};
use lock_http_actix::openapi_json;
use serde_json::json;

use crate::support::*;

#[actix_web::test]
async fn healthz_is_200_json() {
    let answer = call(untouched_repo(), TestRequest::get().uri("/healthz")).await;
    assert_eq!(assert_json_ok(&answer), json!({"status": "ok"}));
}

#[actix_web::test]
async fn readyz_is_200_when_the_repository_answers() {
    let mut health = MockStoreHealth::new();
    health.expect_ping().times(1).returning(|| Ok(()));
    let store = Mocks {
        leases: MockLeaseStore::new(),
        sessions: lock_domain::MockSessionStore::new(),
        history: lock_domain::MockHistoryRepository::new(),
        health,
    };
    let answer = call(store, TestRequest::get().uri("/readyz")).await;
    assert!(assert_json_ok(&answer).is_object());
}

#[actix_web::test]
async fn readyz_is_503_when_the_repository_fails() {
    for failure in [Failure::Unavailable, Failure::Internal] {
        let answer = call(failing_repo(failure), TestRequest::get().uri("/readyz")).await;
        assert_problem(
            &answer,
            StatusCode::SERVICE_UNAVAILABLE,
            "service-unavailable",
            "/readyz",
        );
        assert!(answer.header(header::RETRY_AFTER).is_some(), "{failure:?}");
        assert!(!String::from_utf8_lossy(&answer.body).contains(SECRET));
    }
}

#[actix_web::test]
async fn openapi_json_serves_the_document() {
    let answer = call(untouched_repo(), TestRequest::get().uri("/openapi.json")).await;
    assert_json_ok(&answer);
    assert_eq!(String::from_utf8_lossy(&answer.body), openapi_json());
}

#[actix_web::test]
async fn swagger_ui_serves_html() {
    let answer = call(untouched_repo(), TestRequest::get().uri("/swagger-ui/")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let content_type = answer.header(header::CONTENT_TYPE).unwrap_or_default();
    assert!(
        content_type.starts_with("text/html"),
        "content-type {content_type:?}"
    );
}

#[actix_web::test]
async fn a_missing_swagger_ui_file_is_a_404_problem() {
    let uri = "/swagger-ui/nope.js";
    let answer = call(untouched_repo(), TestRequest::get().uri(uri)).await;
    assert_problem(&answer, StatusCode::NOT_FOUND, "not-found", uri);
}
