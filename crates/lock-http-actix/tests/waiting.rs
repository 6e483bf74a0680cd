//! Waiting acquires in-process, over the in-memory repository with the system clock: first come
//! first served, requests that are dropped leave at once and are never left holding a lock, the
//! holder is granted again at once, waits end with `Retry-After`, and the counters add up.

mod wired;

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::test::{call_service, init_service, read_body, TestRequest};
use actix_web::App;
use lock_domain::testing::calls::LeaseCalls;
use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{LeaseStore, Owner, ResourceName, SystemClock, Tenant};
use lock_http_actix::{ApiSettings, LockApi};
use lock_service::WaiterLimits;
use serde_json::{json, Value};

fn api() -> (LockApi, Arc<dyn LeaseStore>) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let repo: Arc<dyn LeaseStore> = Arc::clone(&store) as _;
    (
        wired::over(store, ApiSettings::default(), WaiterLimits::default()),
        repo,
    )
}

fn acquire(resource: &str, owner: &str, ttl: u32, wait: u32) -> TestRequest {
    TestRequest::post()
        .uri(&format!("/locks/{resource}"))
        .insert_header(("content-type", "application/json"))
        .set_payload(json!({"owner": owner, "ttl_seconds": ttl, "wait_seconds": wait}).to_string())
}

fn release(resource: &str, owner: &str) -> TestRequest {
    TestRequest::delete().uri(&format!("/locks/{resource}?owner={owner}"))
}

async fn json_of(response: ServiceResponse) -> Value {
    let bytes = read_body(response).await;
    serde_json::from_slice(&bytes).expect("a JSON body")
}

fn key(resource: &str) -> (Tenant, ResourceName) {
    (
        Tenant::default_tenant(),
        ResourceName::parse(resource).expect("a resource"),
    )
}

async fn holder_of(repo: &Arc<dyn LeaseStore>, resource: &str) -> Option<Owner> {
    let (tenant, resource) = key(resource);
    repo.status(tenant, resource)
        .await
        .expect("status")
        .map(|lock| lock.owner)
}

/// Lets spawned tasks (the queues) run.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[actix_web::test]
async fn ten_waiters_are_granted_in_arrival_order_each_at_once() {
    let (api, _repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    let held = call_service(&app, acquire("q", "holder", 60, 0).to_request()).await;
    assert_eq!(json_of(held).await["acquired"], true);

    let order = RefCell::new(Vec::new());
    let handovers = RefCell::new(Vec::new());
    let grants = RefCell::new(Vec::new());
    let waiter = |i: usize| {
        let (app, order, handovers, grants) = (&app, &order, &handovers, &grants);
        async move {
            let owner = format!("w{i}");
            let reply =
                json_of(call_service(app, acquire("q", &owner, 60, 30).to_request()).await).await;
            assert_eq!(reply["acquired"], true, "{reply}");
            grants.borrow_mut().push(Instant::now());
            order.borrow_mut().push(i);
            let released = call_service(app, release("q", &owner).to_request()).await;
            assert_eq!(released.status(), StatusCode::NO_CONTENT);
            handovers.borrow_mut().push(Instant::now());
        }
    };
    let releaser = async {
        settle().await;
        assert_eq!(api.service().waiting_stats().live, 10);
        let (tenant, resource) = key("q");
        assert_eq!(api.service().locks().waiters(&tenant, &resource), 10);
        let scrape = call_service(&app, TestRequest::get().uri("/metrics").to_request()).await;
        let text = String::from_utf8(read_body(scrape).await.to_vec()).expect("UTF-8");
        assert!(
            text.lines().any(|line| line == "lockd_live_waiters 10"),
            "{text}"
        );
        let released = call_service(&app, release("q", "holder").to_request()).await;
        assert_eq!(released.status(), StatusCode::NO_CONTENT);
        handovers.borrow_mut().push(Instant::now());
    };
    // join_all polls the waiters in order: each joins the queue before the next arrives.
    let started = Instant::now();
    futures::join!(futures::future::join_all((0..10).map(waiter)), releaser);
    assert_eq!(*order.borrow(), (0..10).collect::<Vec<_>>());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "ten hand-overs took {:?}: a release must wake the next waiter at once",
        started.elapsed()
    );
    // From each release's answer to the next waiter's grant.
    let mut waits: Vec<Duration> = grants
        .borrow()
        .iter()
        .zip(handovers.borrow().iter())
        .map(|(granted, released)| granted.saturating_duration_since(*released))
        .collect();
    waits.sort();
    eprintln!(
        "release -> next grant: median {:?}, max {:?}",
        waits[5], waits[9]
    );
    assert!(waits[9] < Duration::from_millis(200), "{waits:?}");
    assert_eq!(api.service().waiting_stats().live, 0);
    assert_eq!(api.service().waiting_stats().granted_after_wait, 10);
    assert_eq!(api.service().waiting_stats().timed_out, 0);
}

