//! API keys and tenants at the HTTP layer: 401 before anything else is looked at, the key's
//! tenant reaches the repository, and open routes stay open.

mod wired;

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use lock_domain::{
    FencingToken, LeaseOp, LeaseOutcome, MockLeaseStore, MockStoreHealth, Refusal, ReleaseResult,
    Tenant,
};
use lock_http_actix::{hash_key, ApiKeys, ApiSettings};
use serde_json::Value;

const ACME_KEY: &str = "acme-secret-key-0001";
const GLOBEX_KEY: &str = "globex-secret-key-0002";

fn keys() -> Arc<ApiKeys> {
    let file = format!(
        "acme {}\nglobex {}\n",
        hash_key(ACME_KEY),
        hash_key(GLOBEX_KEY)
    );
    Arc::new(ApiKeys::parse(&file).expect("keys file"))
}

async fn call(
    repo: MockLeaseStore,
    api_keys: Option<Arc<ApiKeys>>,
    request: TestRequest,
) -> (StatusCode, Option<String>, Value) {
    let settings = ApiSettings {
        api_keys,
        ..ApiSettings::default()
    };
    // The store answers readiness probes.
    let mut health = MockStoreHealth::new();
    health.expect_ping().returning(|| Ok(()));
    let app = init_service(App::new().configure(wired::configure(
        wired::Ports {
            store: lock_service::StorePorts {
                leases: Arc::new(repo),
                sessions: Arc::new(lock_domain::MockSessionStore::new()),
                history: Arc::new(lock_domain::MockHistoryRepository::new()),
                usage: Arc::new(lock_domain::MockLeaseUsage::new()),
            },
            health: Arc::new(health),
        },
        settings,
    )))
    .await;
    let response = call_service(&app, request.to_request()).await;
    let status = response.status();
    let www = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let body = read_body(response).await;
    let json = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    };
    (status, www, json)
}

fn acquire(authorization: Option<&str>, content_type: &str, body: &'static [u8]) -> TestRequest {
    let mut request = TestRequest::post()
        .uri("/locks/r")
        .insert_header(("content-type", content_type))
        .set_payload(body);
    if let Some(value) = authorization {
        request = request.insert_header(("authorization", value));
    }
    request
}

