//! Repository failures: 503 with Retry-After, 500 showing nothing internal.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::test::TestRequest;

use crate::support::*;

/// One request per repository operation, with the path it is made to.
fn one_request_per_operation() -> Vec<(TestRequest, &'static str)> {
    vec![
        (post_json("/locks/r", VALID_BODY), "/locks/r"),
        (TestRequest::get().uri("/locks/r"), "/locks/r"),
        (TestRequest::delete().uri("/locks/r?owner=w"), "/locks/r"),
        (post_json("/locks/r/renew", VALID_BODY), "/locks/r/renew"),
    ]
}

#[actix_web::test]
async fn an_unavailable_repository_is_503_with_retry_after() {
    for (req, instance) in one_request_per_operation() {
        let answer = call(failing_repo(Failure::Unavailable), req).await;
        assert_problem(
            &answer,
            StatusCode::SERVICE_UNAVAILABLE,
            "service-unavailable",
            instance,
        );
        assert!(
            answer.header(header::RETRY_AFTER).is_some(),
            "a 503 has Retry-After: {instance}"
        );
        assert!(!String::from_utf8_lossy(&answer.body).contains(SECRET));
    }
}

#[actix_web::test]
async fn an_internal_repository_error_is_500_and_shows_nothing_internal() {
    for (req, instance) in one_request_per_operation() {
        let answer = call(failing_repo(Failure::Internal), req).await;
        assert_problem(
            &answer,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            instance,
        );
        let body = String::from_utf8_lossy(&answer.body);
        assert!(!body.contains(SECRET), "the body leaks the cause: {body}");
        assert!(
            !body.contains("/var/lib"),
            "the body leaks the cause: {body}"
        );
    }
}
