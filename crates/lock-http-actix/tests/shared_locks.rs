//! Shared locks over HTTP, on the in-memory store: readers coexist with their own tokens, a
//! writer is refused, `GET` shows every holder, a change of mode is a 409, a bad mode a 422,
//! renew and release by a reader work as in v1, and a listing shows every holder.

mod wired;

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use lock_domain::testing::InMemoryLockRepository;
use lock_domain::SystemClock;
use lock_http_actix::{ApiSettings, LockApi};
use lock_service::WaiterLimits;
use serde_json::{json, Value};

fn api() -> LockApi {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    wired::over(store, ApiSettings::default(), WaiterLimits::default())
}

fn acquire(owner: &str, body: Value) -> TestRequest {
    let mut body = body;
    body["owner"] = json!(owner);
    body["ttl_seconds"] = json!(60);
    TestRequest::post()
        .uri("/locks/report")
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_string())
}

macro_rules! send {
    ($app:expr, $req:expr) => {{
        let response = call_service(&$app, $req.to_request()).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let bytes = read_body(response).await;
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, content_type, body)
    }};
}

#[actix_web::test]
async fn readers_share_a_lock_and_everything_shows_them() {
    let app = init_service(App::new().configure(api().configure())).await;
    let (status, _, r1) = send!(app, acquire("r1", json!({"mode": "shared"})));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (r1["acquired"].clone(), r1["lock"]["mode"].clone()),
        (json!(true), json!("shared"))
    );
    let (_, _, r2) = send!(app, acquire("r2", json!({"mode": "shared"})));
    assert_eq!(r2["acquired"], true);
    assert!(r2["lock"]["fencing_token"].as_i64() > r1["lock"]["fencing_token"].as_i64());

    let (_, _, writer) = send!(app, acquire("w", json!({})));
    assert_eq!(writer, json!({"acquired": false, "resource": "report"}));

    let (status, _, hold) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(hold["mode"], "shared");
    assert_eq!(hold["resource"], "report");
    let owners: Vec<&str> = hold["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["owner"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["r1", "r2"]);
    assert_eq!(hold["holders"][0], r1["lock"]);

    let (status, _, list) = send!(app, TestRequest::get().uri("/locks"));
    assert_eq!(status, StatusCode::OK);
    let listed: Vec<(&str, &str)> = list["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["owner"].as_str().unwrap(), l["mode"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [("r1", "shared"), ("r2", "shared")]);

    let renew = TestRequest::post()
        .uri("/locks/report/renew")
        .insert_header(("content-type", "application/json"))
        .set_payload(json!({"owner": "r2", "ttl_seconds": 30}).to_string());
    let (status, _, renewed) = send!(app, renew);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (renewed["mode"].clone(), renewed["fencing_token"].clone()),
        (json!("shared"), r2["lock"]["fencing_token"].clone())
    );

    let (status, _, _) = send!(app, TestRequest::delete().uri("/locks/report?owner=w"));
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = send!(app, TestRequest::delete().uri("/locks/report?owner=r1"));
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, _) = send!(app, TestRequest::delete().uri("/locks/report?owner=r1"));
    assert_eq!(status, StatusCode::FORBIDDEN, "r2 still reads");
    let (status, _, _) = send!(app, TestRequest::delete().uri("/locks/report?owner=r2"));
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, _) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (_, _, writer) = send!(app, acquire("w", json!({"mode": "exclusive"})));
    assert_eq!(writer["lock"]["mode"], "exclusive");
    assert!(writer["lock"]["fencing_token"].as_i64() > r2["lock"]["fencing_token"].as_i64());
    let (_, _, hold) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(
        hold, writer["lock"],
        "an exclusive hold is the v1 lock object"
    );
}

#[actix_web::test]
async fn a_change_of_mode_is_a_conflict_and_changes_nothing() {
    let app = init_service(App::new().configure(api().configure())).await;
    let (_, _, reader) = send!(app, acquire("a", json!({"mode": "shared"})));
    for wait in [0, 1] {
        let (status, content_type, problem) = send!(
            app,
            acquire("a", json!({"mode": "exclusive", "wait_seconds": wait}))
        );
        assert_eq!(status, StatusCode::CONFLICT, "wait {wait}");
        assert_eq!(content_type, "application/problem+json");
        assert_eq!(problem["type"], "/problems/mode-mismatch");
    }
    let (_, _, hold) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(hold["holders"], json!([reader["lock"]]));
}

#[actix_web::test]
async fn a_mode_that_is_not_one_is_a_422_and_changes_nothing() {
    let app = init_service(App::new().configure(api().configure())).await;
    for (mode, code) in [
        (json!("read"), "invalid_value"),
        (json!("SHARED"), "invalid_value"),
        (json!(null), "invalid_type"),
        (json!(1), "invalid_type"),
        (json!({"mode": "shared"}), "invalid_type"),
    ] {
        let (status, _, problem) = send!(app, acquire("a", json!({"mode": mode})));
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{mode}");
        assert_eq!(problem["errors"][0]["field"], "mode");
        assert_eq!(problem["errors"][0]["code"], code, "{mode}");
    }
    let (status, _, _) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn a_value_rides_with_every_lease() {
    let app = init_service(App::new().configure(api().configure())).await;
    let (_, _, granted) = send!(
        app,
        acquire("leader", json!({"value": {"addr": "10.0.0.7:8443"}}))
    );
    assert_eq!(granted["lock"]["value"], json!({"addr": "10.0.0.7:8443"}));
    let (_, _, status) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(status["value"], json!({"addr": "10.0.0.7:8443"}));
    // A re-grant without a value keeps it; a renew with one replaces it, without one keeps it.
    let (_, _, again) = send!(app, acquire("leader", json!({})));
    assert_eq!(again["lock"]["value"], json!({"addr": "10.0.0.7:8443"}));
    let renew = |body: Value| {
        TestRequest::post()
            .uri("/locks/report/renew")
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_string())
    };
    let (_, _, renewed) = send!(
        app,
        renew(json!({"owner": "leader", "ttl_seconds": 30, "value": [1, 2]}))
    );
    assert_eq!(renewed["value"], json!([1, 2]));
    let (_, _, renewed) = send!(app, renew(json!({"owner": "leader", "ttl_seconds": 30})));
    assert_eq!(renewed["value"], json!([1, 2]));
    // Too large: 422 too_long, and nothing changes.
    let big = "x".repeat(4_095);
    let (status, _, problem) = send!(
        app,
        renew(json!({"owner": "leader", "ttl_seconds": 30, "value": big}))
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        (
            problem["errors"][0]["field"].clone(),
            problem["errors"][0]["code"].clone()
        ),
        (json!("value"), json!("too_long"))
    );
    let (_, _, status) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(status["value"], json!([1, 2]));
    // Another holder starts without one; readers have their own.
    send!(app, TestRequest::delete().uri("/locks/report?owner=leader"));
    let (_, _, reader) = send!(
        app,
        acquire("r1", json!({"mode": "shared", "value": "progress:0"}))
    );
    assert_eq!(reader["lock"]["value"], "progress:0");
    let (_, _, other) = send!(app, acquire("r2", json!({"mode": "shared"})));
    assert!(
        other["lock"].get("value").is_none(),
        "absent when never set: {other}"
    );
    let (_, _, hold) = send!(app, TestRequest::get().uri("/locks/report"));
    assert_eq!(hold["holders"][0]["value"], "progress:0");
    assert!(hold["holders"][1].get("value").is_none());
}
