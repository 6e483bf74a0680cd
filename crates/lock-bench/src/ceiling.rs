//! The HTTP ceiling: an actix-web server that answers lockd's acquire and release requests with
//! fixed answers of the same shape and stores nothing. Driven by lockd's own benchmark client,
//! it shows what the HTTP layer alone allows on this machine, so lockd's figures can be read
//! against it (a cycle is two requests here as well).

use std::io;

use actix_web::{web, App, HttpResponse, HttpServer};

/// The hidden command line flag that makes `lock-bench` serve the ceiling instead of measuring.
pub const SERVE_FLAG: &str = "--serve-http-ceiling";

const GRANTED: &str = r#"{"acquired":true,"lock":{"resource":"r","owner":"o","acquired_at":"2026-01-01T00:00:00.000Z","expires_at":"2026-01-01T00:00:30.000Z","fencing_token":1}}"#;

/// Serves until killed, on a free loopback port, with actix's default worker count (one per
/// core, as lockd). Prints `listening on http://ADDR` on stderr, as lockd does.
pub fn serve() -> io::Result<()> {
    actix_web::rt::System::new().block_on(async {
        let server = HttpServer::new(|| {
            App::new()
                .route(
                    "/locks/{resource}",
                    web::post().to(|body: web::Bytes| async move {
                        // Read the body as lockd does, so the ceiling pays for the same bytes.
                        let _ = body.len();
                        HttpResponse::Ok()
                            .content_type("application/json")
                            .body(GRANTED)
                    }),
                )
                .route(
                    "/locks/{resource}",
                    web::delete().to(|| async { HttpResponse::NoContent().finish() }),
                )
        })
        .bind("127.0.0.1:0")?;
        let addr = server
            .addrs()
            .first()
            .copied()
            .ok_or_else(|| io::Error::other("no address bound"))?;
        eprintln!("listening on http://{addr}");
        server.run().await
    })
}
