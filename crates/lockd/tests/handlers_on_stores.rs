//! The HTTP handlers over the real store, on SQLite and on PostgreSQL (in-process, through
//! actix's test service): every repository outcome reaches the client as the contract says.

use lock_service::WaiterLimits;
use lockd::application::StoreWiring;
use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use lock_domain::SystemClock;
use lock_http_actix::ApiSettings;
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};
use serde_json::{json, Value};

async fn repository(db: &TestDatabase) -> Arc<DieselLockRepository> {
    let config = StoreConfig::new(db.url().clone());
    let store = tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(SystemClock))
    })
    .await
    .expect("open task")
    .expect("open store");
    Arc::new(store)
}

fn request(method: &str, path: &str, body: Option<Value>) -> TestRequest {
    let mut request = match method {
        "POST" => TestRequest::post(),
        "DELETE" => TestRequest::delete(),
        _ => TestRequest::get(),
    }
    .uri(path);
    if let Some(body) = body {
        request = request
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_string());
    }
    request
}

async fn outcomes_reach_the_client(db: TestDatabase) {
    let repo = repository(&db).await;
    let app = init_service(
        App::new().configure(
            lockd::application::compose(
                StoreWiring::of(repo),
                ApiSettings::default(),
                WaiterLimits::default(),
            )
            .configure(),
        ),
    )
    .await;
    macro_rules! call {
        ($method:expr, $path:expr, $body:expr) => {{
            let response = call_service(&app, request($method, $path, $body).to_request()).await;
            let status = response.status();
            let bytes = read_body(response).await;
            let body: Value = if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).expect("JSON body")
            };
            (status, body)
        }};
    }

    let (status, granted) = call!(
        "POST",
        "/locks/a%2Fb",
        Some(json!({"owner": " w1 ", "ttl_seconds": 30}))
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(granted["acquired"], true);
    assert_eq!(granted["lock"]["resource"], "a/b");
    assert_eq!(granted["lock"]["owner"], "w1");
    let (status, held) = call!(
        "POST",
        "/locks/a%2Fb",
        Some(json!({"owner": "w2", "ttl_seconds": 30}))
    );
    assert_eq!(
        (status, held),
        (
            StatusCode::OK,
            json!({"acquired": false, "resource": "a/b"})
        )
    );
    let (status, lock) = call!("GET", "/locks/a%2Fb", None);
    assert_eq!((status, &lock), (StatusCode::OK, &granted["lock"]));
    let (status, problem) = call!(
        "POST",
        "/locks/a%2Fb/renew",
        Some(json!({"owner": "w2", "ttl_seconds": 30}))
    );
    assert_eq!(
        (status, problem["status"].clone()),
        (StatusCode::FORBIDDEN, json!(403))
    );
    let (status, renewed) = call!(
        "POST",
        "/locks/a%2Fb/renew",
        Some(json!({"owner": "w1", "ttl_seconds": 60}))
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(renewed["fencing_token"], granted["lock"]["fencing_token"]);
    assert_eq!(renewed["acquired_at"], granted["lock"]["acquired_at"]);
    let (status, _) = call!("DELETE", "/locks/a%2Fb?owner=w2", None);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = call!("DELETE", "/locks/a%2Fb?owner=w1", None);
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    let (status, _) = call!("GET", "/locks/a%2Fb", None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call!("DELETE", "/locks/a%2Fb?owner=w1", None);
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call!(
        "POST",
        "/locks/a%2Fb/renew",
        Some(json!({"owner": "w1", "ttl_seconds": 60}))
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, again) = call!(
        "POST",
        "/locks/a%2Fb",
        Some(json!({"owner": "w2", "ttl_seconds": 30}))
    );
    assert_eq!(status, StatusCode::OK);
    assert!(again["lock"]["fencing_token"].as_i64() > granted["lock"]["fencing_token"].as_i64());
    let (status, ready) = call!("GET", "/readyz", None);
    assert_eq!(
        (status, ready),
        (StatusCode::OK, json!({"status": "ready"}))
    );
}

#[actix_web::test]
async fn sqlite_outcomes_reach_the_client() {
    outcomes_reach_the_client(TestDatabase::sqlite()).await;
}

#[actix_web::test]
async fn postgres_outcomes_reach_the_client() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    outcomes_reach_the_client(db).await;
}
