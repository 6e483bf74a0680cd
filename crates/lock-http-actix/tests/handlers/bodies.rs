//! Request bodies: 400 (not one JSON object), 413 (size) and 415 (media type).

use actix_web::http::header;
use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use actix_web::web::Bytes;
use lock_domain::{AcquireOutcome, FencingToken, ReleaseResult};
use lock_http_actix::MAX_BODY_BYTES;

use crate::support::*;

#[actix_web::test]
async fn bodies_that_are_not_a_json_object_are_400() {
    let bodies: Vec<&[u8]> = vec![
        b"{",
        b"{\"owner\": }",
        b"not json",
        b"[]",
        b"[\"w\", 60]",
        b"\"w\"",
        b"42",
        b"null",
        b"{\"owner\": \"w\", \"ttl_seconds\": 60} x",
        b"{\"owner\": \"w\", \"ttl_seconds\": 60}{}",
        b"{\"owner\": \"a\", \"owner\": \"b\", \"ttl_seconds\": 60}",
        b"{\"owner\": \"w\", \"ttl_seconds\": 60, \"ttl_seconds\": 60}",
        b"{\"owner\": \"\xff\", \"ttl_seconds\": 60}",
        b"\xff\xfe",
    ];
    for (method, uri) in body_routes() {
        for body in &bodies {
            let answer = call(untouched_repo(), json_request(method.clone(), uri, *body)).await;
            assert_problem(&answer, StatusCode::BAD_REQUEST, "bad-request", uri);
        }
    }
}

#[actix_web::test]
async fn empty_and_whitespace_bodies_are_400_on_acquire_and_renew() {
    for uri in ["/locks/x", "/locks/x/renew"] {
        for body in ["", " ", "\n\t \r\n"] {
            let answer = call(untouched_repo(), post_json(uri, body)).await;
            assert_problem(&answer, StatusCode::BAD_REQUEST, "bad-request", uri);
        }
    }
}

#[actix_web::test]
async fn non_utf8_bytes_anywhere_in_the_body_are_400() {
    let body = b"{\"owner\": \"w\", \"ttl_seconds\": 60, \"note\": \"\xff\"}";
    for (method, uri) in body_routes() {
        let answer = call(untouched_repo(), json_request(method, uri, &body[..])).await;
        assert_problem(&answer, StatusCode::BAD_REQUEST, "bad-request", uri);
    }
}

#[actix_web::test]
async fn bodies_over_16_kib_are_413() {
    assert_eq!(MAX_BODY_BYTES, 16_384);
    for (method, uri) in body_routes() {
        let answer = call(
            untouched_repo(),
            json_request(method, uri, padded_body(16_385)),
        )
        .await;
        assert_problem(
            &answer,
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
            uri,
        );
    }
}

#[actix_web::test]
async fn a_body_of_exactly_16_kib_is_read() {
    let repo = expect_acquire("x", "worker-7", 60, AcquireOutcome::Held);
    let answer = call(repo, post_json("/locks/x", padded_body(16_384))).await;
    assert_json_ok(&answer);
}

#[actix_web::test]
async fn chunked_bodies_over_16_kib_are_413() {
    for (method, uri) in body_routes() {
        let body = padded_body(16_385);
        let chunks = body.chunks(4_000).map(<[u8]>::to_vec).collect();
        let req = json_request(method, uri, Bytes::new());
        let answer = call_chunked(untouched_repo(), req, chunks).await;
        assert_problem(
            &answer,
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
            uri,
        );
    }
}

#[actix_web::test]
async fn a_chunked_body_of_exactly_16_kib_is_read() {
    let repo = expect_acquire("x", "worker-7", 60, AcquireOutcome::Held);
    let body = padded_body(16_384);
    let chunks = body.chunks(4_000).map(<[u8]>::to_vec).collect();
    let answer = call_chunked(
        repo,
        json_request(Method::POST, "/locks/x", Bytes::new()),
        chunks,
    )
    .await;
    assert_json_ok(&answer);
}

#[actix_web::test]
async fn bodies_that_are_not_json_are_415() {
    for (method, uri) in body_routes() {
        for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
            let req = TestRequest::default()
                .method(method.clone())
                .uri(uri)
                .insert_header((header::CONTENT_TYPE, content_type))
                .set_payload(VALID_BODY);
            let answer = call(untouched_repo(), req).await;
            assert_problem(
                &answer,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                uri,
            );
        }
    }
}

#[actix_web::test]
async fn json_with_a_charset_is_accepted() {
    let repo = expect_acquire("x", "worker-7", 60, AcquireOutcome::Held);
    let req = TestRequest::post()
        .uri("/locks/x")
        .insert_header((header::CONTENT_TYPE, "application/json; charset=utf-8"))
        .set_payload(VALID_BODY);
    assert_json_ok(&call(repo, req).await);
}

#[actix_web::test]
async fn a_body_without_content_type_is_read_as_json() {
    let repo = expect_acquire("x", "worker-7", 60, AcquireOutcome::Held);
    let req = TestRequest::post().uri("/locks/x").set_payload(VALID_BODY);
    assert_json_ok(&call(repo, req).await);

    let repo = expect_release(
        "x",
        "w",
        ReleaseResult::Released(FencingToken::new(17).unwrap()),
    );
    let req = TestRequest::delete()
        .uri("/locks/x")
        .set_payload(r#"{"owner": "w"}"#);
    assert_eq!(call(repo, req).await.status, StatusCode::NO_CONTENT);
}
