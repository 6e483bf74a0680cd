//! Handler tests of the HTTP layer: every route runs against a mocked repository port, and each
//! answer (status, headers, body) is held to the API contract.
//!
//! A test that must not reach the repository builds its app with [`untouched_repo`]: a mock
//! without expectations, so any call panics and fails the test. That is how "bad input changes
//! nothing" is proven.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, StatusCode};
use actix_web::test::{self, TestRequest};
use actix_web::web::Bytes;
use actix_web::App;
use chrono::{DateTime, Utc};
use futures::Stream;
use lock_domain::{
    AcquireOutcome, FencingToken, ListPage, Lock, MockLockRepository, Owner, PoolState,
    ReleaseResult, RenewResult, RepositoryError, ResourceName, Tenant,
};
use lock_http_actix::{configure, openapi_document, openapi_json, ApiSettings, MAX_BODY_BYTES};
use serde_json::{json, Value};

const ACQUIRED_AT: &str = "2026-11-29T21:32:27.120Z";
const EXPIRES_AT: &str = "2026-11-29T21:33:27.000Z";
const TOKEN: i64 = 17;
const VALID_BODY: &str = r#"{"owner": "worker-7", "ttl_seconds": 60}"#;

// ---------------------------------------------------------------------------------------------
// Calling the app
// ---------------------------------------------------------------------------------------------

/// What the app answered.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn answer<B: MessageBody>(response: ServiceResponse<B>) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let body = test::read_body(response).await;
    Answer {
        status,
        headers,
        body,
    }
}

/// Sends one request to a fresh app over `repo` with the default settings.
async fn call(repo: MockLockRepository, req: TestRequest) -> Answer {
    call_with(repo, ApiSettings::default(), req).await
}

/// Sends one request to a fresh app. The app (and the mock, whose expectations are checked when
/// it drops) is dropped before this returns.
async fn call_with(repo: MockLockRepository, settings: ApiSettings, req: TestRequest) -> Answer {
    let app = test::init_service(App::new().configure(configure(Arc::new(repo), settings))).await;
    answer(test::call_service(&app, req.to_request()).await).await
}

/// Sends `req` with its body streamed in `chunks`, chunked: no `Content-Length` announces the size.
async fn call_chunked(repo: MockLockRepository, req: TestRequest, chunks: Vec<Vec<u8>>) -> Answer {
    let app =
        test::init_service(App::new().configure(configure(Arc::new(repo), ApiSettings::default())))
            .await;
    let mut request = req.to_request();
    request.headers_mut().remove(header::CONTENT_LENGTH);
    request.headers_mut().insert(
        header::TRANSFER_ENCODING,
        header::HeaderValue::from_static("chunked"),
    );
    let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(
        futures::stream::iter(chunks.into_iter().map(|chunk| Ok(Bytes::from(chunk)))),
    );
    let (request, _) = request.replace_payload(Payload::from(stream));
    answer(test::call_service(&app, request).await).await
}

/// A JSON request (`Content-Type: application/json`) with `body`.
fn json_request(method: Method, uri: &str, body: impl Into<Bytes>) -> TestRequest {
    TestRequest::default()
        .method(method)
        .uri(uri)
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(body)
}

fn post_json(uri: &str, body: impl Into<Bytes>) -> TestRequest {
    json_request(Method::POST, uri, body)
}

