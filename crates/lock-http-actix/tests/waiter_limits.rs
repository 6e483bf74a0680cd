//! The limits of waiting acquires (`--max-waiters`, `--max-waiters-per-tenant`), in-process over
//! the in-memory repository: one waiter beyond a limit gets a 429 problem with `Retry-After`
//! before any attempt, is counted in `/metrics`, and a place freed by a waiter that left is
//! taken again.

mod wired;

use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use futures::future::join;
use lock_domain::testing::calls::LeaseCalls;
use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{LeaseStore, ResourceName, SystemClock, Tenant};
use lock_http_actix::{hash_key, ApiKeys, ApiSettings, LockApi};
use lock_service::WaiterLimits;
use serde_json::{json, Value};

const ACME_KEY: &str = "acme-key-000000001";
const GLOBEX_KEY: &str = "globex-key-00000001";

fn api(limits: WaiterLimits) -> (LockApi, Arc<dyn LeaseStore>) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let repo: Arc<dyn LeaseStore> = Arc::clone(&store) as _;
    let keys = ApiKeys::parse(&format!(
        "acme {}\nglobex {}\n",
        hash_key(ACME_KEY),
        hash_key(GLOBEX_KEY)
    ))
    .expect("keys");
    let settings = ApiSettings {
        api_keys: Some(Arc::new(keys)),
        ..ApiSettings::default()
    };
    (wired::over(store, settings, limits), repo)
}

fn acquire(key: &str, resource: &str, owner: &str, wait: u32) -> TestRequest {
    TestRequest::post()
        .uri(&format!("/locks/{resource}"))
        .insert_header((header::AUTHORIZATION, format!("Bearer {key}")))
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(json!({"owner": owner, "ttl_seconds": 60, "wait_seconds": wait}).to_string())
}

async fn json_of(response: ServiceResponse) -> Value {
    serde_json::from_slice(&read_body(response).await).expect("a JSON body")
}

async fn holder(repo: &Arc<dyn LeaseStore>, tenant: &str, resource: &str) -> Option<String> {
    repo.status(
        Tenant::parse(tenant).expect("a tenant"),
        ResourceName::parse(resource).expect("a resource"),
    )
    .await
    .expect("status")
    .map(|lock| lock.owner.as_str().to_owned())
}

/// Asserts a 429 problem with `Retry-After`, and returns its body.
async fn assert_too_many(response: ServiceResponse) -> Value {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        response.headers().get(header::CONTENT_TYPE).unwrap(),
        "application/problem+json"
    );
    let retry_after: u64 = response
        .headers()
        .get(header::RETRY_AFTER)
        .expect("Retry-After")
        .to_str()
        .unwrap()
        .parse()
        .expect("seconds");
    assert!(retry_after >= 1);
    let problem = json_of(response).await;
    assert_eq!(problem["type"], "/problems/too-many-requests", "{problem}");
    assert_eq!(problem["status"], 429);
    problem
}

async fn rejected(
    app: &impl Service<actix_http::Request, Response = ServiceResponse, Error = actix_web::Error>,
    limit: &str,
) -> u64 {
    let metrics = call_service(app, TestRequest::get().uri("/metrics").to_request()).await;
    let text = String::from_utf8(read_body(metrics).await.to_vec()).unwrap();
    let series = format!("lockd_waiters_rejected_total{{limit=\"{limit}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series} in {text}"))
        .parse()
        .expect("a count")
}

