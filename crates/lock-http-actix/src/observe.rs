//! `GET /locks/{resource}/observe`, `GET /semaphores/{name}/observe` and
//! `GET /elections/{name}/observe`: Server-Sent Events, the current state first, then one event
//! per change (`lock_service::LockService::observe`); `GET /sessions/{id}/observe` likewise
//! (`observe/session.rs`), over the same stream ([`observation_events`]). An observer holds no
//! worker and no database connection: its stream waits on the service's watch of the name.

pub(crate) mod session;

use std::time::Duration;

use actix_web::http::header;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use futures::Stream;
use lock_domain::{Capacity, Lease, LockMode, ResourceName, Weight};
use lock_service::{Change, Happened, Holding, Observation, Observed, Shape};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;

use crate::api_doc::election_requests::ElectionPath;
use crate::api_doc::requests::{NamePath, ResourcePath};
use crate::authentication::tenant_of;
use crate::dto::{LeaderView, LockView, PermitView};
use crate::problem::{method_not_allowed, ProblemKind};
use crate::resource_path::{election_of, resource_of, semaphore_of};
use crate::ApiState;

/// How often a stream with nothing to say sends a comment, so that proxies keep it open.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(crate) fn routes(cfg: &mut web::ServiceConfig) {
    for (path, handler) in [
        ("/locks/{resource}/observe", Observed::Lock),
        ("/semaphores/{name}/observe", Observed::Semaphore),
        ("/elections/{name}/observe", Observed::Election),
    ] {
        let route = match handler {
            Observed::Lock => web::get().to(observe_lock),
            Observed::Semaphore => web::get().to(observe_semaphore),
            Observed::Election => web::get().to(observe_election),
        };
        cfg.service(
            web::resource(path)
                .route(route)
                .default_service(web::to(method_not_allowed("GET"))),
        );
    }
    cfg.service(
        web::resource("/sessions/{id}/observe")
            .route(web::get().to(session::observe_session))
            .default_service(web::to(method_not_allowed("GET"))),
    );
}

