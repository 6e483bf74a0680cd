//! The undo of a grant nobody heard of, in the history, on both backends. A waiting acquire (of
//! a lock, of a semaphore's permit) is granted when the holder's lease ends; the test holds the
//! database's write lock across that moment, so the grant is being written when the waiting
//! client hangs up. Once the write lock is let go the grant commits, nobody takes it, and lockd
//! undoes it: the history says `granted` then `undone` for the waiter (after the holder's
//! `expired`), and the lock or semaphore is free.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, SqliteConnection};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::DatabaseUrl;
use serde_json::{json, Value};

use crate::history::{history, ok, SOON};
use crate::history_leases::assert_commits;
use crate::server::{timestamp_ms, TestServer};

on_both_backends!(
    a_lock_grant_whose_waiter_hung_up_is_recorded_as_undone,
    a_permit_grant_whose_waiter_hung_up_is_recorded_as_undone,
);

/// A transaction of the test's own that keeps lockd's writes (of `table`, on PostgreSQL; of
/// anything, on SQLite) waiting until it ends. Reads go on.
enum WriteBlock {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl WriteBlock {
    fn start(db: &TestDatabase, table: &str) -> Self {
        match db.url() {
            DatabaseUrl::Sqlite(path) => {
                let mut conn =
                    SqliteConnection::establish(&path.to_string_lossy()).expect("open the file");
                conn.batch_execute("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE")
                    .expect("take SQLite's write lock");
                Self::Sqlite(conn)
            }
            DatabaseUrl::Postgres(url) => {
                let mut conn = PgConnection::establish(url).expect("connect to PostgreSQL");
                // SHARE ROW EXCLUSIVE: every INSERT, UPDATE and DELETE of the table waits; plain
                // reads do not.
                conn.batch_execute(&format!(
                    "BEGIN; LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE"
                ))
                .expect("lock the table");
                Self::Postgres(conn)
            }
        }
    }

    fn end(self) {
        match self {
            Self::Sqlite(mut conn) => conn.batch_execute("ROLLBACK"),
            Self::Postgres(mut conn) => conn.batch_execute("ROLLBACK"),
        }
        .expect("end the blocking transaction");
    }
}

/// Sends a `POST path` with `body` on a connection of its own, without reading the answer.
fn post_unread(server: &TestServer, path: &str, body: &Value) -> TcpStream {
    let address = server.base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect to lockd");
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: lockd\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send the request");
    stream
}

/// Sleeps until `ms` milliseconds after the epoch (at once when that has passed).
fn sleep_until(ms: i64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_millis() as i64;
    if ms > now {
        std::thread::sleep(Duration::from_millis((ms - now) as u64));
    }
}

/// Holds the write lock from shortly before `expires_at_ms` (when the waiter's grant is
/// attempted) until well after it, and hangs the waiter up while the grant waits to be written.
fn hang_up_while_the_grant_is_written(
    db: &TestDatabase,
    table: &str,
    expires_at_ms: i64,
    waiter: TcpStream,
) {
    sleep_until(expires_at_ms - 400);
    let block = WriteBlock::start(db, table);
    sleep_until(expires_at_ms + 300);
    drop(waiter);
    // Under PostgreSQL's statement_timeout (1.5 s) for the grant waiting since expires_at.
    sleep_until(expires_at_ms + 900);
    block.end();
}

/// `(event, owner, fencing_token)` of the records of `path`, oldest first, once there are
/// `count` of them (within a few seconds).
fn story_of(server: &TestServer, path: &str, count: usize) -> Vec<(String, String, i64)> {
    let deadline = Instant::now() + SOON;
    loop {
        let page = history(server, path);
        let records = page["records"].as_array().unwrap();
        if records.len() >= count || Instant::now() > deadline {
            return records
                .iter()
                .rev()
                .map(|r| {
                    (
                        r["event"].as_str().unwrap().to_owned(),
                        r["owner"].as_str().unwrap().to_owned(),
                        r["fencing_token"].as_i64().unwrap(),
                    )
                })
                .collect();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn a_lock_grant_whose_waiter_hung_up_is_recorded_as_undone(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let held = server.acquire("job", "holder", 2);
    let holder = held.token();
    let expires_at_ms = timestamp_ms(&held.granted()["expires_at"]);
    let body = json!({"owner": "gone", "ttl_seconds": 60, "wait_seconds": 30});
    let waiter = post_unread(&server, "/locks/job", &body);
    hang_up_while_the_grant_is_written(&db, "distributed_locks", expires_at_ms, waiter);
    let steps = story_of(&server, "/locks/job/history", 4);
    let s = |event: &str, owner: &str, token: i64| (event.to_owned(), owner.to_owned(), token);
    assert_eq!(steps.len(), 4, "{steps:?}");
    let gone = steps[2].2;
    assert!(gone > holder, "{steps:?}");
    assert_eq!(
        steps,
        vec![
            s("granted", "holder", holder),
            s("expired", "holder", holder),
            s("granted", "gone", gone),
            s("undone", "gone", gone),
        ]
    );
    // Undone, not left to run for its 60 s: the lock is free, and the next grant is new.
    let free = server.status("job");
    assert_eq!(free.status, 404, "{free:?}");
    let next = server.acquire("job", "next", 30).token();
    assert!(next > gone);
}

fn a_permit_grant_whose_waiter_hung_up_is_recorded_as_undone(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let body = json!({"owner": "holder", "ttl_seconds": 2, "limit": 1});
    let held = ok(&server, "POST", "/semaphores/pool", body);
    let holder = held["permit"]["fencing_token"].as_i64().unwrap();
    let expires_at_ms = timestamp_ms(&held["permit"]["expires_at"]);
    let body = json!({"owner": "gone", "ttl_seconds": 60, "limit": 1, "wait_seconds": 30});
    let waiter = post_unread(&server, "/semaphores/pool", &body);
    hang_up_while_the_grant_is_written(&db, "semaphore_holders", expires_at_ms, waiter);
    let steps = story_of(&server, "/semaphores/pool/history", 4);
    let s = |event: &str, owner: &str, token: i64| (event.to_owned(), owner.to_owned(), token);
    assert_eq!(steps.len(), 4, "{steps:?}");
    let gone = steps.iter().find(|s| s.1 == "gone").expect("the grant").2;
    assert!(gone > holder, "{steps:?}");
    // (The holder's expiry and the waiter's grant are one commit, in either order.)
    assert_commits(
        &steps,
        &[
            &[s("granted", "holder", holder)],
            &[s("expired", "holder", holder), s("granted", "gone", gone)],
            &[s("undone", "gone", gone)],
        ],
    );
    let free = server.send("GET", "/semaphores/pool", None);
    assert_eq!(free.status, 404, "{free:?}");
    let body = json!({"owner": "next", "ttl_seconds": 30, "limit": 1});
    let next = ok(&server, "POST", "/semaphores/pool", body);
    assert_eq!(next["acquired"], true, "{next}");
}
