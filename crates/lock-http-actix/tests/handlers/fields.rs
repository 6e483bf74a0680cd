//! 422: field values, every invalid one listed in order.

use actix_web::http::header;
use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use lock_domain::{AcquireOutcome, LeaseOp, MockLeaseStore, RenewResult};
use lock_http_actix::ApiSettings;
use serde_json::json;

use crate::support::*;

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
            with_owner(&format!("\"{}\"", "é".repeat(256))),
            "owner",
            "too_long",
        ),
        (with_owner(r#""a\u0000b""#), "owner", "control_character"),
        (with_owner(r#""a\nb""#), "owner", "control_character"),
        (r#"{"owner": "w"}"#.to_owned(), "ttl_seconds", "required"),
        (with_ttl("null"), "ttl_seconds", "required"),
        (with_ttl(r#""3600""#), "ttl_seconds", "invalid_type"),
        (with_ttl("60.5"), "ttl_seconds", "invalid_type"),
        (with_ttl("60.01"), "ttl_seconds", "invalid_type"),
        (with_ttl("true"), "ttl_seconds", "invalid_type"),
        (with_ttl("[60]"), "ttl_seconds", "invalid_type"),
        (with_ttl("1e-400"), "ttl_seconds", "invalid_type"),
        (with_ttl("1e400"), "ttl_seconds", "out_of_range"),
        (with_ttl("86401.0"), "ttl_seconds", "out_of_range"),
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
        ("5.01", "invalid_type"),
        ("null", "invalid_type"),
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
        let mut repo = MockLeaseStore::new();
        repo.expect_apply()
            .withf(|_, op| matches!(op, LeaseOp::Renew { .. }))
            .times(1)
            .returning(|_, _| Ok(RenewResult::Renewed(lock_of("x", "w")).into()));
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
async fn a_zero_wait_answers_at_once_as_before() {
    for wait in ["0", "0.0", "-0"] {
        let mut repo = MockLeaseStore::new();
        repo.expect_apply()
            .withf(|_, op| matches!(op, LeaseOp::Acquire { .. }))
            .times(1)
            .returning(|_, _| Ok(held()));
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

/// JSON Schema counts `237.0` as an integer, and so does the server: every integer-valued number
/// is that integer, on acquire and renew.
#[actix_web::test]
async fn integer_valued_numbers_are_integers() {
    for ttl in ["237.0", "2.37e2", "23700e-2"] {
        let repo = expect_acquire("x", "w", 237, AcquireOutcome::Held);
        let body = format!(r#"{{"owner": "w", "ttl_seconds": {ttl}, "wait_seconds": 0.0}}"#);
        assert_json_ok(&call(repo, post_json("/locks/x", body)).await);
        let repo = expect_renew("x", "w", 237, RenewResult::Renewed(lock_of("x", "w")));
        let body = format!(r#"{{"owner": "w", "ttl_seconds": {ttl}}}"#);
        assert_json_ok(&call(repo, post_json("/locks/x/renew", body)).await);
    }
}

/// The limits count characters, as JSON Schema's `maxLength` does: 255 four-byte characters are
/// a valid owner and a valid resource name.
#[actix_web::test]
async fn limits_count_characters_not_bytes() {
    let owner = "😀".repeat(255);
    let resource = "日".repeat(255);
    let repo = expect_acquire(&resource, &owner, 60, AcquireOutcome::Held);
    let body = format!(r#"{{"owner": "  {owner}  ", "ttl_seconds": 60}}"#);
    let segment = "%E6%97%A5".repeat(255);
    let answer = call(repo, post_json(&format!("/locks/{segment}"), body)).await;
    assert_json_ok(&answer);
}