/// Lets spawned tasks (the queues) run.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[actix_web::test]
async fn a_waiter_beyond_the_total_limit_gets_429_and_nothing_changes() {
    let (api, repo) = api(WaiterLimits {
        total: 2,
        per_tenant: 2,
    });
    let app = init_service(App::new().configure(api.configure())).await;
    let held = call_service(&app, acquire(ACME_KEY, "q", "holder", 0).to_request()).await;
    assert_eq!(json_of(held).await["acquired"], true);
    let held = call_service(&app, acquire(GLOBEX_KEY, "g", "holder", 0).to_request()).await;
    assert_eq!(json_of(held).await["acquired"], true);

    // Two wait (one of each tenant, so only the total is full), and time out after 1 s.
    let waiters = join(
        call_service(&app, acquire(ACME_KEY, "q", "w1", 1).to_request()),
        call_service(&app, acquire(GLOBEX_KEY, "g", "w2", 1).to_request()),
    );
    let third = async {
        settle().await;
        assert_eq!(api.service().waiting_stats().live, 1 + 1);
        // A free lock: a waiter let in would be granted it at once.
        let refused = call_service(&app, acquire(ACME_KEY, "free", "w3", 5).to_request()).await;
        let problem = assert_too_many(refused).await;
        assert!(
            problem["detail"].as_str().unwrap().contains("waiting"),
            "{problem}"
        );
        assert_eq!(
            holder(&repo, "acme", "free").await,
            None,
            "the refused waiter was granted"
        );
        assert_eq!(holder(&repo, "acme", "q").await.as_deref(), Some("holder"));
        assert_eq!(rejected(&app, "total").await, 1);
        assert_eq!(rejected(&app, "tenant").await, 0);
        // Without a wait, an acquire is not refused.
        let at_once = call_service(&app, acquire(ACME_KEY, "free", "w3", 0).to_request()).await;
        assert_eq!(json_of(at_once).await["acquired"], true);
    };
    let ((first, second), ()) = join(waiters, third).await;
    assert_eq!(json_of(first).await["acquired"], false);
    assert_eq!(json_of(second).await["acquired"], false);

    // Both places are free again.
    assert_eq!(api.service().waiting_stats().live, 0);
    let (a, b) = join(
        call_service(&app, acquire(ACME_KEY, "q", "w4", 1).to_request()),
        call_service(&app, acquire(ACME_KEY, "other", "w5", 1).to_request()),
    )
    .await;
    assert_eq!(a.status(), StatusCode::OK);
    assert_eq!(b.status(), StatusCode::OK);
    assert_eq!(rejected(&app, "total").await, 1);
}

#[actix_web::test]
async fn a_tenant_beyond_its_limit_gets_429_while_others_still_wait() {
    let (api, repo) = api(WaiterLimits {
        total: 10,
        per_tenant: 1,
    });
    let app = init_service(App::new().configure(api.configure())).await;
    let held = call_service(&app, acquire(ACME_KEY, "q", "holder", 0).to_request()).await;
    assert_eq!(json_of(held).await["acquired"], true);
    let held = call_service(&app, acquire(GLOBEX_KEY, "q", "holder", 0).to_request()).await;
    assert_eq!(json_of(held).await["acquired"], true);

    let acme_waiter = call_service(&app, acquire(ACME_KEY, "q", "w1", 1).to_request());
    let others = async {
        settle().await;
        let refused = call_service(&app, acquire(ACME_KEY, "free", "w2", 5).to_request()).await;
        let problem = assert_too_many(refused).await;
        assert!(
            problem["detail"].as_str().unwrap().contains("tenant"),
            "{problem}"
        );
        assert_eq!(holder(&repo, "acme", "free").await, None);
        assert_eq!(rejected(&app, "tenant").await, 1);
        assert_eq!(rejected(&app, "total").await, 0);
        // globex has its own place in line.
        let globex = call_service(&app, acquire(GLOBEX_KEY, "q", "w3", 1).to_request()).await;
        assert_eq!(globex.status(), StatusCode::OK);
        assert_eq!(json_of(globex).await["acquired"], false);
    };
    let (acme, ()) = join(acme_waiter, others).await;
    assert_eq!(json_of(acme).await["acquired"], false);

    // acme's place is free again.
    let again = call_service(&app, acquire(ACME_KEY, "free", "w2", 1).to_request()).await;
    assert_eq!(json_of(again).await["acquired"], true);
    assert_eq!(rejected(&app, "tenant").await, 1);
}
