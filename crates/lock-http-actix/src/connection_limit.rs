//! Shedding connections before the process runs out of file descriptors. Every connection is a
//! descriptor; at the limit of open files the kernel keeps new connections in the listen backlog
//! until some close, so they hang, health checks included. So the server counts its open
//! connections, and a connection opened while `max` others are open is served only
//! `/healthz` and `/readyz`: every other request on it answers 503
//! `/problems/too-many-connections` with `Retry-After: 1`, and the connection is closed after the
//! answer, giving its descriptor back at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Extensions, ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::{Error, ResponseError};

use crate::problem::ProblemKind;

/// The open connections of a server, and how many it serves at once.
#[derive(Debug)]
pub(crate) struct ConnectionLimit {
    open: AtomicUsize,
    max: usize,
}

impl ConnectionLimit {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            open: AtomicUsize::new(0),
            max,
        })
    }

    /// Counts a connection just accepted, for as long as its data lives (the whole connection),
    /// and marks it to be shed when `max` others were open.
    pub(crate) fn on_connect(self: &Arc<Self>, data: &mut Extensions) {
        let others = self.open.fetch_add(1, Ordering::AcqRel);
        if others >= self.max {
            data.insert(Shed { max: self.max });
        }
        data.insert(Counted(Arc::clone(self)));
    }
}

/// A connection opened over the limit.
#[derive(Debug, Clone, Copy)]
struct Shed {
    max: usize,
}

/// One open connection, counted until its data is dropped with it.
struct Counted(Arc<ConnectionLimit>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers a request on a connection opened over the limit: 503 (`/healthz` and `/readyz` are
/// served), then the connection closes.
pub(crate) async fn shed(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let Some(Shed { max }) = req.conn_data::<Shed>().copied() else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let mut response = if matches!(req.path(), "/healthz" | "/readyz") {
        next.call(req).await?.map_into_left_body()
    } else {
        let (request, _) = req.into_parts();
        let answer = ProblemKind::TooManyConnections { max }
            .at(&request)
            .error_response();
        ServiceResponse::new(request, answer).map_into_right_body()
    };
    response
        .response_mut()
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    Ok(response)
}
