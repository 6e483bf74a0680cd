//! Calling the app, mocked repositories and the assertions every handler test uses.

use std::pin::Pin;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, StatusCode};
use actix_web::test::{self, TestRequest};
use actix_web::web::Bytes;
use actix_web::App;
use chrono::{DateTime, Utc};
use futures::Stream;
use lock_domain::{
    AcquireOutcome, Capacity, Claim, FencingToken, Grant, HistoryEvent, HistoryId, HistoryPage,
    HistoryRecord, Holding, Lease, LeaseKind, LeaseOp, LeaseOutcome, ListPage, ListedSession, Lock,
    LockDelay, MockHistoryRepository, MockLeaseStore, MockSessionStore, MockStoreHealth, Owner,
    Permit, Place, PoolState, Refusal, ReleaseResult, RenewResult, RepositoryError, ResourceName,
    SemaphorePage, Session, SessionHold, SessionId, SessionOp, SessionOutcome, SessionPage, Tenant,
    Ttl, Weight,
};
use lock_http_actix::ApiSettings;

use crate::wired;
use serde_json::{json, Value};

pub(crate) const ACQUIRED_AT: &str = "2026-11-29T21:32:27.120Z";
pub(crate) const EXPIRES_AT: &str = "2026-11-29T21:33:27.000Z";
pub(crate) const TOKEN: i64 = 17;
pub(crate) const VALID_BODY: &str = r#"{"owner": "worker-7", "ttl_seconds": 60}"#;

// ---------------------------------------------------------------------------------------------
// Calling the app
// ---------------------------------------------------------------------------------------------

/// What the app answered.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub(crate) fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub(crate) async fn answer<B: MessageBody>(response: ServiceResponse<B>) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let body = test::read_body(response).await;
    Answer {
        status,
        headers,
        body,
    }
}

/// The store a test app runs over: its leases, its history and its health, all mocks. A bare
/// [`MockLeaseStore`] comes with a history and a health mock that expect no call.
pub(crate) struct Mocks {
    pub(crate) leases: MockLeaseStore,
    pub(crate) sessions: MockSessionStore,
    pub(crate) history: MockHistoryRepository,
    pub(crate) health: MockStoreHealth,
}

impl From<MockLeaseStore> for Mocks {
    fn from(leases: MockLeaseStore) -> Self {
        Self {
            leases,
            sessions: MockSessionStore::new(),
            history: MockHistoryRepository::new(),
            health: MockStoreHealth::new(),
        }
    }
}

impl Mocks {
    fn configure(self, settings: ApiSettings) -> impl FnOnce(&mut actix_web::web::ServiceConfig) {
        wired::configure(
            wired::Ports {
                store: lock_service::StorePorts {
                    leases: Arc::new(self.leases),
                    sessions: Arc::new(self.sessions),
                    history: Arc::new(self.history),
                    usage: Arc::new(lock_domain::MockLeaseUsage::new()),
                },
                health: Arc::new(self.health),
            },
            settings,
        )
    }
}

/// Sends one request to a fresh app over `store` with the default settings.
pub(crate) async fn call(store: impl Into<Mocks>, req: TestRequest) -> Answer {
    call_with(store, ApiSettings::default(), req).await
}

/// Sends one request to a fresh app. The app (and the mock, whose expectations are checked when
/// it drops) is dropped before this returns.
pub(crate) async fn call_with(
    store: impl Into<Mocks>,
    settings: ApiSettings,
    req: TestRequest,
) -> Answer {
    let app = test::init_service(App::new().configure(store.into().configure(settings))).await;
    answer(test::call_service(&app, req.to_request()).await).await
}

/// Sends one request to a fresh app and reads the answer's status and `Content-Type` and its
/// first chunk only: for an event stream, whose body does not end.
pub(crate) async fn call_stream(
    store: impl Into<Mocks>,
    req: TestRequest,
) -> (StatusCode, String, Vec<u8>) {
    let app =
        test::init_service(App::new().configure(store.into().configure(ApiSettings::default())))
            .await;
    let response = test::call_service(&app, req.to_request()).await;
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut body = response.into_body();
    let first = std::future::poll_fn(|cx| {
        actix_web::body::MessageBody::poll_next(std::pin::Pin::new(&mut body), cx)
    })
    .await;
    let first = first
        .and_then(Result::ok)
        .map(|b| b.to_vec())
        .unwrap_or_default();
    (status, content_type, first)
}

