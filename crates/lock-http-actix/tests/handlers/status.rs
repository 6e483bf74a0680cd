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

/// A lock whose last lease ran out less than its lock-delay ago: 404 with `available_at` and
/// `Retry-After`.
#[actix_web::test]
async fn status_in_a_lock_delay_is_404_with_available_at() {
    let mut repo = lock_domain::MockLeaseStore::new();
    let until = chrono::Utc::now() + chrono::TimeDelta::milliseconds(2_500);
    // One look tells both: no live lease, and a lock-delay until `until`.
    repo.expect_apply()
        .withf(|_, op| matches!(op, lock_domain::LeaseOp::Look(_)))
        .times(1)
        .returning(move |_, _| {
            Ok(lock_domain::LeaseOutcome::Looked(lock_domain::Holding {
                holders: vec![],
                delayed_until: Some(until),
            }))
        });
    let answer = call(repo, TestRequest::get().uri("/locks/delayed")).await;
    let body = assert_problem(
        &answer,
        StatusCode::NOT_FOUND,
        "not-found",
        "/locks/delayed",
    );
    assert_eq!(
        body["available_at"],
        until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    );
    let retry: u64 = answer
        .header(actix_web::http::header::RETRY_AFTER)
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((2..=3).contains(&retry), "{retry}");
}
