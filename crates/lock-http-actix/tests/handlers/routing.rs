//! 404 and 405: routing.

use actix_web::http::header;
use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use std::collections::BTreeSet;

use crate::support::*;

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