/// The three routes that read a JSON body, with a body each accepts.
fn body_routes() -> [(Method, &'static str); 3] {
    [
        (Method::POST, "/locks/x"),
        (Method::POST, "/locks/x/renew"),
        (Method::DELETE, "/locks/x"),
    ]
}

/// `VALID_BODY` padded with spaces to exactly `len` bytes.
fn padded_body(len: usize) -> Vec<u8> {
    let mut body = VALID_BODY.as_bytes().to_vec();
    body.resize(len, b' ');
    body
}

// ---------------------------------------------------------------------------------------------
// Repositories
// ---------------------------------------------------------------------------------------------

/// A repository that must not be called: mockall panics on any call.
fn untouched_repo() -> MockLockRepository {
    MockLockRepository::new()
}

fn at(rfc3339: &str) -> DateTime<Utc> {
    rfc3339.parse().expect("a valid timestamp")
}

fn lock_of(resource: &str, owner: &str) -> Lock {
    Lock {
        resource: ResourceName::parse(resource).expect("a valid resource"),
        owner: Owner::parse(owner).expect("a valid owner"),
        acquired_at: at(ACQUIRED_AT),
        expires_at: at(EXPIRES_AT),
        fencing_token: FencingToken::new(TOKEN).expect("a positive token"),
    }
}

/// The LOCK object the API must serve for `lock_of(resource, owner)`: the millis `.120` keep
/// their trailing zero and whole seconds are written `.000`.
fn lock_json(resource: &str, owner: &str) -> Value {
    json!({
        "resource": resource,
        "owner": owner,
        "acquired_at": ACQUIRED_AT,
        "expires_at": EXPIRES_AT,
        "fencing_token": TOKEN,
    })
}

/// A repository expecting exactly one acquire with exactly these domain values.
fn expect_acquire(
    resource: &str,
    owner: &str,
    ttl: u32,
    outcome: AcquireOutcome,
) -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    repo.expect_acquire()
        .withf(move |tn, r, o, t| {
            *tn == Tenant::default_tenant()
                && r.as_str() == resource
                && o.as_str() == owner
                && t.seconds() == ttl
        })
        .times(1)
        .returning(move |_, _, _, _| Ok(outcome.clone()));
    repo
}

fn expect_status(resource: &str, found: Option<Lock>) -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    let resource = resource.to_owned();
    repo.expect_status()
        .withf(move |tn, r| *tn == Tenant::default_tenant() && r.as_str() == resource)
        .times(1)
        .returning(move |_, _| Ok(found.clone()));
    repo
}

fn expect_release(resource: &str, owner: &str, result: ReleaseResult) -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    repo.expect_release()
        .withf(move |tn, r, o| {
            *tn == Tenant::default_tenant() && r.as_str() == resource && o.as_str() == owner
        })
        .times(1)
        .returning(move |_, _, _| Ok(result));
    repo
}

fn expect_renew(resource: &str, owner: &str, ttl: u32, result: RenewResult) -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    repo.expect_renew()
        .withf(move |tn, r, o, t| {
            *tn == Tenant::default_tenant()
                && r.as_str() == resource
                && o.as_str() == owner
                && t.seconds() == ttl
        })
        .times(1)
        .returning(move |_, _, _, _| Ok(result.clone()));
    repo
}

/// A repository that answers every operation with success, however often it is called.
fn permissive_repo() -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    repo.expect_acquire()
        .returning(|_, r, o, _| Ok(AcquireOutcome::Granted(lock_of(r.as_str(), o.as_str()))));
    repo.expect_status()
        .returning(|_, r| Ok(Some(lock_of(r.as_str(), "worker-7"))));
    repo.expect_release()
        .returning(|_, _, _| Ok(ReleaseResult::Released(FencingToken::new(17).unwrap())));
    repo.expect_renew()
        .returning(|_, r, o, _| Ok(RenewResult::Renewed(lock_of(r.as_str(), o.as_str()))));
    repo.expect_ping().returning(|| Ok(()));
    repo.expect_list().returning(|_, _| Ok(ListPage::default()));
    repo.expect_pool_state()
        .returning(|| Some(PoolState { in_use: 1, idle: 3 }));
    repo
}

/// An error whose text must never reach a client.
#[derive(Debug)]
struct SecretError;

const SECRET: &str = "SQL secret /var/lib/x.db";

impl std::fmt::Display for SecretError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(SECRET)
    }
}

impl std::error::Error for SecretError {}

#[derive(Clone, Copy, Debug)]
enum Failure {
    Unavailable,
    Internal,
}

impl Failure {
    fn error(self) -> RepositoryError {
        match self {
            Failure::Unavailable => RepositoryError::unavailable(SecretError),
            Failure::Internal => RepositoryError::internal(SecretError),
        }
    }
}

