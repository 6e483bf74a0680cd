//! Status: the live lock or 404.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;

use crate::support::*;

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
