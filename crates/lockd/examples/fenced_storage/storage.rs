//! A toy object store that refuses writes carrying a stale fencing token: the pattern of
//! docs/fencing.md, for a resource that cannot keep a lock of its own.
//!
//! `PUT /objects/{key}` carries the writer's lock (`Lock-Resource`) and its fencing token
//! (`Fencing-Token`). Inside one critical section per store, so that no other write to the store
//! comes between the check and the write:
//! 1. a token lower than the one that last wrote this object is refused at once (a newer holder
//!    has written: the classic fencing rule, which needs only the object's last token);
//! 2. lockd is asked whether the token is a live holder's right now (`GET
//!    /locks/{resource}/fence`); a stale token is refused, and so is every write while lockd
//!    cannot answer (fail closed);
//! 3. the object is written with its token.
//!
//! Step 2 catches what step 1 cannot: a holder that paused past its lease and writes before the
//! next holder has written anything (or when there is no next holder). Refusals are `409` with
//! `{"error", "current"}`; `GET /objects/{key}` reads an object back.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::Mutex;

use actix_web::http::StatusCode;
use actix_web::{dev::Server, web, App, HttpRequest, HttpResponse, HttpServer};
use lock_client::{Fence, LockClient};
use serde_json::json;

/// One stored object and the token of the write that stored it.
struct Object {
    body: web::Bytes,
    token: i64,
}

struct Store {
    lockd: LockClient,
    objects: Mutex<HashMap<String, Object>>,
}

/// Serves the store on `listener`, checking tokens with `lockd`.
///
/// # Errors
/// When the server cannot start on `listener`.
pub fn serve(listener: TcpListener, lockd: LockClient) -> std::io::Result<Server> {
    let store = web::Data::new(Store {
        lockd,
        objects: Mutex::new(HashMap::new()),
    });
    Ok(HttpServer::new(move || {
        App::new().app_data(store.clone()).service(
            web::resource("/objects/{key}")
                .route(web::put().to(write))
                .route(web::get().to(read)),
        )
    })
    .workers(1)
    .listen(listener)?
    .run())
}

async fn read(store: web::Data<Store>, key: web::Path<String>) -> HttpResponse {
    let objects = store.objects.lock().unwrap_or_else(|e| e.into_inner());
    match objects.get(key.as_str()) {
        Some(object) => HttpResponse::Ok()
            .insert_header(("fencing-token", object.token.to_string()))
            .body(object.body.clone()),
        None => HttpResponse::NotFound().finish(),
    }
}

async fn write(
    req: HttpRequest,
    store: web::Data<Store>,
    key: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let (Some(resource), Some(token)) = (
        header("lock-resource").map(str::to_owned),
        header("fencing-token").and_then(|t| t.parse::<i64>().ok()),
    ) else {
        return answer(
            StatusCode::BAD_REQUEST,
            "Lock-Resource and Fencing-Token are required",
            None,
        );
    };
    let key = key.into_inner();
    // The check and the write hold the store's lock together, on a blocking thread (the check
    // is an HTTP call to lockd).
    let decided = web::block(move || {
        let mut objects = store.objects.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = objects.get(&key).map(|o| o.token) {
            if token < last {
                return Err((
                    StatusCode::CONFLICT,
                    "a newer holder has written".to_owned(),
                    Some(last),
                ));
            }
        }
        match store.lockd.check_fence(&resource, token) {
            Ok(Fence::Valid(_)) => {
                objects.insert(key, Object { body, token });
                Ok(())
            }
            Ok(Fence::Stale { current }) => Err((
                StatusCode::CONFLICT,
                "stale fencing token".to_owned(),
                current,
            )),
            // Fail closed: no write without a verdict.
            Err(error) => Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot check the token: {error}"),
                None,
            )),
        }
    })
    .await;
    match decided {
        Ok(Ok(())) => HttpResponse::NoContent().finish(),
        Ok(Err((status, error, current))) => answer(status, &error, current),
        Err(_) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            "the check did not run",
            None,
        ),
    }
}

fn answer(status: StatusCode, error: &str, current: Option<i64>) -> HttpResponse {
    HttpResponse::build(status).json(json!({"error": error, "current": current}))
}
