//! Renew: the renewed lock, and 404/403.

use actix_web::http::StatusCode;
use lock_domain::RenewResult;

use crate::support::*;

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