#[actix_web::test]
async fn without_a_valid_key_every_lock_route_is_401_before_anything_else() {
    let big: &'static [u8] = Box::leak(vec![b'x'; 20_000].into_boxed_slice());
    let cases: Vec<(&str, TestRequest)> = vec![
        (
            "no key, valid request",
            acquire(
                None,
                "application/json",
                br#"{"owner":"o","ttl_seconds":5}"#,
            ),
        ),
        (
            "wrong key",
            acquire(
                Some("Bearer nope"),
                "application/json",
                br#"{"owner":"o","ttl_seconds":5}"#,
            ),
        ),
        (
            "basic scheme",
            acquire(Some("Basic YWNtZTpzZWNyZXQ="), "application/json", br#"{}"#),
        ),
        (
            "raw key without scheme",
            acquire(Some(ACME_KEY), "application/json", br#"{}"#),
        ),
        ("415 would apply", acquire(None, "text/plain", b"x")),
        ("413 would apply", acquire(None, "application/json", big)),
        ("400 would apply", acquire(None, "application/json", b"{")),
        (
            "422 would apply",
            acquire(None, "application/json", br#"{"owner":"","ttl_seconds":0}"#),
        ),
        ("status", TestRequest::get().uri("/locks/%00")),
        ("release", TestRequest::delete().uri("/locks/r?owner=o")),
        (
            "renew",
            TestRequest::post()
                .uri("/locks/r/renew")
                .insert_header(("content-type", "application/json"))
                .set_payload(r#"{"owner":"o","ttl_seconds":5}"#),
        ),
        (
            "semaphore acquire",
            TestRequest::post()
                .uri("/semaphores/s")
                .insert_header(("content-type", "application/json"))
                .set_payload(r#"{"owner":"o","ttl_seconds":5,"limit":2}"#),
        ),
        ("semaphore status", TestRequest::get().uri("/semaphores/s")),
        (
            "semaphore release",
            TestRequest::delete().uri("/semaphores/s?owner=o"),
        ),
        (
            "semaphore renew",
            TestRequest::post()
                .uri("/semaphores/s/renew")
                .insert_header(("content-type", "application/json"))
                .set_payload(r#"{"owner":"o","ttl_seconds":5}"#),
        ),
        ("semaphore list", TestRequest::get().uri("/semaphores")),
        ("lock history", TestRequest::get().uri("/locks/r/history")),
        ("tenant history", TestRequest::get().uri("/history?limit=0")),
        ("event stream", TestRequest::get().uri("/events")),
        (
            "session open",
            TestRequest::post()
                .uri("/sessions")
                .insert_header(("content-type", "application/json"))
                .set_payload(r#"{"ttl_seconds":5}"#),
        ),
        ("session list", TestRequest::get().uri("/sessions")),
        (
            "session look",
            TestRequest::get().uri("/sessions/AAAAAAAAAAAAAAAAAAAAAA"),
        ),
        (
            "session keepalive",
            TestRequest::post().uri("/sessions/AAAAAAAAAAAAAAAAAAAAAA/keepalive"),
        ),
        (
            "session end",
            TestRequest::delete().uri("/sessions/AAAAAAAAAAAAAAAAAAAAAA"),
        ),
        (
            "session forced end",
            TestRequest::delete().uri("/sessions/AAAAAAAAAAAAAAAAAAAAAA?force=true&reason=r"),
        ),
    ];
    for (name, request) in cases {
        // No expectations: any repository call fails the test.
        let (status, www, body) = call(MockLeaseStore::new(), Some(keys()), request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{name}: {body}");
        assert_eq!(www.as_deref(), Some("Bearer"), "{name}");
        assert_eq!(body["status"], 401, "{name}");
        assert!(
            body["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("unauthorized")),
            "{name}: {body}"
        );
        assert!(
            !body.to_string().contains(ACME_KEY),
            "{name}: the key is never echoed"
        );
    }
}

#[actix_web::test]
async fn routing_errors_still_come_first() {
    let (status, _, _) = call(
        MockLeaseStore::new(),
        Some(keys()),
        TestRequest::get().uri("/nope"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = call(
        MockLeaseStore::new(),
        Some(keys()),
        TestRequest::put().uri("/locks/r"),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[actix_web::test]
async fn the_key_decides_the_tenant() {
    for (key, tenant) in [(ACME_KEY, "acme"), (GLOBEX_KEY, "globex")] {
        let mut repo = MockLeaseStore::new();
        let expected = Tenant::parse(tenant).expect("tenant");
        repo.expect_apply()
            .withf(move |t, op| {
                *t == expected
                    && matches!(op, LeaseOp::Release { place, owner }
                        if place.name().as_str() == "r" && owner.as_str() == "o")
            })
            .times(1)
            .returning(|_, _| Ok(ReleaseResult::Released(FencingToken::new(17).unwrap()).into()));
        let request = TestRequest::delete()
            .uri("/locks/r?owner=o")
            .insert_header(("authorization", format!("Bearer {key}")));
        let (status, _, _) = call(repo, Some(keys()), request).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{tenant}");
    }
}

#[actix_web::test]
async fn without_keys_the_default_tenant_is_used_and_authorization_is_ignored() {
    let mut repo = MockLeaseStore::new();
    repo.expect_apply()
        .withf(|t, op| *t == Tenant::default_tenant() && matches!(op, LeaseOp::Acquire { .. }))
        .times(1)
        .returning(|_, _| {
            Ok(LeaseOutcome::Refused(Refusal::Held {
                holders: vec![],
                available: 0,
                delayed_until: None,
            }))
        });
    let (status, _, body) = call(
        repo,
        None,
        acquire(
            Some("Bearer whatever"),
            "application/json",
            br#"{"owner":"o","ttl_seconds":5}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["acquired"], false);
}

#[actix_web::test]
async fn health_readiness_and_documents_stay_open() {
    for path in ["/healthz", "/readyz", "/openapi.json", "/swagger-ui/"] {
        let (status, _, _) = call(
            MockLeaseStore::new(),
            Some(keys()),
            TestRequest::get().uri(path),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
}

/// Lock, semaphore, election, session and history operations take the bearer key when the server has API keys and nothing otherwise:
/// `[{}, {"bearer": []}]`, so generated clients may send a key but need not.
#[test]
fn the_document_requires_the_bearer_scheme_on_every_lock_operation() {
    let doc: Value = serde_json::from_str(&lock_http_actix::openapi_json()).expect("JSON");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for (path, operations) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in operations.as_object().expect("operations") {
            let secured = operation["security"] == serde_json::json!([{}, {"bearer": []}]);
            let tenant_data = [
                "/locks",
                "/semaphores",
                "/elections",
                "/history",
                "/events",
                "/sessions",
            ]
            .iter()
            .any(|prefix| path.starts_with(prefix));
            assert_eq!(secured, tenant_data, "{method} {path}");
            if secured {
                assert!(
                    operation["responses"]["401"].is_object(),
                    "{method} {path} documents 401"
                );
            }
        }
    }
}
