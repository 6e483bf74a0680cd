//! Serving the API over TCP: actix-web's HTTP/1 service on actix-server's workers, as
//! `actix_web::HttpServer` builds it, except that each connection's future runs inside a
//! [`SpinGuard`], which `HttpServer` has no place for.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_http::{HttpService, KeepAlive};
use actix_service::{apply_fn_factory, map_config, IntoServiceFactory, Service, ServiceFactoryExt};
use actix_web::dev::{AppConfig, Server};
use actix_web::App;

use crate::connection_limit::ConnectionLimit;
use crate::peer::remember_peer_socket;
use crate::spin_guard::SpinGuard;
use crate::LockApi;

/// How a server serves its connections.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Worker threads (`None`: one per CPU).
    pub workers: Option<usize>,
    /// How long a graceful stop waits for requests in flight.
    pub shutdown_timeout: Duration,
    /// How long a client may take to send a request's headers.
    pub client_request_timeout: Duration,
    /// Connections served at once; one opened beyond is answered 503 (but `/healthz` and
    /// `/readyz`) and closed. `usize::MAX`: no limit.
    pub max_connections: usize,
}

/// Serves `api` on `listener` until SIGTERM or Ctrl-C (then it stops gracefully, waiting up to
/// `shutdown_timeout` for requests in flight). At most `max_connections` connections are served
/// at once (see `connection_limit`).
///
/// A client that closes its connection, even only its sending half, is gone: its request is
/// dropped at once, so a waiting acquire leaves its queue and is never granted a lock nobody
/// would use (HTTP/1.1 clients do not half-close to end a request; its length does). Each
/// connection remembers its socket, so a waiting acquire can tell whether its client hung up
/// before answering a grant.
///
/// # Errors
/// When the listener cannot be registered (its address cannot be read).
pub fn serve(
    api: &LockApi,
    listener: TcpListener,
    options: &ServerOptions,
) -> std::io::Result<Server> {
    let addr = listener.local_addr()?;
    let mut builder =
        actix_server::Server::build().shutdown_timeout(options.shutdown_timeout.as_secs());
    if let Some(workers) = options.workers {
        builder = builder.workers(workers);
    }
    let graceful_stop = builder.graceful_shutdown_signal();
    let client_request_timeout = options.client_request_timeout;
    let connections = ConnectionLimit::new(options.max_connections);
    let api = api.clone();
    let builder = builder.listen("lockd", listener, move || {
        let graceful_stop = graceful_stop.clone();
        let connections = Arc::clone(&connections);
        let app = App::new()
            .configure(api.configure())
            .into_factory()
            .map_err(|error: actix_web::Error| error.error_response());
        let http = HttpService::build()
            .graceful_shutdown_signal(move || {
                let signal = graceful_stop.clone();
                async move { signal.notified().await }
            })
            .keep_alive(KeepAlive::default())
            .client_request_timeout(client_request_timeout)
            .client_disconnect_timeout(Duration::from_secs(1))
            .h1_allow_half_closed(false)
            .local_addr(addr)
            .on_connect_ext(move |io: &actix_web::rt::net::TcpStream, data: &mut _| {
                connections.on_connect(data);
                remember_peer_socket(io, data);
            })
            .finish(map_config(app, move |()| AppConfig::default()))
            .tcp();
        apply_fn_factory(http, |io, connection: &_| {
            SpinGuard::new(connection.call(io))
        })
    })?;
    Ok(builder.run())
}
