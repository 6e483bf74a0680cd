//! Acquire: the lock, held answers, decoded resources, trimmed owners and the TTL bounds.

use lock_domain::AcquireOutcome;
use lock_http_actix::ApiSettings;
use serde_json::json;

use crate::support::*;

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