#[actix_web::test]
async fn a_dropped_waiter_leaves_at_once_and_is_never_granted() {
    let (api, repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    call_service(&app, acquire("d", "holder", 60, 0).to_request()).await;
    let (tenant, resource) = key("d");

    // Dropped while waiting: the request's future is dropped, as actix does when the client
    // hangs up.
    let waited = tokio::time::timeout(
        Duration::from_millis(50),
        app.call(acquire("d", "gone", 60, 30).to_request()),
    )
    .await;
    assert!(waited.is_err(), "it waits");
    assert_eq!(api.service().waiting_stats().live, 0, "left at once");
    assert_eq!(api.service().locks().waiters(&tenant, &resource), 0);
    call_service(&app, release("d", "holder").to_request()).await;
    settle().await;
    assert_eq!(holder_of(&repo, "d").await, None, "nobody was granted");

    // Granted, but dropped before it could answer: the grant is released at once.
    call_service(&app, acquire("d", "holder", 60, 0).to_request()).await;
    let mut pending = Box::pin(app.call(acquire("d", "late", 60, 30).to_request()));
    assert!(
        futures::poll!(pending.as_mut()).is_pending(),
        "it queues behind the holder"
    );
    call_service(&app, release("d", "holder").to_request()).await;
    settle().await;
    assert_eq!(
        holder_of(&repo, "d").await.map(Owner::into_string),
        Some("late".into())
    );
    drop(pending);
    settle().await;
    assert_eq!(holder_of(&repo, "d").await, None, "its grant was released");
    assert_eq!(api.service().waiting_stats().abandoned_grants, 1);
    assert_eq!(api.service().waiting_stats().live, 0);
}

#[actix_web::test]
async fn the_holder_is_granted_again_at_once_even_with_others_waiting() {
    let (api, _repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    let first = json_of(call_service(&app, acquire("h", "holder", 60, 0).to_request()).await).await;
    let mut waiting = Box::pin(app.call(acquire("h", "other", 60, 30).to_request()));
    assert!(futures::poll!(waiting.as_mut()).is_pending());
    settle().await;

    let again =
        json_of(call_service(&app, acquire("h", "holder", 60, 30).to_request()).await).await;
    assert_eq!(again["acquired"], true);
    assert_eq!(
        again["lock"]["fencing_token"],
        first["lock"]["fencing_token"]
    );
    assert!(
        futures::poll!(waiting.as_mut()).is_pending(),
        "still waiting"
    );
    call_service(&app, release("h", "holder").to_request()).await;
    let granted = json_of(waiting.await.expect("answer")).await;
    assert_eq!(granted["lock"]["owner"], "other");
}

#[actix_web::test]
async fn a_wait_that_ends_answers_held_with_retry_after() {
    let (api, repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    call_service(&app, acquire("t", "holder", 30, 0).to_request()).await;
    let started = Instant::now();
    let response = call_service(&app, acquire("t", "impatient", 60, 1).to_request()).await;
    let waited = started.elapsed();
    assert_eq!(response.status(), StatusCode::OK);
    let retry_after: u64 = response
        .headers()
        .get(header::RETRY_AFTER)
        .expect("Retry-After")
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    // The holder's lease ends in about 29 s.
    assert!(
        (28..=30).contains(&retry_after),
        "Retry-After {retry_after}"
    );
    assert_eq!(
        json_of(response).await,
        json!({"acquired": false, "resource": "t"})
    );
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_millis(1_300),
        "{waited:?}"
    );
    assert_eq!(api.service().waiting_stats().timed_out, 1);
    assert_eq!(api.service().waiting_stats().live, 0);
    assert_eq!(
        holder_of(&repo, "t").await.map(Owner::into_string),
        Some("holder".into())
    );
}

#[actix_web::test]
async fn a_waiter_is_granted_just_after_the_lease_expires() {
    let (api, _repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    let held = json_of(call_service(&app, acquire("e", "holder", 1, 0).to_request()).await).await;
    let expires_at: chrono::DateTime<chrono::Utc> = held["lock"]["expires_at"]
        .as_str()
        .expect("expires_at")
        .parse()
        .expect("a timestamp");
    let granted = json_of(call_service(&app, acquire("e", "next", 60, 5).to_request()).await).await;
    let acquired_at: chrono::DateTime<chrono::Utc> = granted["lock"]["acquired_at"]
        .as_str()
        .expect("acquired_at")
        .parse()
        .expect("a timestamp");
    let after = (acquired_at - expires_at).num_milliseconds();
    assert!((0..100).contains(&after), "granted {after} ms after expiry");
}

#[actix_web::test]
async fn a_renew_that_shortens_the_lease_moves_the_grant_earlier() {
    let (api, _repo) = api();
    let app = init_service(App::new().configure(api.configure())).await;
    call_service(&app, acquire("r", "holder", 60, 0).to_request()).await;
    let mut waiting = Box::pin(app.call(acquire("r", "next", 60, 10).to_request()));
    assert!(futures::poll!(waiting.as_mut()).is_pending());
    settle().await;
    let renew = TestRequest::post()
        .uri("/locks/r/renew")
        .insert_header(("content-type", "application/json"))
        .set_payload(r#"{"owner": "holder", "ttl_seconds": 1}"#)
        .to_request();
    assert_eq!(call_service(&app, renew).await.status(), StatusCode::OK);
    let started = Instant::now();
    let granted = json_of(waiting.await.expect("answer")).await;
    assert_eq!(granted["lock"]["owner"], "next");
    assert!(started.elapsed() < Duration::from_millis(1_300));
}