/// A repository whose every operation fails with `failure`.
fn failing_repo(failure: Failure) -> MockLockRepository {
    let mut repo = MockLockRepository::new();
    repo.expect_acquire()
        .returning(move |_, _, _, _| Err(failure.error()));
    repo.expect_status()
        .returning(move |_, _| Err(failure.error()));
    repo.expect_release()
        .returning(move |_, _, _| Err(failure.error()));
    repo.expect_renew()
        .returning(move |_, _, _, _| Err(failure.error()));
    repo.expect_ping().returning(move || Err(failure.error()));
    repo
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

#[track_caller]
fn assert_json_ok(answer: &Answer) -> Value {
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "body: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let content_type = answer.header(header::CONTENT_TYPE).unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "content-type {content_type:?}"
    );
    answer.json()
}

/// Asserts `answer` is an RFC 9457 problem with `status`, the `slug` type and `instance`, and
/// returns its body.
#[track_caller]
fn assert_problem(answer: &Answer, status: StatusCode, slug: &str, instance: &str) -> Value {
    let text = String::from_utf8_lossy(&answer.body);
    assert_eq!(answer.status, status, "body: {text}");
    assert_eq!(
        answer.header(header::CONTENT_TYPE),
        Some("application/problem+json"),
        "body: {text}"
    );
    let body = answer.json();
    let kind = body["type"].as_str().unwrap_or_default();
    assert!(
        kind.ends_with(&format!("/{slug}")),
        "type {kind:?} should end in {slug:?}"
    );
    for member in ["title", "detail"] {
        assert!(
            body[member].as_str().is_some_and(|s| !s.is_empty()),
            "{member} should be a non-empty string: {text}"
        );
    }
    assert_eq!(body["status"], json!(status.as_u16()), "body: {text}");
    assert_eq!(body["instance"], json!(instance), "body: {text}");
    body
}

