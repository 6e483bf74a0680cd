//! `POST /locks` and `DELETE /locks` over HTTP, on the in-memory store: a set granted whole or
//! not at all, a wait for all of them together, bad sets refused with 422, release of many.

mod wired;

use std::sync::Arc;
use std::time::Duration;

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

fn post(uri: &str, body: Value) -> TestRequest {
    TestRequest::post()
        .uri(uri)
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_string())
}

fn delete_many(body: Value) -> TestRequest {
    TestRequest::delete()
        .uri("/locks")
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_string())
}

macro_rules! send {
    ($app:expr, $req:expr) => {{
        let response = call_service(&$app, $req.to_request()).await;
        let status = response.status();
        let retry_after = response.headers().get("retry-after").is_some();
        let bytes = read_body(response).await;
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, body, retry_after)
    }};
}

fn set(owner: &str, locks: Value) -> Value {
    json!({"owner": owner, "ttl_seconds": 60, "locks": locks})
}

#[actix_web::test]
async fn a_set_is_granted_whole_or_not_at_all() {
    let app = init_service(App::new().configure(api().configure())).await;
    send!(
        app,
        post(
            "/locks/account:2",
            json!({"owner": "other", "ttl_seconds": 60})
        )
    );
    let locks = json!([{"resource": "account:1"}, {"resource": "account:2"}, {"resource": "rates", "mode": "shared"}]);
    let (status, refused, _) = send!(app, post("/locks", set("t", locks.clone())));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        refused,
        json!({"acquired": false, "unavailable": ["account:2"]})
    );
    let (status, _, _) = send!(app, TestRequest::get().uri("/locks/account:1"));
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was granted");

    send!(
        app,
        TestRequest::delete().uri("/locks/account:2?owner=other")
    );
    let (_, granted, _) = send!(app, post("/locks", set("t", locks)));
    assert_eq!(granted["acquired"], true);
    let got: Vec<(&str, &str)> = granted["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["resource"].as_str().unwrap(), l["mode"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("account:1", "exclusive"),
            ("account:2", "exclusive"),
            ("rates", "shared")
        ]
    );
    let (_, one, _) = send!(app, TestRequest::get().uri("/locks/account:1"));
    assert_eq!(one, granted["locks"][0]);

    let (status, released, _) = send!(
        app,
        delete_many(json!({"owner": "t", "resources": ["rates", "account:1", "nope"]}))
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(released["results"][0]["result"], "released");
    assert_eq!(released["results"][1]["result"], "released");
    assert_eq!(
        released["results"][1]["fencing_token"],
        granted["locks"][0]["fencing_token"]
    );
    assert_eq!(
        released["results"][2],
        json!({"resource": "nope", "result": "not_found"})
    );
    let (_, forbidden, _) = send!(
        app,
        delete_many(json!({"owner": "intruder", "resources": ["account:2"]}))
    );
    assert_eq!(forbidden["results"][0]["result"], "forbidden");
}

#[actix_web::test]
async fn a_waiting_set_is_granted_when_all_are_free_together() {
    let app = init_service(App::new().configure(api().configure())).await;
    send!(
        app,
        post("/locks/b", json!({"owner": "x", "ttl_seconds": 60}))
    );
    let (_, ended, retry_after) = send!(
        app,
        post(
            "/locks",
            json!({"owner": "o", "ttl_seconds": 60, "locks": [{"resource": "a"}, {"resource": "b"}], "wait_seconds": 1})
        )
    );
    assert_eq!(ended, json!({"acquired": false, "unavailable": ["b"]}));
    assert!(retry_after, "a wait that ended says when to retry");
    let waiting = post(
        "/locks",
        json!({"owner": "o", "ttl_seconds": 60, "locks": [{"resource": "a"}, {"resource": "b"}], "wait_seconds": 5}),
    );
    let release = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        send!(app, TestRequest::delete().uri("/locks/b?owner=x"))
    };
    let (granted, released) = tokio::join!(async { send!(app, waiting) }, release);
    assert_eq!(released.0, StatusCode::NO_CONTENT);
    assert_eq!(granted.1["acquired"], true, "{:?}", granted.1);
}

#[actix_web::test]
async fn bad_sets_are_422_and_change_nothing() {
    let app = init_service(App::new().configure(api().configure())).await;
    let many: Vec<Value> = (0..65)
        .map(|i| json!({"resource": format!("r{i}")}))
        .collect();
    let cases = [
        (set("o", json!([])), "locks", "out_of_range"),
        (set("o", Value::Array(many)), "locks", "out_of_range"),
        (
            set("o", json!([{"resource": "a"}, {"resource": "a"}])),
            "locks",
            "duplicate",
        ),
        (
            set(
                "o",
                json!([{"resource": "a"}, {"resource": "b", "mode": "read"}]),
            ),
            "locks[1].mode",
            "invalid_value",
        ),
        (
            set("o", json!([{"resource": ""}])),
            "locks[0].resource",
            "empty",
        ),
        (set("o", json!("a")), "locks", "invalid_type"),
        (
            json!({"owner": "o", "ttl_seconds": 60}),
            "locks",
            "required",
        ),
    ];
    for (body, field, code) in cases {
        let (status, problem, _) = send!(app, post("/locks", body.clone()));
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(
            (
                problem["errors"][0]["field"].as_str(),
                problem["errors"][0]["code"].as_str()
            ),
            (Some(field), Some(code)),
            "{body}"
        );
    }
    let (status, problem, _) = send!(
        app,
        delete_many(json!({"owner": "o", "resources": ["a", "a"]}))
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem["errors"][0]["code"], "duplicate");
    let (_, list, _) = send!(app, TestRequest::get().uri("/locks"));
    assert_eq!(list["locks"], json!([]));
}
