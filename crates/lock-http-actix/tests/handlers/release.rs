//! Release: owner from the body or the query, and the 404/403/422 answers.

use actix_web::http::header;
use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use lock_domain::{FencingToken, ReleaseResult};

use crate::support::*;

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
        json_request(Method::DELETE, "/locks/r", "{}"),
        json_request(Method::DELETE, "/locks/r", r#"{"ttl_seconds": 60}"#),
        // A body names the owner, as its schema says: the query does not fill in for it.
        json_request(Method::DELETE, "/locks/r?owner=w", "{}"),
        json_request(Method::DELETE, "/locks/r?owner=w", r#"{"owner": null}"#),
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

#[actix_web::test]
async fn a_release_takes_no_query_parameter_but_its_owner() {
    // A reason belongs to a force-release: without force=true nothing is released, even for the
    // holder, so a caller never believes its reason was kept (or its misspelt parameter read).
    let cases: [(&str, &[(&str, &str)]); 6] = [
        ("/locks/r?owner=0&reason=", &[("reason", "unexpected")]),
        (
            "/locks/r?owner=w&reason=wedged",
            &[("reason", "unexpected")],
        ),
        (
            "/locks/r?reason=wedged&owner=w",
            &[("reason", "unexpected")],
        ),
        ("/locks/r?owner=w&ownr=w", &[("ownr", "unknown_parameter")]),
        (
            "/locks/r?other=w",
            &[("owner", "required"), ("other", "unknown_parameter")],
        ),
        (
            "/locks/r?owner=&reason=x&reason=y",
            &[("owner", "empty"), ("reason", "unexpected")],
        ),
    ];
    for (uri, errors) in cases {
        let answer = call(untouched_repo(), TestRequest::delete().uri(uri)).await;
        assert_invalid(&answer, "/locks/r", errors);
    }
    let answer = call(
        untouched_repo(),
        json_request(
            Method::DELETE,
            "/locks/r?reason=wedged",
            r#"{"owner": "w"}"#,
        ),
    )
    .await;
    assert_invalid(&answer, "/locks/r", &[("reason", "unexpected")]);
}

#[actix_web::test]
async fn a_semaphore_release_or_a_resign_with_a_reason_is_422_and_releases_nothing() {
    for (uri, instance) in [
        ("/semaphores/s?owner=0&reason=", "/semaphores/s"),
        (
            "/elections/e/leader?candidate=c&reason=x",
            "/elections/e/leader",
        ),
    ] {
        let answer = call(untouched_repo(), TestRequest::delete().uri(uri)).await;
        assert_invalid(&answer, instance, &[("reason", "unexpected")]);
    }
}