/// Sends `req` with its body streamed in `chunks`, chunked: no `Content-Length` announces the size.
pub(crate) async fn call_chunked(
    store: impl Into<Mocks>,
    req: TestRequest,
    chunks: Vec<Vec<u8>>,
) -> Answer {
    let app =
        test::init_service(App::new().configure(store.into().configure(ApiSettings::default())))
            .await;
    let mut request = req.to_request();
    request.headers_mut().remove(header::CONTENT_LENGTH);
    request.headers_mut().insert(
        header::TRANSFER_ENCODING,
        header::HeaderValue::from_static("chunked"),
    );
    let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(
        futures::stream::iter(chunks.into_iter().map(|chunk| Ok(Bytes::from(chunk)))),
    );
    let (request, _) = request.replace_payload(Payload::from(stream));
    answer(test::call_service(&app, request).await).await
}

/// A JSON request (`Content-Type: application/json`) with `body`.
pub(crate) fn json_request(method: Method, uri: &str, body: impl Into<Bytes>) -> TestRequest {
    TestRequest::default()
        .method(method)
        .uri(uri)
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(body)
}

pub(crate) fn post_json(uri: &str, body: impl Into<Bytes>) -> TestRequest {
    json_request(Method::POST, uri, body)
}

/// The three routes that read a JSON body, with a body each accepts.
pub(crate) fn body_routes() -> [(Method, &'static str); 3] {
    [
        (Method::POST, "/locks/x"),
        (Method::POST, "/locks/x/renew"),
        (Method::DELETE, "/locks/x"),
    ]
}

/// `VALID_BODY` padded with spaces to exactly `len` bytes.
pub(crate) fn padded_body(len: usize) -> Vec<u8> {
    let mut body = VALID_BODY.as_bytes().to_vec();
    body.resize(len, b' ');
    body
}

// ---------------------------------------------------------------------------------------------
// Repositories
// ---------------------------------------------------------------------------------------------

/// A store that must not be called: mockall panics on any call.
pub(crate) fn untouched_repo() -> MockLeaseStore {
    MockLeaseStore::new()
}

pub(crate) fn at(rfc3339: &str) -> DateTime<Utc> {
    rfc3339.parse().expect("a valid timestamp")
}

pub(crate) fn lock_of(resource: &str, owner: &str) -> Lock {
    Lock {
        resource: ResourceName::parse(resource).expect("a valid resource"),
        owner: Owner::parse(owner).expect("a valid owner"),
        acquired_at: at(ACQUIRED_AT),
        expires_at: at(EXPIRES_AT),
        fencing_token: FencingToken::new(TOKEN).expect("a positive token"),
        mode: lock_domain::LockMode::Exclusive,
        value: None,
    }
}

/// The LOCK object the API must serve for `lock_of(resource, owner)`: the millis `.120` keep
/// their trailing zero and whole seconds are written `.000`.
pub(crate) fn lock_json(resource: &str, owner: &str) -> Value {
    json!({
        "resource": resource,
        "owner": owner,
        "acquired_at": ACQUIRED_AT,
        "expires_at": EXPIRES_AT,
        "fencing_token": TOKEN,
        "mode": "exclusive",
    })
}

/// A refusal as the store gives it for a lock held by another owner (who, the handlers do not
/// need to show).
pub(crate) fn held() -> LeaseOutcome {
    LeaseOutcome::Refused(Refusal::Held {
        holders: vec![],
        available: 0,
        delayed_until: None,
    })
}

/// A store expecting exactly one exclusive acquire with exactly these domain values.
pub(crate) fn expect_acquire(
    resource: &str,
    owner: &str,
    ttl: u32,
    outcome: AcquireOutcome,
) -> MockLeaseStore {
    let mut leases = MockLeaseStore::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    leases
        .expect_apply()
        .withf(move |tn, op| {
            *tn == Tenant::default_tenant()
                && matches!(op, LeaseOp::Acquire {
                    place: Place::Lock(r),
                    claim: Claim::Exclusive,
                    terms,
                } if r.as_str() == resource
                    && terms.owner.as_str() == owner
                    && terms.ttl.seconds() == ttl
                    && terms.value.is_none())
        })
        .times(1)
        .returning(move |_, _| {
            Ok(match outcome.clone() {
                AcquireOutcome::Granted(lock) => LeaseOutcome::Granted(Grant::of_lock(lock)),
                AcquireOutcome::Held => held(),
            })
        });
    leases
}

/// A store expecting exactly one look at the lock `resource`, which finds `found`.
pub(crate) fn expect_status(resource: &str, found: Option<Lock>) -> MockLeaseStore {
    let mut leases = MockLeaseStore::new();
    let resource = resource.to_owned();
    leases
        .expect_apply()
        .withf(move |tn, op| {
            *tn == Tenant::default_tenant()
                && matches!(op, LeaseOp::Look(Place::Lock(r)) if r.as_str() == resource)
        })
        .times(1)
        .returning(move |_, _| {
            Ok(LeaseOutcome::Looked(Holding {
                holders: found.clone().map(Grant::of_lock).into_iter().collect(),
                delayed_until: None,
            }))
        });
    leases
}

pub(crate) fn expect_release(resource: &str, owner: &str, result: ReleaseResult) -> MockLeaseStore {
    let mut leases = MockLeaseStore::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    leases
        .expect_apply()
        .withf(move |tn, op| {
            *tn == Tenant::default_tenant()
                && matches!(op, LeaseOp::Release {
                    place: Place::Lock(r),
                    owner: o,
                } if r.as_str() == resource && o.as_str() == owner)
        })
        .times(1)
        .returning(move |_, _| Ok(result.into()));
    leases
}

pub(crate) fn expect_renew(
    resource: &str,
    owner: &str,
    ttl: u32,
    result: RenewResult,
) -> MockLeaseStore {
    let mut leases = MockLeaseStore::new();
    let (resource, owner) = (resource.to_owned(), owner.to_owned());
    leases
        .expect_apply()
        .withf(move |tn, op| {
            *tn == Tenant::default_tenant()
                && matches!(op, LeaseOp::Renew {
                    place: Place::Lock(r),
                    owner: o,
                    ttl: t,
                    ..
                } if r.as_str() == resource && o.as_str() == owner && t.seconds() == ttl)
        })
        .times(1)
        .returning(move |_, _| Ok(result.clone().into()));
    leases
}

/// A store that answers every operation with success, however often it is called.
/// A history with one record, of the lock `payment:42`.
pub(crate) fn permissive_history() -> MockHistoryRepository {
    let record = HistoryRecord {
        id: HistoryId::new(1).unwrap(),
        tenant: Tenant::default_tenant(),
        kind: LeaseKind::Lock,
        name: ResourceName::parse("payment:42").unwrap(),
        owner: Owner::parse("worker-7").unwrap(),
        fencing_token: FencingToken::new(17).unwrap(),
        event: HistoryEvent::Granted,
        at: chrono::DateTime::from_timestamp_millis(1_764_451_947_123).unwrap(),
        reason: None,
        shared: false,
    };
    let mut history = MockHistoryRepository::new();
    let page = record.clone();
    history.expect_history().returning(move |_, _| {
        Ok(HistoryPage {
            records: vec![page.clone()],
            next: None,
        })
    });
    history.expect_last_history_id().returning(|| Ok(None));
    history.expect_history_after().returning(move |after, _| {
        Ok(if after.is_none() {
            vec![record.clone()]
        } else {
            vec![]
        })
    });
    history
}

pub(crate) fn permissive_repo() -> Mocks {
    let mut leases = MockLeaseStore::new();
    leases.expect_apply().returning(|_, op| {
        let token = FencingToken::new(17).unwrap();
        Ok(match op {
            LeaseOp::Acquire {
                place: Place::Lock(r),
                terms,
                ..
            } => LeaseOutcome::Granted(Grant::of_lock(lock_of(r.as_str(), terms.owner.as_str()))),
            LeaseOp::Acquire {
                place: Place::Semaphore(name),
                terms,
                ..
            } => LeaseOutcome::Granted(Grant::of_permit(permit_of(
                name.as_str(),
                terms.owner.as_str(),
            ))),
            LeaseOp::AcquireAll(set) => LeaseOutcome::GrantedAll(
                set.locks()
                    .iter()
                    .map(|(resource, _)| {
                        Grant::of_lock(lock_of(resource.as_str(), set.owner().as_str()))
                    })
                    .collect(),
            ),
            LeaseOp::Look(Place::Lock(r)) => LeaseOutcome::Looked(Holding {
                holders: vec![Grant::of_lock(lock_of(r.as_str(), "worker-7"))],
                delayed_until: None,
            }),
            LeaseOp::Look(Place::Semaphore(name)) => LeaseOutcome::Looked(Holding {
                holders: vec![Grant::of_permit(permit_of(name.as_str(), "worker-7"))],
                delayed_until: None,
            }),
            LeaseOp::Release { .. } => ReleaseResult::Released(token).into(),
            LeaseOp::Renew {
                place: Place::Lock(r),
                owner,
                ..
            } => LeaseOutcome::Renewed(Grant::of_lock(lock_of(r.as_str(), owner.as_str()))),
            LeaseOp::Renew {
                place: Place::Semaphore(name),
                owner,
                ..
            } => LeaseOutcome::Renewed(Grant::of_permit(permit_of(name.as_str(), owner.as_str()))),
            LeaseOp::SetValue {
                place,
                owner,
                value,
                ..
            } => LeaseOutcome::Renewed(Grant::of_lock(Lock {
                value: Some(value),
                ..lock_of(place.name().as_str(), owner.as_str())
            })),
            LeaseOp::Undo(_) => LeaseOutcome::Undone(true),
            LeaseOp::RecordExpiry { .. } => LeaseOutcome::ExpiryRecorded(false),
            LeaseOp::ForceRelease { .. } => LeaseOutcome::ForceReleased(vec![]),
        })
    });
    leases
        .expect_list_locks()
        .returning(|_, _| Ok(ListPage::default()));
    leases.expect_list_semaphores().returning(|_, _| {
        Ok(SemaphorePage {
            semaphores: Vec::new(),
            has_more: false,
        })
    });
    let mut health = MockStoreHealth::new();
    health.expect_ping().returning(|| Ok(()));
    health
        .expect_pool_state()
        .returning(|| Some(PoolState { in_use: 1, idle: 3 }));
    Mocks {
        leases,
        sessions: permissive_sessions(),
        history: permissive_history(),
        health,
    }
}

/// The session [`SESSION_ID`], labelled `worker-7`, live for 10 s from [`ACQUIRED_AT`].
pub(crate) fn session_of() -> Session {
    Session {
        id: SessionId::parse(SESSION_ID).expect("a valid id"),
        owner: Owner::parse("worker-7").expect("a valid owner"),
        ttl: Ttl::parse(10, 60).expect("a valid ttl"),
        lock_delay: LockDelay::NONE,
        created_at: at(ACQUIRED_AT),
        expires_at: at(EXPIRES_AT),
    }
}

/// Sessions that answer every operation as if [`session_of`] were live and held one lock.
pub(crate) fn permissive_sessions() -> MockSessionStore {
    let mut sessions = MockSessionStore::new();
    sessions.expect_apply_session().returning(|_, op| {
        let hold = SessionHold {
            kind: LeaseKind::Lock,
            grant: Grant::of_lock(lock_of("payment:42", "worker-7")),
        };
        Ok(match op {
            SessionOp::Open { .. } => SessionOutcome::Opened(session_of()),
            SessionOp::KeepAlive { .. } => SessionOutcome::Kept(session_of()),
            SessionOp::End { .. } => SessionOutcome::Ended {
                session: session_of(),
                holds: vec![hold],
            },
            SessionOp::Look(_) => SessionOutcome::Looked {
                session: session_of(),
                holds: vec![hold],
            },
        })
    });
    sessions.expect_list_sessions().returning(|_, _| {
        Ok(SessionPage {
            sessions: vec![ListedSession {
                session: session_of(),
                holds: 1,
            }],
            has_more: false,
        })
    });
    sessions.expect_live_sessions().returning(|_| Ok(1));
    sessions
}

/// The id of [`session_of`].
pub(crate) const SESSION_ID: &str = "q7Hc0mB1TzK4n9XwVd2aLg";

/// A grant of 2 permits of 8 on `name` to `owner`, at the times and token of [`lock_of`].
pub(crate) fn permit_of(name: &str, owner: &str) -> Permit {
    let limit = Capacity::semaphore_limit(8).expect("a valid limit");
    Permit {
        name: ResourceName::parse(name).expect("a valid name"),
        lease: Lease {
            owner: Owner::parse(owner).expect("a valid owner"),
            weight: Weight::permits(2, limit).expect("valid permits"),
            capacity: limit,
            acquired_at: at(ACQUIRED_AT),
            expires_at: at(EXPIRES_AT),
            fencing_token: FencingToken::new(TOKEN).expect("a positive token"),
            value: None,
        },
    }
}

/// An error whose text must never reach a client.
#[derive(Debug)]
pub(crate) struct SecretError;

pub(crate) const SECRET: &str = "SQL secret /var/lib/x.db";

impl std::fmt::Display for SecretError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(SECRET)
    }
}

