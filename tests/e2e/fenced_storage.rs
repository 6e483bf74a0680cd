//! The fencing example (`crates/lockd/examples/fenced_storage`) end to end, on both backends: a
//! holder paused past its lease cannot write to the store, before or after the next holder has
//! written, while the live holder can.

use std::net::TcpListener;
use std::time::Duration;

use lock_client::{ClientConfig, LockClient};
use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

#[path = "../../crates/lockd/examples/fenced_storage/storage.rs"]
mod storage;

on_both_backends!(a_paused_holder_cannot_write_through_the_fenced_store);

/// The store, serving on a thread of its own until the test ends; its base URL.
fn start_store(lockd: &TestServer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the store");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let client = LockClient::new(&ClientConfig::new(lockd.url("")));
    std::thread::spawn(move || {
        actix_web::rt::System::new()
            .block_on(storage::serve(listener, client).expect("serve the store"))
    });
    base
}

/// Writes `body` to object `key` with `token` under lock `report`: the status.
fn put(store: &str, key: &str, token: i64, body: &str) -> u16 {
    let answer = ureq::put(&format!("{store}/objects/{key}"))
        .set("lock-resource", "report")
        .set("fencing-token", &token.to_string())
        .send_string(body);
    match answer {
        Ok(response) => response.status(),
        Err(ureq::Error::Status(status, _)) => status,
        Err(error) => panic!("the store did not answer: {error}"),
    }
}

fn get(store: &str, key: &str) -> String {
    ureq::get(&format!("{store}/objects/{key}"))
        .call()
        .expect("read the object")
        .into_string()
        .expect("body")
}

fn a_paused_holder_cannot_write_through_the_fenced_store(db: TestDatabase) {
    let lockd = TestServer::start(&db, &[]);
    let store = start_store(&lockd);
    let paused = lockd.acquire("report", "paused", 1).token();
    assert_eq!(
        put(&store, "totals", paused, "v1 by paused"),
        204,
        "a live holder writes"
    );

    // The holder pauses past its lease (a GC pause, a stopped VM): nobody holds the lock now.
    std::thread::sleep(Duration::from_millis(1_200));
    // Its token is the newest the object has seen, so the object alone would accept it: the
    // lock server's check refuses it.
    assert_eq!(put(&store, "totals", paused, "v2 by paused"), 409);
    assert_eq!(put(&store, "fresh", paused, "x"), 409, "nor a new object");

    let next = lockd.acquire("report", "next", 30).token();
    assert!(next > paused);
    assert_eq!(
        put(&store, "totals", paused, "v3 by paused"),
        409,
        "a newer holder exists"
    );
    assert_eq!(put(&store, "totals", next, "v4 by next"), 204);
    assert_eq!(
        put(&store, "totals", paused, "v5 by paused"),
        409,
        "older than the last write"
    );
    assert_eq!(get(&store, "totals"), "v4 by next");
    assert_eq!(lockd.release("report", "next").status, 204);
    assert_eq!(
        put(&store, "totals", next, "v6 by next"),
        409,
        "released: no longer live"
    );
    assert_eq!(get(&store, "totals"), "v4 by next");

    // Fail closed: with lockd gone, nothing is written.
    let again = lockd.acquire("report", "last", 30).token();
    lockd.kill9();
    assert_eq!(put(&store, "totals", again, "v7 by last"), 503);
    assert_eq!(get(&store, "totals"), "v4 by next");
}
