//! `GET /events`: the caller's tenant's history as Server-Sent Events, each record as it is
//! committed (`lock_service::History::follow`). A client that reconnects with
//! `Last-Event-ID` gets every record after that id that the retention still holds, then the
//! live stream: nothing lost, nothing twice. A stream holds no worker and no connection of the
//! pool while it waits.

use actix_web::web::{self, Bytes, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use futures::Stream;
use lock_service::{FeedFilter, FeedStart, HistoryFeed};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};
use utoipa::IntoParams;

use crate::api_doc::history_requests::EventParams;
use crate::authentication::tenant_of;
use crate::dto::HistoryRecordView;
use crate::history_query;
use crate::observe::{event_stream, KEEP_ALIVE};
use crate::problem::{method_not_allowed, FieldError, ProblemKind};
use crate::ApiState;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/events")
            .route(web::get().to(follow))
            .default_service(web::to(method_not_allowed("GET"))),
    );
}

/// The `Last-Event-ID` header of a stream that reconnects.
pub(crate) struct LastEventId;

impl IntoParams for LastEventId {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![ParameterBuilder::new()
            .name("Last-Event-ID")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "The `id:` of the last event received: the stream starts after it, with every \
                 record the retention still holds. `0`: from the oldest record kept. Absent: \
                 from now on. Browsers' `EventSource` sends it when it reconnects.",
            ))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^(0|[1-9][0-9]{0,17})$")),
            ))
            .example(Some("1742".into()))
            .build()]
    }
}

/// Follow the tenant's events.
///
/// A `text/event-stream` of every history record of the caller's tenant whose name starts with
/// `prefix` and whose kind is among `kinds`, as it is committed, oldest first; records made
/// through other servers of the same database arrive within about half a second. Each event is
/// `id: <record id>` and `data: <record>` (as in the history routes); ids only grow. Send the
/// last id received as `Last-Event-ID` to continue after it. A comment line comes every 15 s when
/// nothing happens. When the database fails, the stream says so in a comment and ends: reconnect
/// with `Last-Event-ID`.
#[utoipa::path(
    get,
    path = "/events",
    operation_id = "followEvents",
    tag = "history",
    security((), ("bearer" = [])),
    params(EventParams, LastEventId),
    responses(
        (status = 200, description = "The event stream: one event per history record.", content_type = "text/event-stream", body = String,
            example = json!("id: 1742\ndata: {\"id\":1742,\"kind\":\"lock\",\"name\":\"payment:42\",\"owner\":\"worker-7\",\"fencing_token\":17,\"event\":\"granted\",\"at\":\"2026-11-29T21:32:27.123Z\",\"shared\":false}\n\n")),
        (status = 422, description = "An invalid `prefix`, `kinds` or `Last-Event-ID`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
        (status = 503, description = "The lock database is unavailable, or the server is stopping.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn follow(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = history_query::events(req.query_string());
    let start = start_of(&req);
    let ((prefix, kinds), start) = match (query, start) {
        (Ok(query), Ok(start)) => (query, start),
        (Err(ProblemKind::Validation(mut errors)), Err(error)) => {
            errors.push(error);
            return Err(ProblemKind::Validation(errors));
        }
        (Err(problem), _) => return Err(problem),
        (Ok(_), Err(error)) => return Err(ProblemKind::Validation(vec![error])),
    };
    let filter = FeedFilter {
        tenant,
        prefix,
        kinds,
    };
    let feed = state.service.history().follow(filter, start).await?;
    Ok(event_stream(events(feed)))
}

/// Where the stream starts: after `Last-Event-ID`, or now.
fn start_of(req: &HttpRequest) -> Result<FeedStart, FieldError> {
    let Some(raw) = req.headers().get("last-event-id") else {
        return Ok(FeedStart::Now);
    };
    let invalid = || {
        FieldError::new(
            "Last-Event-ID",
            "invalid_value",
            "Last-Event-ID must be the id of an event of this stream (or 0)",
        )
    };
    let text = raw.to_str().map_err(|_| invalid())?.trim();
    if text.is_empty()
        || text.len() > crate::fields::history::ID_DIGITS
        || !text.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(invalid());
    }
    text.parse::<i64>()
        .ok()
        .and_then(|id| u64::try_from(id).ok())
        .map(FeedStart::After)
        .ok_or_else(invalid)
}

/// One event per record, a comment when nothing happened for [`KEEP_ALIVE`]; the stream ends
/// when the service closes, or (after saying so) when a read of the database failed.
fn events(feed: HistoryFeed) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>> {
    futures::stream::unfold(Some(feed), |feed| async move {
        let mut feed = feed?;
        match tokio::time::timeout(KEEP_ALIVE, feed.next()).await {
            Err(_) => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), Some(feed))),
            Ok(None) => None,
            Ok(Some(Err(_))) => Some((
                Ok(Bytes::from_static(
                    b": the lock database is unavailable; reconnect with Last-Event-ID\n\n",
                )),
                None,
            )),
            Ok(Some(Ok(record))) => {
                let id = record.id.value();
                let data = serde_json::to_string(&HistoryRecordView::from(record))
                    .unwrap_or_else(|_| "{}".to_owned());
                Some((
                    Ok(Bytes::from(format!("id: {id}\ndata: {data}\n\n"))),
                    Some(feed),
                ))
            }
        }
    })
}
