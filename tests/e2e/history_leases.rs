//! Every step of a lease's life in the history, on both backends, for the leases with more than
//! one holder: a shared lock's readers and a semaphore's permits granted, re-granted, renewed,
//! released and expired (at a takeover by another owner, and by the same owner acquiring after
//! its own lease ran out), each record with its owner, fencing token, kind and `shared`; and an
//! exclusive lock re-granted to its holder, keeping its token.
//!
//! The records one commit writes (an expiry and the grant that took the lease's place) are
//! checked as a group: PostgreSQL records a semaphore's new grant before the expiry it
//! replaced, SQLite after.

use std::fmt::Debug;
use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::history::{history, ok};
use crate::server::TestServer;

on_both_backends!(
    a_shared_lock_s_readers_and_writer_each_have_their_whole_story,
    a_semaphore_s_permits_each_have_their_whole_story,
    an_exclusive_holder_acquiring_again_is_re_granted_with_its_token,
    a_writer_taking_over_from_expired_readers_records_their_expiry_first,
);

/// `(event, owner, fencing_token)` of a record.
type Step = (String, String, i64);

/// Each record of `path` as its step and `shared`, oldest first, after checking that every
/// record is of `kind`, names `name` and has no `reason`.
fn steps(server: &TestServer, path: &str, kind: &str, name: &str) -> Vec<(Step, bool)> {
    let page = history(server, path);
    assert!(page.get("next_cursor").is_none(), "{path}: {page}");
    let mut records: Vec<(Step, bool)> = page["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["kind"], kind, "{path}: {r}");
            assert_eq!(r["name"], name, "{path}: {r}");
            assert!(r.get("reason").is_none(), "{path}: {r}");
            let step = (
                r["event"].as_str().unwrap().to_owned(),
                r["owner"].as_str().unwrap().to_owned(),
                r["fencing_token"].as_i64().unwrap(),
            );
            (step, r["shared"].as_bool().unwrap())
        })
        .collect();
    records.reverse();
    records
}

fn at(event: &str, owner: &str, token: i64, shared: bool) -> (Step, bool) {
    ((event.to_owned(), owner.to_owned(), token), shared)
}

/// Asserts that `got` is the records of `commits`, one commit after another, the records of one
/// commit next to each other in any order.
pub(crate) fn assert_commits<T: PartialEq + Debug>(got: &[T], commits: &[&[T]]) {
    let count: usize = commits.iter().map(|c| c.len()).sum();
    assert_eq!(got.len(), count, "{got:#?}\nexpected {commits:#?}");
    let mut at = 0;
    for commit in commits {
        let written = &got[at..at + commit.len()];
        let same = commit.iter().all(|record| {
            let times = |of: &[T]| of.iter().filter(|r| *r == record).count();
            times(written) == times(commit)
        });
        assert!(same, "{got:#?}\nexpected {commits:#?}");
        at += commit.len();
    }
}

fn granted_token(reply: &Value, member: &str) -> i64 {
    reply[member]["fencing_token"]
        .as_i64()
        .unwrap_or_else(|| panic!("no {member}: {reply}"))
}

/// A shared acquire of `doc`: its token.
fn read(server: &TestServer, owner: &str, ttl: i64) -> i64 {
    let body = json!({"owner": owner, "ttl_seconds": ttl, "mode": "shared"});
    let reply = ok(server, "POST", "/locks/doc", body);
    assert_eq!(reply["acquired"], true, "{reply}");
    granted_token(&reply, "lock")
}

fn a_shared_lock_s_readers_and_writer_each_have_their_whole_story(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let r1 = read(&server, "r1", 30);
    // The reader acquiring again keeps its token: a re-grant, not a new lease.
    assert_eq!(read(&server, "r1", 30), r1);
    let body = json!({"owner": "r1", "ttl_seconds": 40});
    ok(&server, "POST", "/locks/doc/renew", body);
    let r2 = read(&server, "r2", 1);
    assert!(r2 > r1);
    assert_eq!(server.release("doc", "r1").status, 204);
    // r2's lease runs out; another reader takes the lock over: r2's expiry is recorded then.
    std::thread::sleep(Duration::from_millis(1_200));
    let r3 = read(&server, "r3", 30);
    assert_eq!(server.release("doc", "r3").status, 204);
    // A writer, granted again while it holds the lock.
    let w = server.acquire("doc", "w", 30).token();
    assert_eq!(server.acquire("doc", "w", 30).token(), w);
    assert_eq!(server.release("doc", "w").status, 204);
    // A reader whose own lease ran out acquires again: a new lease, its old one expired.
    let r4 = read(&server, "r4", 1);
    std::thread::sleep(Duration::from_millis(1_200));
    let r4_again = read(&server, "r4", 30);
    assert!(r2 < r3 && r3 < w && w < r4 && r4 < r4_again);
    assert_commits(
        &steps(&server, "/locks/doc/history", "lock", "doc"),
        &[
            &[at("granted", "r1", r1, true)],
            &[at("re-granted", "r1", r1, true)],
            &[at("renewed", "r1", r1, true)],
            &[at("granted", "r2", r2, true)],
            &[at("released", "r1", r1, true)],
            &[at("expired", "r2", r2, true), at("granted", "r3", r3, true)],
            &[at("released", "r3", r3, true)],
            &[at("granted", "w", w, false)],
            &[at("re-granted", "w", w, false)],
            &[at("released", "w", w, false)],
            &[at("granted", "r4", r4, true)],
            &[
                at("expired", "r4", r4, true),
                at("granted", "r4", r4_again, true),
            ],
        ],
    );
}