/// Asserts `answer` is a 422 listing exactly `expected` `(field, code)` pairs, in order.
#[track_caller]
fn assert_invalid(answer: &Answer, instance: &str, expected: &[(&str, &str)]) {
    let body = assert_problem(
        answer,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation-failed",
        instance,
    );
    let errors = body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("a 422 lists its errors: {body}"));
    let got: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| {
            assert!(
                e["message"].as_str().is_some_and(|m| !m.is_empty()),
                "every error has a message: {e}"
            );
            (
                e["field"].as_str().unwrap_or_default(),
                e["code"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(got, expected, "body: {body}");
}

// ---------------------------------------------------------------------------------------------
// Acquire
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn acquire_granted_answers_the_lock() {
    let repo = expect_acquire(
        "payment:42",
        "worker-7",
        60,
        AcquireOutcome::Granted(lock_of("payment:42", "worker-7")),
    );
    let answer = call(repo, post_json("/locks/payment:42", VALID_BODY)).await;
    assert_eq!(
        assert_json_ok(&answer),
        json!({"acquired": true, "lock": lock_json("payment:42", "worker-7")})
    );
}

#[actix_web::test]
async fn acquire_held_answers_not_acquired_without_a_lock() {
    let repo = expect_acquire("payment:42", "worker-7", 60, AcquireOutcome::Held);
    let answer = call(repo, post_json("/locks/payment:42", VALID_BODY)).await;
    let body = assert_json_ok(&answer);
    assert_eq!(body, json!({"acquired": false, "resource": "payment:42"}));
    assert!(body.get("lock").is_none());
}

#[actix_web::test]
async fn acquire_passes_the_decoded_resource_and_trimmed_owner() {
    let long_owner = "o".repeat(255);
    let padded_long_owner = format!(r#"{{"owner": "  {long_owner} ", "ttl_seconds": 60}}"#);
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        // (path segment, body, resource the repository sees, owner the repository sees)
        ("a%2Fb", VALID_BODY, "a/b", "worker-7"),
        ("a+b", VALID_BODY, "a+b", "worker-7"),
        (
            "x'%3B%20DROP%20TABLE%20distributed_locks%3B%20--",
            VALID_BODY,
            "x'; DROP TABLE distributed_locks; --",
            "worker-7",
        ),
        ("r", r#"{"owner": "  w  ", "ttl_seconds": 60}"#, "r", "w"),
        ("r", &padded_long_owner, "r", &long_owner),
        (
            "r",
            r#"{"owner": "w", "ttl_seconds": 60, "extra": [1e400, {"owner": 1}], "note": null}"#,
            "r",
            "w",
        ),
    ];
    for (segment, body, resource, owner) in cases {
        let repo = expect_acquire(
            resource,
            owner,
            60,
            AcquireOutcome::Granted(lock_of(resource, owner)),
        );
        let answer = call(
            repo,
            post_json(&format!("/locks/{segment}"), body.to_owned()),
        )
        .await;
        assert_eq!(
            assert_json_ok(&answer),
            json!({"acquired": true, "lock": lock_json(resource, owner)}),
            "{segment} {body}"
        );
    }
}

#[actix_web::test]
async fn acquire_accepts_the_ttl_bounds() {
    for ttl in [1, 86_400] {
        let repo = expect_acquire("r", "w", ttl, AcquireOutcome::Held);
        let body = format!(r#"{{"owner": "w", "ttl_seconds": {ttl}}}"#);
        let answer = call(repo, post_json("/locks/r", body)).await;
        assert_json_ok(&answer);
    }
}

#[actix_web::test]
async fn the_max_ttl_setting_bounds_ttl_seconds() {
    let settings = ApiSettings {
        max_ttl_seconds: 60,
        ..ApiSettings::default()
    };
    let repo = expect_acquire("r", "w", 60, AcquireOutcome::Held);
    let answer = call_with(
        repo,
        settings.clone(),
        post_json("/locks/r", r#"{"owner": "w", "ttl_seconds": 60}"#),
    )
    .await;
    assert_json_ok(&answer);

    for uri in ["/locks/r", "/locks/r/renew"] {
        let answer = call_with(
            untouched_repo(),
            settings.clone(),
            post_json(uri, r#"{"owner": "w", "ttl_seconds": 61}"#),
        )
        .await;
        assert_invalid(&answer, uri, &[("ttl_seconds", "out_of_range")]);
    }
}

// ---------------------------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn status_answers_the_live_lock() {
    let repo = expect_status("a/b", Some(lock_of("a/b", "worker-7")));
    let answer = call(repo, TestRequest::get().uri("/locks/a%2Fb")).await;
    assert_eq!(assert_json_ok(&answer), lock_json("a/b", "worker-7"));
}

#[actix_web::test]
async fn status_without_a_live_lock_is_404() {
    let repo = expect_status("a/b", None);
    let answer = call(repo, TestRequest::get().uri("/locks/a%2Fb")).await;
    assert_problem(&answer, StatusCode::NOT_FOUND, "not-found", "/locks/a%2Fb");
}

// ---------------------------------------------------------------------------------------------
// Release
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn release_with_a_body_owner_is_204_with_no_body() {
    let repo = expect_release(
        "r",
        "worker-7",
        ReleaseResult::Released(FencingToken::new(17).unwrap()),
    );
    let answer = call(
        repo,
        json_request(Method::DELETE, "/locks/r", r#"{"owner": " worker-7 "}"#),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert!(answer.body.is_empty(), "{:?}", answer.body);
}

#[actix_web::test]
async fn release_takes_the_form_decoded_query_owner_when_there_is_no_body() {
    let cases = [
        ("worker-7", "worker-7"),
        ("worker+7", "worker 7"),
        ("w%C3%A9%2B1", "wé+1"),
        ("%20%20w%20", "w"),
    ];
    for (query, owner) in cases {
        let repo = expect_release(
            "r",
            owner,
            ReleaseResult::Released(FencingToken::new(17).unwrap()),
        );
        let uri = format!("/locks/r?owner={query}");
        let answer = call(repo, TestRequest::delete().uri(&uri)).await;
        assert_eq!(answer.status, StatusCode::NO_CONTENT, "{uri}");
        assert!(answer.body.is_empty(), "{uri}");
    }
}

#[actix_web::test]
async fn release_with_an_empty_body_and_a_query_owner_works() {
    let repo = expect_release(
        "r",
        "w",
        ReleaseResult::Released(FencingToken::new(17).unwrap()),
    );
    let req = TestRequest::delete()
        .uri("/locks/r?owner=w")
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload("");
    let answer = call(repo, req).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
}

#[actix_web::test]
async fn release_outcomes_map_to_404_and_403() {
    let cases = [
        (ReleaseResult::NotFound, StatusCode::NOT_FOUND, "not-found"),
        (ReleaseResult::Forbidden, StatusCode::FORBIDDEN, "forbidden"),
    ];
    for (result, status, slug) in cases {
        let repo = expect_release("r", "w", result);
        let answer = call(
            repo,
            json_request(Method::DELETE, "/locks/r", r#"{"owner": "w"}"#),
        )
        .await;
        assert_problem(&answer, status, slug, "/locks/r");
    }
}

#[actix_web::test]
async fn release_without_any_owner_is_422_required() {
    let requests = [
        TestRequest::delete().uri("/locks/r"),
        TestRequest::delete().uri("/locks/r?other=w"),
        json_request(Method::DELETE, "/locks/r", "{}"),
        json_request(Method::DELETE, "/locks/r", r#"{"ttl_seconds": 60}"#),
    ];
    for req in requests {
        let answer = call(untouched_repo(), req).await;
        assert_invalid(&answer, "/locks/r", &[("owner", "required")]);
    }
}

#[actix_web::test]
async fn release_with_disagreeing_owners_is_422_conflict() {
    let answer = call(
        untouched_repo(),
        json_request(Method::DELETE, "/locks/r?owner=b", r#"{"owner": "a"}"#),
    )
    .await;
    assert_invalid(&answer, "/locks/r", &[("owner", "conflict")]);
}

#[actix_web::test]
async fn release_with_agreeing_owners_is_released() {
    let repo = expect_release(
        "r",
        "w",
        ReleaseResult::Released(FencingToken::new(17).unwrap()),
    );
    let answer = call(
        repo,
        json_request(Method::DELETE, "/locks/r?owner=w", r#"{"owner": "w"}"#),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
}

#[actix_web::test]
async fn release_validates_the_query_owner() {
    let cases = [
        ("", "empty"),
        ("+%20", "empty"),
        ("a%00b", "control_character"),
    ];
    for (query, code) in cases {
        let uri = format!("/locks/r?owner={query}");
        let answer = call(untouched_repo(), TestRequest::delete().uri(&uri)).await;
        assert_invalid(&answer, "/locks/r", &[("owner", code)]);
    }
}

// ---------------------------------------------------------------------------------------------
// Renew
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn renew_answers_the_renewed_lock() {
    let repo = expect_renew("a/b", "w", 30, RenewResult::Renewed(lock_of("a/b", "w")));
    let answer = call(
        repo,
        post_json(
            "/locks/a%2Fb/renew",
            r#"{"owner": " w ", "ttl_seconds": 30}"#,
        ),
    )
    .await;
    assert_eq!(assert_json_ok(&answer), lock_json("a/b", "w"));
}

#[actix_web::test]
async fn renew_outcomes_map_to_404_and_403() {
    let cases = [
        (RenewResult::NotFound, StatusCode::NOT_FOUND, "not-found"),
        (RenewResult::Forbidden, StatusCode::FORBIDDEN, "forbidden"),
    ];
    for (result, status, slug) in cases {
        let repo = expect_renew("r", "worker-7", 60, result);
        let answer = call(repo, post_json("/locks/r/renew", VALID_BODY)).await;
        assert_problem(&answer, status, slug, "/locks/r/renew");
    }
}

// ---------------------------------------------------------------------------------------------
// 400: bodies that are not one JSON object
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 404 and 405: routing
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_routes_are_404() {
    let requests = [
        (Method::GET, "/nope"),
        (Method::GET, "/locks/"),
        (Method::GET, "/locks/a/b"),
        (Method::GET, "/no%20pe"),
        (Method::POST, "/locks/a/b"),
        (Method::POST, "/locks/a/b/renew"),
        (Method::DELETE, "/"),
    ];
    for (method, uri) in requests {
        let answer = call(
            untouched_repo(),
            TestRequest::default().method(method).uri(uri),
        )
        .await;
        assert_problem(&answer, StatusCode::NOT_FOUND, "not-found", uri);
    }
}

#[actix_web::test]
async fn wrong_methods_are_405_with_allow() {
    let cases = [
        (Method::PUT, "/locks/x", &["DELETE", "GET", "POST"][..]),
        (Method::PATCH, "/locks/x", &["DELETE", "GET", "POST"]),
        (Method::GET, "/locks/x/renew", &["POST"]),
        (Method::DELETE, "/locks/x/renew", &["POST"]),
        (Method::POST, "/healthz", &["GET"]),
        (Method::POST, "/readyz", &["GET"]),
        (Method::DELETE, "/openapi.json", &["GET"]),
    ];
    for (method, uri, allowed) in cases {
        let answer = call(
            untouched_repo(),
            TestRequest::default().method(method).uri(uri),
        )
        .await;
        assert_problem(
            &answer,
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            uri,
        );
        let allow: BTreeSet<&str> = answer
            .header(header::ALLOW)
            .unwrap_or_else(|| panic!("a 405 has an Allow header: {uri}"))
            .split(',')
            .map(str::trim)
            .collect();
        assert_eq!(allow, allowed.iter().copied().collect(), "{uri}");
    }
}

// ---------------------------------------------------------------------------------------------
// 413: body size
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 415: media type
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// 422: field values
// ---------------------------------------------------------------------------------------------

/// Bodies with exactly one invalid field, and the code it must get.
fn invalid_field_cases() -> Vec<(String, &'static str, &'static str)> {
    let with_ttl = |ttl: &str| format!(r#"{{"owner": "w", "ttl_seconds": {ttl}}}"#);
    let with_owner = |owner: &str| format!(r#"{{"owner": {owner}, "ttl_seconds": 60}}"#);
    vec![
        (r#"{"ttl_seconds": 60}"#.to_owned(), "owner", "required"),
        (with_owner("7"), "owner", "invalid_type"),
        (with_owner("true"), "owner", "invalid_type"),
        (with_owner(r#"["w"]"#), "owner", "invalid_type"),
        (with_owner(r#"{"name": "w"}"#), "owner", "invalid_type"),
        (with_owner(r#""""#), "owner", "empty"),
        (with_owner(r#""   ""#), "owner", "empty"),
        (with_owner(r#"" \t\n ""#), "owner", "empty"),
        (
            with_owner(&format!("\"{}\"", "o".repeat(256))),
            "owner",
            "too_long",
        ),
        (
            with_owner(&format!("\"{}\"", "é".repeat(128))),
            "owner",
            "too_long",
        ),
        (with_owner(r#""a\u0000b""#), "owner", "control_character"),
        (with_owner(r#""a\nb""#), "owner", "control_character"),
        (r#"{"owner": "w"}"#.to_owned(), "ttl_seconds", "required"),
        (with_ttl("null"), "ttl_seconds", "required"),
        (with_ttl(r#""3600""#), "ttl_seconds", "invalid_type"),
        (with_ttl("60.5"), "ttl_seconds", "invalid_type"),
        (with_ttl("60.0"), "ttl_seconds", "invalid_type"),
        (with_ttl("true"), "ttl_seconds", "invalid_type"),
        (with_ttl("[60]"), "ttl_seconds", "invalid_type"),
        (with_ttl("1e400"), "ttl_seconds", "invalid_type"),
        (with_ttl("0"), "ttl_seconds", "out_of_range"),
        (with_ttl("-1"), "ttl_seconds", "out_of_range"),
        (with_ttl("86401"), "ttl_seconds", "out_of_range"),
        (
            with_ttl("9223372036854775808"),
            "ttl_seconds",
            "out_of_range",
        ),
    ]
}

#[actix_web::test]
async fn invalid_owner_or_ttl_is_422_on_acquire_and_renew() {
    for uri in ["/locks/x", "/locks/x/renew"] {
        for (body, field, code) in invalid_field_cases() {
            let answer = call(untouched_repo(), post_json(uri, body.clone())).await;
            assert_invalid(&answer, uri, &[(field, code)]);
        }
    }
}

#[actix_web::test]
async fn invalid_body_owner_is_422_on_release() {
    let cases = [
        (r#"{"owner": 7}"#, "invalid_type"),
        (r#"{"owner": "  "}"#, "empty"),
        (r#"{"owner": "a\u0000b"}"#, "control_character"),
    ];
    for (body, code) in cases {
        let answer = call(
            untouched_repo(),
            json_request(Method::DELETE, "/locks/x", body),
        )
        .await;
        assert_invalid(&answer, "/locks/x", &[("owner", code)]);
    }
}

#[actix_web::test]
async fn invalid_resources_are_422_on_every_lock_route() {
    let long = "r".repeat(256);
    let segments = [
        (long.as_str(), "too_long"),
        ("a%00b", "control_character"),
        ("%0A", "control_character"),
        ("%FF", "invalid_utf8"),
        ("a%C3", "invalid_utf8"),
    ];
    for (segment, code) in segments {
        let requests = [
            (
                format!("/locks/{segment}"),
                TestRequest::get().uri(&format!("/locks/{segment}")),
            ),
            (
                format!("/locks/{segment}"),
                post_json(&format!("/locks/{segment}"), VALID_BODY),
            ),
            (
                format!("/locks/{segment}"),
                TestRequest::delete().uri(&format!("/locks/{segment}?owner=w")),
            ),
            (
                format!("/locks/{segment}/renew"),
                post_json(&format!("/locks/{segment}/renew"), VALID_BODY),
            ),
        ];
        for (instance, req) in requests {
            let answer = call(untouched_repo(), req).await;
            assert_invalid(&answer, &instance, &[("resource", code)]);
        }
    }
}

#[actix_web::test]
async fn a_resource_of_255_bytes_is_accepted() {
    let name = "r".repeat(255);
    let repo = expect_status(&name, None);
    let answer = call(repo, TestRequest::get().uri(&format!("/locks/{name}"))).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn every_invalid_field_is_listed_in_order() {
    let body = r#"{"ttl_seconds": 0, "owner": ""}"#;
    for (uri, instance) in [
        ("/locks/a%00", "/locks/a%00"),
        ("/locks/a%00/renew", "/locks/a%00/renew"),
    ] {
        let answer = call(untouched_repo(), post_json(uri, body)).await;
        assert_invalid(
            &answer,
            instance,
            &[
                ("resource", "control_character"),
                ("owner", "empty"),
                ("ttl_seconds", "out_of_range"),
            ],
        );
    }
    let answer = call(
        untouched_repo(),
        json_request(Method::DELETE, "/locks/%FF", r#"{"owner": 1}"#),
    )
    .await;
    assert_invalid(
        &answer,
        "/locks/%FF",
        &[("resource", "invalid_utf8"), ("owner", "invalid_type")],
    );
}

#[actix_web::test]
async fn invalid_wait_seconds_is_422_on_acquire_and_ignored_on_renew() {
    let with_wait =
        |wait: &str| format!(r#"{{"owner": "w", "ttl_seconds": 60, "wait_seconds": {wait}}}"#);
    let cases = [
        ("1.5", "invalid_type"),
        ("5.0", "invalid_type"),
        ("1e1", "invalid_type"),
        (r#""5""#, "invalid_type"),
        ("true", "invalid_type"),
        ("[5]", "invalid_type"),
        ("{}", "invalid_type"),
        ("-1", "out_of_range"),
        ("61", "out_of_range"),
        ("9223372036854775808", "out_of_range"),
    ];
    for (wait, code) in cases {
        let answer = call(untouched_repo(), post_json("/locks/x", with_wait(wait))).await;
        assert_invalid(&answer, "/locks/x", &[("wait_seconds", code)]);
        // A renew does not wait: the field is unknown there, and ignored.
        let mut repo = MockLockRepository::new();
        repo.expect_renew()
            .times(1)
            .returning(|_, _, _, _| Ok(RenewResult::Renewed(lock_of("x", "w"))));
        let answer = call(repo, post_json("/locks/x/renew", with_wait(wait))).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "renew with wait_seconds {wait}"
        );
    }
    // Every invalid field is listed, the wait last.
    let answer = call(
        untouched_repo(),
        post_json(
            "/locks/x",
            r#"{"owner": "", "ttl_seconds": 0, "wait_seconds": 1.5}"#,
        ),
    )
    .await;
    assert_invalid(
        &answer,
        "/locks/x",
        &[
            ("owner", "empty"),
            ("ttl_seconds", "out_of_range"),
            ("wait_seconds", "invalid_type"),
        ],
    );
    // The bound follows the setting; 0 turns waiting off.
    let settings = ApiSettings {
        max_wait_seconds: 0,
        ..ApiSettings::default()
    };
    let answer = call_with(
        untouched_repo(),
        settings,
        post_json("/locks/x", with_wait("1")),
    )
    .await;
    assert_invalid(&answer, "/locks/x", &[("wait_seconds", "out_of_range")]);
}

#[actix_web::test]
async fn a_zero_or_null_wait_answers_at_once_as_before() {
    for wait in ["0", "null"] {
        let mut repo = MockLockRepository::new();
        repo.expect_acquire()
            .times(1)
            .returning(|_, _, _, _| Ok(AcquireOutcome::Held));
        let body = format!(r#"{{"owner": "w", "ttl_seconds": 60, "wait_seconds": {wait}}}"#);
        let answer = call(repo, post_json("/locks/x", body)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.json(), json!({"acquired": false, "resource": "x"}));
        assert_eq!(
            answer.header(header::RETRY_AFTER),
            None,
            "as without a wait"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Precedence: routing > 415 > 413 > 400 > 422
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Repository failures
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Operations routes
// ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn healthz_is_200_json() {
    let answer = call(untouched_repo(), TestRequest::get().uri("/healthz")).await;
    assert_eq!(assert_json_ok(&answer), json!({"status": "ok"}));
}

#[actix_web::test]
async fn readyz_is_200_when_the_repository_answers() {
    let mut repo = MockLockRepository::new();
    repo.expect_ping().times(1).returning(|| Ok(()));
    let answer = call(repo, TestRequest::get().uri("/readyz")).await;
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

// ---------------------------------------------------------------------------------------------
// The OpenAPI document
// ---------------------------------------------------------------------------------------------

#[test]
fn the_committed_openapi_document_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/openapi.json");
    let committed = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {path} ({e}): run `make openapi`"));
    assert!(
        committed == openapi_json(),
        "openapi/openapi.json differs from the API's document: run `make openapi` and commit it"
    );
}

#[actix_web::test]
async fn every_documented_operation_is_routed() {
    let document = serde_json::to_value(openapi_document()).expect("the document serializes");
    let paths = document["paths"]
        .as_object()
        .expect("the document has paths");
    let mut operations = 0;
    for (path, item) in paths {
        let uri = path.replace("{resource}", "payment:42");
        let item = item.as_object().expect("a path item is an object");
        for (method, operation) in item {
            let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                continue; // not an operation (e.g. `parameters`)
            };
            operations += 1;
            let req = if operation.get("requestBody").is_some() {
                json_request(method.clone(), &uri, VALID_BODY)
            } else {
                TestRequest::default().method(method.clone()).uri(&uri)
            };
            let answer = call(permissive_repo(), req).await;
            assert!(
                answer.status.is_success(),
                "{method} {path} answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
            let documented = operation["responses"]
                .as_object()
                .is_some_and(|r| r.contains_key(answer.status.as_str()));
            assert!(
                documented,
                "{method} {path} answered {}, which it does not document",
                answer.status
            );
        }
    }
    assert_eq!(
        operations, 9,
        "list, acquire, status, release, renew and four operations routes"
    );
}