/// Observe a lock.
///
/// A `text/event-stream` (Server-Sent Events). The first event is the lock's state
/// (`event: state`, `{"resource", "holders": [lock, …]}`, no holders when it is free); then one
/// event per change of a holder's lease: `acquired` (a new grant, or the holder granted again),
/// `renewed`, `released` (ended before its `expires_at`: released or undone) and `expired`, each
/// with the lock of that holder (its owner and fencing token). Every event has an `id:` that only
/// grows; a client that reconnects (with `Last-Event-ID`) gets the current state first. Changes
/// made through this server arrive at once, the expiry of a lease within a few milliseconds of
/// its `expires_at`, changes through other servers within about half a second (a change that
/// another server makes and undoes within that time may not be seen). A comment line comes every
/// 15 s when nothing happens.
#[utoipa::path(
    get,
    path = "/locks/{resource}/observe",
    operation_id = "observeLock",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ResourcePath),
    responses(
        (status = 200, description = "The event stream: `state` first, then `acquired`, `renewed`, `released`, `expired`.", content_type = "text/event-stream", body = String,
            example = json!("id: 1764711147123000\nevent: state\ndata: {\"resource\":\"payment:42\",\"holders\":[]}\n\nid: 1764711147250000\nevent: acquired\ndata: {\"resource\":\"payment:42\",\"owner\":\"worker-7\",\"acquired_at\":\"2026-11-29T21:32:27.123Z\",\"expires_at\":\"2026-11-29T21:32:57.123Z\",\"fencing_token\":17,\"mode\":\"exclusive\"}\n\n")),
        (status = 422, description = "Invalid resource name.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable, or the server is stopping.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn observe_lock(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    observe(req, state, Observed::Lock).await
}

/// Observe a semaphore.
///
/// As for a lock: `state` first (`{"name", "holders": [permit, …]}`), then `acquired`, `renewed`,
/// `released` and `expired`, each with the grant it is about.
#[utoipa::path(
    get,
    path = "/semaphores/{name}/observe",
    operation_id = "observeSemaphore",
    tag = "semaphores",
    security((), ("bearer" = [])),
    params(NamePath),
    responses(
        (status = 200, description = "The event stream: `state` first, then `acquired`, `renewed`, `released`, `expired`.", content_type = "text/event-stream", body = String,
            example = json!("id: 1764711147123000\nevent: state\ndata: {\"name\":\"export\",\"holders\":[]}\n\nid: 1764711147250000\nevent: acquired\ndata: {\"name\":\"export\",\"owner\":\"worker-7\",\"permits\":2,\"limit\":8,\"acquired_at\":\"2026-11-29T21:32:27.123Z\",\"expires_at\":\"2026-11-29T21:32:57.123Z\",\"fencing_token\":18}\n\n")),
        (status = 422, description = "Invalid semaphore name.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable, or the server is stopping.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn observe_semaphore(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    observe(req, state, Observed::Semaphore).await
}

/// Observe an election.
///
/// A `text/event-stream`. The first event is the current state: `event: leader` with the leader,
/// or `event: vacant`. Then one event per change: `leader` for a new leader (a new term) or a
/// proclaimed value, `vacant` when the leader resigned (`"reason": "resigned"`) or its lease ran
/// out (`"reason": "expired"`), with the term that ended. Renewals are not events. Ids, timing
/// and keep-alive comments as for a lock.
#[utoipa::path(
    get,
    path = "/elections/{name}/observe",
    operation_id = "observeElection",
    tag = "elections",
    security((), ("bearer" = [])),
    params(ElectionPath),
    responses(
        (status = 200, description = "The event stream: `leader` or `vacant` first, then `leader` and `vacant`.", content_type = "text/event-stream", body = String,
            example = json!("id: 1764711147123000\nevent: leader\ndata: {\"election\":\"scheduler\",\"candidate\":\"node-a\",\"term\":42,\"elected_at\":\"2026-11-29T21:32:27.123Z\",\"expires_at\":\"2026-11-29T21:32:42.123Z\"}\n\nid: 1764711149000000\nevent: vacant\ndata: {\"election\":\"scheduler\",\"term\":42,\"reason\":\"resigned\"}\n\n")),
        (status = 422, description = "Invalid election name.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable, or the server is stopping.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn observe_election(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    observe(req, state, Observed::Election).await
}

async fn observe(
    req: HttpRequest,
    state: web::Data<ApiState>,
    what: Observed,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let name = match what {
        Observed::Lock => resource_of(&req),
        Observed::Semaphore => semaphore_of(&req),
        Observed::Election => election_of(&req),
    }
    .map_err(|e| ProblemKind::Validation(vec![e]))?;
    let observation = state.service.observe(tenant, what, name.clone()).await?;
    let first = first_event(what, &name, &observation.live);
    let render = move |change: &Change| change_event(what, &name, change);
    Ok(event_stream(observation_events(
        observation,
        last_event_id(&req),
        first,
        render,
    )))
}

/// The `Last-Event-ID` of a reconnecting observer (0 when absent or not a number): the stream's
/// ids continue above it.
pub(crate) fn last_event_id(req: &HttpRequest) -> u64 {
    req.headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// A `200 text/event-stream` answer of `events`, never cached nor buffered by a proxy: an
/// observe stream's and the tenant's event stream's.
pub(crate) fn event_stream(
    events: impl Stream<Item = Result<Bytes, std::convert::Infallible>> + 'static,
) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(events)
}

/// One event of an observe stream: its name and its JSON data.
pub(crate) struct Event {
    pub name: &'static str,
    pub data: String,
    /// Whether the stream ends after it (a session's `ended`).
    pub last: bool,
}

impl Event {
    pub(crate) fn new(name: &'static str, data: String) -> Self {
        Self {
            name,
            data,
            last: false,
        }
    }
}

/// What a stream keeps between events.
struct Observer<L, C, R> {
    observation: Observation<L, C>,
    /// The event of a change, if it is one.
    render: R,
    /// The id of the last event sent.
    last_id: u64,
    /// The first event, until it is sent.
    first: Option<Event>,
    /// Whether the last event was sent.
    done: bool,
}

/// The stream of one observer: `first` (the state when it started), then an event for each
/// change that `render` makes one of, with a comment when nothing happened for [`KEEP_ALIVE`].
/// Every event has an id above the one before it and above the client's `Last-Event-ID`. It
/// ends after an event marked `last`, when the service closes, or when the observer fell too far
/// behind (the client reconnects and gets the state again). The one SSE framing of every observe
/// stream.
pub(crate) fn observation_events<L, C, R>(
    observation: Observation<L, C>,
    last_event_id: u64,
    first: Event,
    render: R,
) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>>
where
    L: 'static,
    C: Send + Sync + 'static,
    R: FnMut(&C) -> Option<Event> + 'static,
{
    let observer = Observer {
        observation,
        render,
        last_id: last_event_id,
        first: Some(first),
        done: false,
    };
    futures::stream::unfold(observer, |mut s| async move {
        if s.done {
            return None;
        }
        if let Some(first) = s.first.take() {
            let text = s.frame(s.observation.last_id, &first);
            return Some((Ok(Bytes::from(text)), s));
        }
        loop {
            let received = tokio::time::timeout(KEEP_ALIVE, s.observation.changes.recv()).await;
            match received {
                Err(_) => return Some((Ok(Bytes::from_static(b": keep-alive\n\n")), s)),
                Ok(Ok(numbered)) => {
                    if numbered.id <= s.observation.last_id {
                        continue; // Folded into the first event already.
                    }
                    if let Some(event) = (s.render)(&numbered.change) {
                        let text = s.frame(numbered.id, &event);
                        return Some((Ok(Bytes::from(text)), s));
                    }
                }
                Ok(Err(RecvError::Lagged(_) | RecvError::Closed)) => return None,
            }
        }
    })
}

impl<L, C, R> Observer<L, C, R> {
    /// `event`, framed with the id of the change (`change_id`) or above the last one sent (and
    /// above the client's `Last-Event-ID`), whichever is larger.
    fn frame(&mut self, change_id: u64, event: &Event) -> String {
        self.last_id = change_id.max(self.last_id + 1);
        self.done = event.last;
        format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            self.last_id, event.name, event.data
        )
    }
}

/// The event of a change of a lock's, semaphore's or election's leases, if it is one.
fn change_event(what: Observed, name: &ResourceName, change: &Change) -> Option<Event> {
    let Change {
        happened,
        holding,
        value_changed,
    } = change;
    let (event, data) = match what {
        Observed::Election => match happened {
            Happened::Acquired | Happened::ValueSet => ("leader", leader_json(name, holding)),
            Happened::Regranted if *value_changed => ("leader", leader_json(name, holding)),
            Happened::Regranted | Happened::Renewed => return None,
            Happened::Released => ("vacant", vacant_json(name, Some(holding), "resigned")),
            Happened::Expired => ("vacant", vacant_json(name, Some(holding), "expired")),
        },
        Observed::Lock | Observed::Semaphore => {
            let event = match happened {
                Happened::Acquired | Happened::Regranted => "acquired",
                Happened::Renewed | Happened::ValueSet => "renewed",
                Happened::Released => "released",
                Happened::Expired => "expired",
            };
            (event, holder_json(what, name, holding))
        }
    };
    Some(Event::new(event, data))
}

fn first_event(what: Observed, name: &ResourceName, live: &[Holding]) -> Event {
    match what {
        Observed::Election => match live.first() {
            Some(leader) => Event::new("leader", leader_json(name, leader)),
            None => Event::new("vacant", vacant_json(name, None, "")),
        },
        Observed::Lock => {
            let holders: Vec<LockView> = live.iter().map(|h| lock_view(name, h)).collect();
            let data = json(&LockState {
                resource: name.as_str(),
                holders,
            });
            Event::new("state", data)
        }
        Observed::Semaphore => {
            let holders: Vec<PermitView> = live.iter().map(|h| permit_view(name, h)).collect();
            let data = json(&SemaphoreState {
                name: name.as_str(),
                holders,
            });
            Event::new("state", data)
        }
    }
}

#[derive(Serialize)]
struct LockState<'a> {
    resource: &'a str,
    holders: Vec<LockView>,
}

#[derive(Serialize)]
struct SemaphoreState<'a> {
    name: &'a str,
    holders: Vec<PermitView>,
}