impl std::error::Error for SecretError {}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Failure {
    Unavailable,
    Internal,
}

impl Failure {
    pub(crate) fn error(self) -> RepositoryError {
        match self {
            Failure::Unavailable => RepositoryError::unavailable(SecretError),
            Failure::Internal => RepositoryError::internal(SecretError),
        }
    }
}

/// A store whose every operation fails with `failure`.
pub(crate) fn failing_repo(failure: Failure) -> Mocks {
    let mut leases = MockLeaseStore::new();
    leases
        .expect_apply()
        .returning(move |_, _| Err(failure.error()));
    let mut health = MockStoreHealth::new();
    health.expect_ping().returning(move || Err(failure.error()));
    Mocks {
        leases,
        sessions: MockSessionStore::new(),
        history: MockHistoryRepository::new(),
        health,
    }
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

#[track_caller]
pub(crate) fn assert_json_ok(answer: &Answer) -> Value {
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "body: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let content_type = answer.header(header::CONTENT_TYPE).unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "content-type {content_type:?}"
    );
    answer.json()
}

/// Asserts `answer` is an RFC 9457 problem with `status`, the `slug` type and `instance`, and
/// returns its body.
#[track_caller]
pub(crate) fn assert_problem(
    answer: &Answer,
    status: StatusCode,
    slug: &str,
    instance: &str,
) -> Value {
    let text = String::from_utf8_lossy(&answer.body);
    assert_eq!(answer.status, status, "body: {text}");
    assert_eq!(
        answer.header(header::CONTENT_TYPE),
        Some("application/problem+json"),
        "body: {text}"
    );
    let body = answer.json();
    let kind = body["type"].as_str().unwrap_or_default();
    assert!(
        kind.ends_with(&format!("/{slug}")),
        "type {kind:?} should end in {slug:?}"
    );
    for member in ["title", "detail"] {
        assert!(
            body[member].as_str().is_some_and(|s| !s.is_empty()),
            "{member} should be a non-empty string: {text}"
        );
    }
    assert_eq!(body["status"], json!(status.as_u16()), "body: {text}");
    assert_eq!(body["instance"], json!(instance), "body: {text}");
    body
}

/// Asserts `answer` is a 422 listing exactly `expected` `(field, code)` pairs, in order.
#[track_caller]
pub(crate) fn assert_invalid(answer: &Answer, instance: &str, expected: &[(&str, &str)]) {
    let body = assert_problem(
        answer,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation-failed",
        instance,
    );
    let errors = body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("a 422 lists its errors: {body}"));
    let got: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| {
            assert!(
                e["message"].as_str().is_some_and(|m| !m.is_empty()),
                "every error has a message: {e}"
            );
            (
                e["field"].as_str().unwrap_or_default(),
                e["code"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(got, expected, "body: {body}");
}
