//! `GET /sessions/{id}/observe`: a session as Server-Sent Events (`Sessions::observe`). The
//! session and its holds first, then `granted` and `released` for each hold as it happens, and
//! last `ended` with the reason, after which the stream closes. The stream, its ids and its
//! keep-alive comments are the other observe streams' ([`super::observation_events`]).

use actix_web::web;
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::SessionId;
use lock_service::SessionChange;
use serde::Serialize;

use super::{event_stream, json, last_event_id, observation_events, Event};
use crate::authentication::tenant_of;
use crate::dto::{HoldView, SessionHoldsResponse};
use crate::problem::ProblemKind;
use crate::sessions::{session_of, SessionPath};
use crate::ApiState;

/// Observe a session.
///
/// A `text/event-stream` (Server-Sent Events). The first event is the session and its live holds
/// (`event: state`, as `GET /sessions/{id}` answers them); then `granted` for each hold taken
/// under the session and `released` for each hold that ends while the session lives on
/// (released, resigned, force-released or undone), each with the hold (`kind`, `name`,
/// `fencing_token` and `mode`, `permits` or `term`); last `ended`, with the `reason` (`closed`,
/// `expired` when it ran out, `force-released` when an admin ended it) and the `holds` that ended
/// with it, after which the stream closes. A keepalive and a re-grant are no event. Ids, a
/// reconnect with `Last-Event-ID` and the keep-alive comments are as for a lock. Changes made
/// through this server arrive at once, the session running out within a few milliseconds of its
/// `expires_at`, changes through other servers within about half a second. An unknown or ended
/// session is 404.
#[utoipa::path(
    get,
    path = "/sessions/{id}/observe",
    operation_id = "observeSession",
    tag = "sessions",
    security((), ("bearer" = [])),
    params(SessionPath),
    responses(
        (status = 200, description = "The event stream: `state` first, then `granted` and `released`, last `ended`.", content_type = "text/event-stream", body = String,
            example = json!("id: 1764711147123000\nevent: state\ndata: {\"session\":{\"id\":\"q7Hc0mB1TzK4n9XwVd2aLg\",\"owner\":\"worker-7\",\"ttl_seconds\":10,\"lock_delay_seconds\":0,\"created_at\":\"2026-11-29T21:32:27.123Z\",\"expires_at\":\"2026-11-29T21:32:37.123Z\"},\"holds\":[]}\n\nid: 1764711147250000\nevent: granted\ndata: {\"kind\":\"lock\",\"name\":\"payment:42\",\"fencing_token\":17,\"mode\":\"exclusive\"}\n\nid: 1764711149000000\nevent: ended\ndata: {\"session\":\"q7Hc0mB1TzK4n9XwVd2aLg\",\"reason\":\"closed\",\"holds\":[{\"kind\":\"lock\",\"name\":\"payment:42\",\"fencing_token\":17,\"mode\":\"exclusive\"}]}\n\n")),
        (status = 404, description = "`/problems/session-not-found`: no live session of this tenant has this id.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable, or the server is stopping.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn observe_session(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let id = session_of(&req)?;
    let Some(observation) = state.service.sessions().observe(tenant, id.clone()).await? else {
        return Err(ProblemKind::SessionNotFound);
    };
    let (session, holds) = observation.live.clone();
    let first = Event::new(
        "state",
        json(&SessionHoldsResponse {
            session: session.into(),
            holds: holds.into_iter().map(HoldView::from).collect(),
        }),
    );
    let render = move |change: &SessionChange| Some(change_event(&id, change));
    Ok(event_stream(observation_events(
        observation,
        last_event_id(&req),
        first,
        render,
    )))
}

/// The data of `ended`.
#[derive(Serialize)]
struct Ended<'a> {
    session: &'a str,
    reason: &'static str,
    holds: Vec<HoldView>,
}

fn change_event(id: &SessionId, change: &SessionChange) -> Event {
    match change {
        SessionChange::Granted(hold) => Event::new("granted", json(&HoldView::from(hold.clone()))),
        SessionChange::Released(hold) => {
            Event::new("released", json(&HoldView::from(hold.clone())))
        }
        SessionChange::Ended { reason, holds } => Event {
            name: "ended",
            data: json(&Ended {
                session: id.as_str(),
                reason: reason.as_str(),
                holds: holds.iter().cloned().map(HoldView::from).collect(),
            }),
            last: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use lock_domain::{
        Capacity, FencingToken, Grant, Lease, LeaseKind, Owner, Place, ResourceName, SessionEnd,
        SessionHold, Weight,
    };
    use serde_json::{json, Value};

    use super::*;

    fn permits(id: &SessionId) -> SessionHold {
        let limit = Capacity::semaphore_limit(4).unwrap();
        let at = "2026-11-29T21:32:27.123Z".parse().unwrap();
        SessionHold {
            kind: LeaseKind::Semaphore,
            grant: Grant {
                place: Place::Semaphore(ResourceName::parse("export").unwrap()),
                lease: Lease {
                    owner: Owner::session_holder(id, &Owner::parse("worker-7").unwrap()),
                    weight: Weight::permits(2, limit).unwrap(),
                    capacity: limit,
                    acquired_at: at,
                    expires_at: at,
                    fencing_token: FencingToken::new(18).unwrap(),
                    value: None,
                },
            },
        }
    }

    fn rendered(event: &Event) -> (&str, Value, bool) {
        (
            event.name,
            serde_json::from_str(&event.data).unwrap(),
            event.last,
        )
    }

    #[test]
    fn each_change_is_its_event_and_the_end_is_the_last() {
        let id = SessionId::parse("q7Hc0mB1TzK4n9XwVd2aLg").unwrap();
        let hold =
            json!({"kind": "semaphore", "name": "export", "fencing_token": 18, "permits": 2});
        let granted = change_event(&id, &SessionChange::Granted(permits(&id)));
        assert_eq!(rendered(&granted), ("granted", hold.clone(), false));
        let released = change_event(&id, &SessionChange::Released(permits(&id)));
        assert_eq!(rendered(&released), ("released", hold.clone(), false));
        for (reason, text) in [
            (SessionEnd::Closed, "closed"),
            (SessionEnd::Expired, "expired"),
            (SessionEnd::ForceReleased, "force-released"),
        ] {
            let ended = SessionChange::Ended {
                reason,
                holds: vec![permits(&id)],
            };
            assert_eq!(
                rendered(&change_event(&id, &ended)),
                (
                    "ended",
                    json!({"session": id.as_str(), "reason": text, "holds": [hold]}),
                    true
                )
            );
        }
    }
}