/// A writer taking the lock over from readers whose leases ran out: their expiries are recorded
/// with the writer's grant and before it (not by a sweep a minute after it); and a reader that
/// ran out while another released is recorded at that release, before the next writer's grant.
fn a_writer_taking_over_from_expired_readers_records_their_expiry_first(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let r1 = read(&server, "r1", 1);
    let r2 = read(&server, "r2", 1);
    std::thread::sleep(Duration::from_millis(1_200));
    let w = server.acquire("doc", "w", 30).token();
    assert_eq!(
        steps(&server, "/locks/doc/history", "lock", "doc")[2..],
        [
            at("expired", "r1", r1, true),
            at("expired", "r2", r2, true),
            at("granted", "w", w, false),
        ]
    );
    assert_eq!(server.release("doc", "w").status, 204);
    // r3 runs out while r4 still reads; r4's release ends r3's lease too.
    let r3 = read(&server, "r3", 1);
    let r4 = read(&server, "r4", 30);
    std::thread::sleep(Duration::from_millis(1_200));
    let path = "/locks/doc?owner=r4";
    assert_eq!(server.send("DELETE", path, None).status, 204);
    let w2 = server.acquire("doc", "w2", 30).token();
    let all = steps(&server, "/locks/doc/history", "lock", "doc");
    assert_commits(
        &all[6..],
        &[
            &[at("granted", "r3", r3, true)],
            &[at("granted", "r4", r4, true)],
            &[
                at("expired", "r3", r3, true),
                at("released", "r4", r4, true),
            ],
            &[at("granted", "w2", w2, false)],
        ],
    );
}

fn a_semaphore_s_permits_each_have_their_whole_story(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let take = |owner: &str, ttl: i64| {
        let body = json!({"owner": owner, "ttl_seconds": ttl, "limit": 2});
        let reply = ok(&server, "POST", "/semaphores/pool", body);
        assert_eq!(reply["acquired"], true, "{reply}");
        granted_token(&reply, "permit")
    };
    let a = take("a", 30);
    assert_eq!(take("a", 30), a, "a re-grant keeps the token");
    let body = json!({"owner": "a", "ttl_seconds": 40});
    ok(&server, "POST", "/semaphores/pool/renew", body);
    let b = take("b", 1);
    let release = |owner: &str| {
        let path = format!("/semaphores/pool?owner={owner}");
        assert_eq!(server.send("DELETE", &path, None).status, 204);
    };
    release("a");
    // b's permit runs out; c's grant (another owner) deletes it and records its expiry.
    std::thread::sleep(Duration::from_millis(1_200));
    let c = take("c", 30);
    release("c");
    // d's permit runs out and d acquires again: a new grant, the old one expired.
    let d = take("d", 1);
    std::thread::sleep(Duration::from_millis(1_200));
    let d_again = take("d", 30);
    assert!(a < b && b < c && c < d && d < d_again);
    assert_commits(
        &steps(&server, "/semaphores/pool/history", "semaphore", "pool"),
        &[
            &[at("granted", "a", a, false)],
            &[at("re-granted", "a", a, false)],
            &[at("renewed", "a", a, false)],
            &[at("granted", "b", b, false)],
            &[at("released", "a", a, false)],
            // An ended grant's expiry comes before the grant that replaces it.
            &[at("expired", "b", b, false)],
            &[at("granted", "c", c, false)],
            &[at("released", "c", c, false)],
            &[at("granted", "d", d, false)],
            &[at("expired", "d", d, false)],
            &[at("granted", "d", d_again, false)],
        ],
    );
}

fn an_exclusive_holder_acquiring_again_is_re_granted_with_its_token(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = server.acquire("job", "w", 30).token();
    let again = server.acquire("job", "w", 60);
    assert_eq!(again.token(), first);
    assert_eq!(server.release("job", "w").status, 204);
    // After a release the same owner gets a new lease, not a re-grant.
    let next = server.acquire("job", "w", 30).token();
    assert!(next > first);
    assert_eq!(
        steps(&server, "/locks/job/history", "lock", "job"),
        vec![
            at("granted", "w", first, false),
            at("re-granted", "w", first, false),
            at("released", "w", first, false),
            at("granted", "w", next, false),
        ]
    );
}
