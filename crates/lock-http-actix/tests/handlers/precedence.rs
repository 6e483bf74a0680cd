//! Precedence: routing > 415 > 413 > 400 > 422.

use actix_web::http::header;
use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;

use crate::support::*;

#[actix_web::test]
async fn the_most_fundamental_error_wins() {
    let oversized = padded_body(16_385);
    let mut oversized_invalid = b"{".to_vec();
    oversized_invalid.resize(16_385, b'x');
    let text = |method: Method, uri: &str, body: Vec<u8>| {
        TestRequest::default()
            .method(method)
            .uri(uri)
            .insert_header((header::CONTENT_TYPE, "text/plain"))
            .set_payload(body)
    };
    let cases: Vec<(TestRequest, &str, StatusCode, &str)> = vec![
        (
            text(Method::GET, "/nope", oversized.clone()),
            "/nope",
            StatusCode::NOT_FOUND,
            "not-found",
        ),
        (
            text(Method::POST, "/locks/a/b", oversized.clone()),
            "/locks/a/b",
            StatusCode::NOT_FOUND,
            "not-found",
        ),
        (
            text(Method::PUT, "/locks/%FF", oversized.clone()),
            "/locks/%FF",
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
        ),
        (
            text(Method::POST, "/locks/%FF", oversized.clone()),
            "/locks/%FF",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
        ),
        (
            text(Method::DELETE, "/locks/x", b"{".to_vec()),
            "/locks/x",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
        ),
        (
            post_json("/locks/%FF", oversized_invalid.clone()),
            "/locks/%FF",
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
        ),
        (
            json_request(Method::DELETE, "/locks/%FF", oversized_invalid),
            "/locks/%FF",
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
        ),
        (
            post_json("/locks/%FF/renew", "{"),
            "/locks/%FF/renew",
            StatusCode::BAD_REQUEST,
            "bad-request",
        ),
        (
            post_json("/locks/%00", r#"{"owner": 1, "owner": 2}"#),
            "/locks/%00",
            StatusCode::BAD_REQUEST,
            "bad-request",
        ),
        (
            post_json("/locks/%00", ""),
            "/locks/%00",
            StatusCode::BAD_REQUEST,
            "bad-request",
        ),
        (
            json_request(Method::DELETE, "/locks/%00?owner=a", "[]"),
            "/locks/%00",
            StatusCode::BAD_REQUEST,
            "bad-request",
        ),
    ];
    for (req, instance, status, slug) in cases {
        let answer = call(untouched_repo(), req).await;
        assert_problem(&answer, status, slug, instance);
    }
}