#[derive(Serialize)]
struct Vacant<'a> {
    election: &'a str,
    /// The term that ended (absent in a first event: no one led when the stream started).
    #[serde(skip_serializing_if = "Option::is_none")]
    term: Option<i64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
}

pub(crate) fn json(value: &impl Serialize) -> String {
    // Our own views always serialize.
    serde_json::to_string(value).unwrap_or_default()
}

fn lock_of(name: &ResourceName, holding: &Holding) -> lock_domain::Lock {
    let mode = match holding.shape {
        Shape::Lock(mode) => mode,
        Shape::Permits { .. } => LockMode::Exclusive,
    };
    lock_domain::Lock {
        resource: name.clone(),
        owner: holding.owner.clone(),
        acquired_at: holding.acquired_at,
        expires_at: holding.expires_at,
        fencing_token: holding.token,
        mode,
        value: holding.value.clone(),
    }
}

fn lock_view(name: &ResourceName, holding: &Holding) -> LockView {
    LockView::from(lock_of(name, holding))
}

fn permit_view(name: &ResourceName, holding: &Holding) -> PermitView {
    let (permits, limit) = match holding.shape {
        Shape::Permits { permits, limit } => (permits, limit),
        Shape::Lock(_) => (1, 1),
    };
    let limit = Capacity::semaphore_limit(i64::from(limit)).unwrap_or(Capacity::LOCK);
    let lease = Lease {
        owner: holding.owner.clone(),
        weight: Weight::permits(i64::from(permits), limit).unwrap_or(Weight::SHARED),
        capacity: limit,
        acquired_at: holding.acquired_at,
        expires_at: holding.expires_at,
        fencing_token: holding.token,
        value: holding.value.clone(),
    };
    PermitView::of(name.as_str().to_owned(), lease)
}

fn holder_json(what: Observed, name: &ResourceName, holding: &Holding) -> String {
    match what {
        Observed::Semaphore => json(&permit_view(name, holding)),
        _ => json(&lock_view(name, holding)),
    }
}

fn leader_json(name: &ResourceName, holding: &Holding) -> String {
    json(&LeaderView::from(lock_domain::Leader::of(lock_of(
        name, holding,
    ))))
}

fn vacant_json(name: &ResourceName, ended: Option<&Holding>, reason: &str) -> String {
    json(&Vacant {
        election: name.as_str(),
        term: ended.map(|h| h.token.value()),
        reason,
    })
}
