//! Shared locks and waiting, on both backends: readers coexist while a writer waits for the
//! last of them (on this instance or another sharing the database), later readers queue behind
//! a waiting writer on its instance (until it gives up), and a lock is free when its last live
//! reader's lease ends.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use super::{acquire, granted, holders, read, refused, release, token, waiting, write};
use crate::server::{timestamp_ms, Reply, TestServer};

on_both_backends!(
    readers_coexist_and_a_writer_waits_for_the_last_one,
    a_reader_on_one_instance_holds_back_a_writer_on_the_other,
    a_waiting_writer_holds_back_later_readers_on_its_instance,
    the_lock_is_free_when_the_last_live_reader_lease_ends,
    a_writer_that_gave_up_holds_no_reader_back,
);

/// An acquire on a thread of its own, answered with when its answer arrived.
fn spawn_acquire(
    server: &Arc<TestServer>,
    resource: &str,
    body: Value,
) -> JoinHandle<(Reply, Instant)> {
    let (server, resource) = (Arc::clone(server), resource.to_owned());
    std::thread::spawn(move || (acquire(&server, &resource, body), Instant::now()))
}

/// Waits until `n` acquires wait on `server` (its `lockd_live_waiters`).
fn until_waiting(server: &TestServer, n: u64) {
    let series = format!("lockd_live_waiters {n}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let scrape = server.send("GET", "/metrics", None);
        let text = scrape.body.as_str().unwrap_or_default();
        if text.lines().any(|line| line == series) {
            return;
        }
        assert!(Instant::now() < deadline, "never {n} waiting:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that the acquire is still waiting a while later.
fn still_waiting(acquire: &JoinHandle<(Reply, Instant)>, what: &str) {
    std::thread::sleep(Duration::from_millis(300));
    assert!(!acquire.is_finished(), "{what}");
}

fn readers_coexist_and_a_writer_waits_for_the_last_one(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    let r1 = granted(&acquire(&server, "doc", read("r1", 30)), "shared");
    assert_eq!(
        timestamp_ms(&r1["expires_at"]) - timestamp_ms(&r1["acquired_at"]),
        30_000
    );
    let r2 = granted(&acquire(&server, "doc", read("r2", 30)), "shared");
    assert!(token(&r2) > token(&r1), "{r1} then {r2}");
    // A reader that reads already is granted again, keeping its token.
    let again = granted(&acquire(&server, "doc", read("r1", 30)), "shared");
    assert_eq!(token(&again), token(&r1));

    refused(&acquire(&server, "doc", write("w", 30)), "doc");
    let timed_out = acquire(&server, "doc", waiting(write("w", 30), 1));
    assert_eq!(
        timed_out.body,
        json!({"acquired": false, "resource": "doc"})
    );
    let retry: u64 = timed_out
        .header("retry-after")
        .expect("Retry-After after a wait")
        .parse()
        .expect("seconds");
    assert!((1..=31).contains(&retry), "{retry}");

    let writer = spawn_acquire(&server, "doc", waiting(write("w", 30), 5));
    until_waiting(&server, 1);
    assert_eq!(release(&server, "doc", "r1"), 204);
    still_waiting(&writer, "the writer was granted beside reader r2");
    let released_at = Instant::now();
    assert_eq!(release(&server, "doc", "r2"), 204);
    let (reply, granted_at) = writer.join().expect("writer");
    let w = granted(&reply, "exclusive");
    eprintln!(
        "last reader's release -> writer's grant: {:?}",
        granted_at - released_at
    );
    assert!(token(&w) > token(&r2));
    assert_eq!(server.status("doc").body, w, "GET shows the writer's lock");

    refused(&acquire(&server, "doc", read("r3", 30)), "doc");
    assert_eq!(release(&server, "doc", "w"), 204);
    let r3 = granted(&acquire(&server, "doc", read("r3", 30)), "shared");
    assert!(token(&r3) > token(&w), "tokens rise across modes");
}

fn a_reader_on_one_instance_holds_back_a_writer_on_the_other(db: TestDatabase) {
    let a = Arc::new(TestServer::start(&db, &[]));
    let b = Arc::new(TestServer::start(&db, &[]));
    let r1 = granted(&acquire(&a, "across", read("r1", 30)), "shared");
    let r2 = granted(&acquire(&b, "across", read("r2", 30)), "shared");
    assert!(token(&r2) > token(&r1));
    let both = [("r1".to_owned(), token(&r1)), ("r2".to_owned(), token(&r2))];
    assert_eq!(holders(&a.status("across")), both);
    assert_eq!(holders(&b.status("across")), both);
    refused(&acquire(&b, "across", write("w", 30)), "across");

    let writer = spawn_acquire(&b, "across", waiting(write("w", 30), 5));
    until_waiting(&b, 1);
    assert_eq!(release(&b, "across", "r2"), 204);
    still_waiting(
        &writer,
        "the writer was granted while r1 reads on the other instance",
    );
    let released_at = Instant::now();
    assert_eq!(release(&a, "across", "r1"), 204);
    let (reply, granted_at) = writer.join().expect("writer");
    let w = granted(&reply, "exclusive");
    assert!(token(&w) > token(&r2));
    eprintln!(
        "reader's release on A -> writer's grant on B: {:?}",
        granted_at - released_at
    );
    assert!(granted_at - released_at < Duration::from_secs(2));

    // And back: a reader waiting on A is granted when the writer releases on B.
    let reader = spawn_acquire(&a, "across", waiting(read("r3", 30), 5));
    until_waiting(&a, 1);
    still_waiting(&reader, "the reader was granted beside the writer");
    assert_eq!(release(&b, "across", "w"), 204);
    let r3 = granted(&reader.join().expect("reader").0, "shared");
    assert!(token(&r3) > token(&w));
    assert_eq!(
        holders(&b.status("across")),
        [("r3".to_owned(), token(&r3))]
    );
}

fn a_waiting_writer_holds_back_later_readers_on_its_instance(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    let r1 = granted(&acquire(&server, "log", read("r1", 30)), "shared");
    let writer = spawn_acquire(&server, "log", waiting(write("w", 30), 5));
    until_waiting(&server, 1);

    // Readers hold the lock, yet a new reader does not barge in ahead of the writer...
    refused(&acquire(&server, "log", read("r2", 30)), "log");
    // ...while a reader that reads already is granted again at once, keeping its token.
    let again = granted(&acquire(&server, "log", read("r1", 30)), "shared");
    assert_eq!(token(&again), token(&r1));
    // A reader that waits queues behind the writer.
    let reader = spawn_acquire(&server, "log", waiting(read("r3", 30), 5));
    until_waiting(&server, 2);
    still_waiting(&reader, "the reader overtook the waiting writer");
    assert_eq!(
        holders(&server.status("log")),
        [("r1".to_owned(), token(&r1))]
    );

    assert_eq!(release(&server, "log", "r1"), 204);
    let w = granted(&writer.join().expect("writer").0, "exclusive");
    assert!(token(&w) > token(&r1));
    still_waiting(&reader, "the reader was granted beside the writer");
    assert_eq!(release(&server, "log", "w"), 204);
    let r3 = granted(&reader.join().expect("reader").0, "shared");
    assert!(token(&r3) > token(&w));
    // No writer waits any more: readers join at once.
    let r2 = granted(&acquire(&server, "log", read("r2", 30)), "shared");
    assert_eq!(
        holders(&server.status("log")),
        [("r3".to_owned(), token(&r3)), ("r2".to_owned(), token(&r2))]
    );
}

fn the_lock_is_free_when_the_last_live_reader_lease_ends(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    // The longer lease is released, the shorter one runs out: free once it has.
    granted(&acquire(&server, "short", read("long", 30)), "shared");
    granted(&acquire(&server, "short", read("brief", 1)), "shared");
    assert_eq!(release(&server, "short", "long"), 204);
    // A renew may shorten a lease, too.
    granted(&acquire(&server, "renewed", read("r", 30)), "shared");
    let renewed = server.renew("renewed", "r", 1);
    assert_eq!(renewed.status, 200, "{renewed:?}");
    let started = Instant::now();
    let writers = ["short", "renewed"]
        .map(|resource| spawn_acquire(&server, resource, waiting(write("w", 30), 4)));
    for writer in writers {
        let (reply, granted_at) = writer.join().expect("writer");
        granted(&reply, "exclusive");
        assert!(granted_at - started < Duration::from_secs(3), "{reply:?}");
    }

    // A reader whose lease ran out is no holder: GET, the listing, renew and release agree.
    let ended = granted(&acquire(&server, "mixed", read("ended", 1)), "shared");
    let live = granted(&acquire(&server, "mixed", read("live", 30)), "shared");
    std::thread::sleep(Duration::from_millis(1_200));
    let status = server.status("mixed");
    assert_eq!(status.body["holders"], json!([live]), "{status:?}");
    let listed = server.send("GET", "/locks?prefix=mixed", None);
    assert_eq!(listed.body["locks"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed.body["locks"][0]["owner"], "live", "{listed:?}");
    server
        .renew("mixed", "ended", 30)
        .assert_problem(403, "forbidden");
    assert_eq!(release(&server, "mixed", "ended"), 403);
    // Its owner may take a new lease, with a new token.
    let back = granted(&acquire(&server, "mixed", read("ended", 30)), "shared");
    assert!(token(&back) > token(&live) && token(&live) > token(&ended));
}

/// A writer that gave up waiting, by hanging up or because its wait ended, holds no reader back.
fn a_writer_that_gave_up_holds_no_reader_back(db: TestDatabase) {
    let server = Arc::new(TestServer::start(&db, &[]));
    granted(&acquire(&server, "gave-up", read("r1", 30)), "shared");
    let body = json!({"owner": "w", "ttl_seconds": 30, "wait_seconds": 20}).to_string();
    let address = server.base.trim_start_matches("http://");
    let mut hanging = TcpStream::connect(address).expect("connect to lockd");
    write!(
        hanging,
        "POST /locks/gave-up HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send the request");
    until_waiting(&server, 1);
    refused(&acquire(&server, "gave-up", read("r2", 30)), "gave-up");
    drop(hanging);
    until_waiting(&server, 0);
    granted(&acquire(&server, "gave-up", read("r2", 30)), "shared");

    let timed_out = acquire(&server, "gave-up", waiting(write("w", 30), 1));
    assert_eq!(timed_out.body["acquired"], false, "{timed_out:?}");
    granted(&acquire(&server, "gave-up", read("r3", 30)), "shared");
}
