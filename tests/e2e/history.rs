//! Durable history and the tenant's event stream through the real binary, on both backends:
//! every change of every primitive recorded in order and paged by cursor; the stream live, across
//! instances within a second, resumed with `Last-Event-ID`; 10,000 changes through a consumer
//! that disconnects at random arrive exactly once and in order; `--history-retention-hours 0`
//! records nothing; and an expiry an observer saw is in the history at once (not at the next
//! grant or sweep), once. The `history_*` modules beside it hold the rest: paging one name,
//! every lifecycle of shared locks and semaphores, an undone grant, a sweep's expiry, filtered
//! streams, and tenants apart.

use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::observe::Observer;
use crate::server::TestServer;

on_both_backends!(
    every_change_of_every_primitive_is_recorded_in_order,
    the_tenant_history_pages_by_cursor_prefix_and_time,
    the_stream_is_live_across_instances_and_resumes_after_the_last_id,
    a_consumer_that_disconnects_at_random_gets_every_change_once_in_order,
    without_retention_nothing_is_recorded,
    an_expiry_an_observer_saw_is_recorded_at_once,
    many_observed_locks_running_out_together_each_record_one_expiry,
);

pub(crate) const SOON: Duration = Duration::from_secs(5);

pub(crate) fn ok(server: &TestServer, method: &str, path: &str, body: Value) -> Value {
    let reply = server.send(method, path, Some(&body));
    assert!(reply.status < 300, "{method} {path}: {reply:?}");
    reply.body
}

/// `(event, owner, fencing_token)` of each record of a page, oldest first.
pub(crate) fn story(page: &Value) -> Vec<(String, String, i64)> {
    let mut records: Vec<(String, String, i64)> = page["records"]
        .as_array()
        .unwrap_or_else(|| panic!("records: {page}"))
        .iter()
        .map(|r| {
            (
                r["event"].as_str().unwrap().to_owned(),
                r["owner"].as_str().unwrap().to_owned(),
                r["fencing_token"].as_i64().unwrap(),
            )
        })
        .collect();
    records.reverse();
    records
}

pub(crate) fn history(server: &TestServer, path: &str) -> Value {
    let reply = server.send("GET", path, None);
    assert_eq!(reply.status, 200, "{path}: {reply:?}");
    reply.body
}

pub(crate) fn step(event: &str, owner: &str, token: i64) -> (String, String, i64) {
    (event.to_owned(), owner.to_owned(), token)
}

fn every_change_of_every_primitive_is_recorded_in_order(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = server.acquire("pay", "alice", 30).token();
    server.renew("pay", "alice", 40);
    server.release("pay", "alice");
    let bob = server.acquire("pay", "bob", 1).token();
    std::thread::sleep(Duration::from_millis(1_100));
    let carol = server.acquire("pay", "carol", 30).token();
    assert_eq!(
        story(&history(&server, "/locks/pay/history")),
        vec![
            step("granted", "alice", first),
            step("renewed", "alice", first),
            step("released", "alice", first),
            step("granted", "bob", bob),
            step("expired", "bob", bob),
            step("granted", "carol", carol),
        ]
    );
    // A reader of a shared lock, a semaphore's grant, an election's terms.
    let read = ok(
        &server,
        "POST",
        "/locks/doc",
        json!({"owner": "r1", "ttl_seconds": 30, "mode": "shared"}),
    );
    let page = history(&server, "/locks/doc/history");
    assert_eq!(page["records"][0]["shared"], true, "{page}");
    assert_eq!(
        page["records"][0]["fencing_token"],
        read["lock"]["fencing_token"]
    );
    let permit = ok(
        &server,
        "POST",
        "/semaphores/pool",
        json!({"owner": "w1", "ttl_seconds": 30, "limit": 2}),
    );
    let page = history(&server, "/semaphores/pool/history");
    assert_eq!(page["records"][0]["kind"], "semaphore");
    assert_eq!(
        page["records"][0]["fencing_token"],
        permit["permit"]["fencing_token"]
    );
    let led = ok(
        &server,
        "POST",
        "/elections/sched/campaign",
        json!({"candidate": "n1", "ttl_seconds": 30}),
    );
    assert_eq!(
        server
            .send("DELETE", "/elections/sched/leader?candidate=n1", None)
            .status,
        204
    );
    let term = led["leader"]["term"].as_i64().unwrap();
    let page = history(&server, "/elections/sched/history");
    assert_eq!(
        story(&page),
        vec![step("granted", "n1", term), step("released", "n1", term)]
    );
    assert_eq!(page["records"][0]["kind"], "election");
    // Names of different kinds are apart: the lock `sched` has no history.
    assert_eq!(
        history(&server, "/locks/sched/history")["records"],
        json!([])
    );
}

fn the_tenant_history_pages_by_cursor_prefix_and_time(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    for i in 0..5 {
        server.acquire(&format!("job:{i}"), "w", 30);
    }
    server.acquire("other", "w", 30);
    let mut ids = vec![];
    let mut path = "/history?prefix=job%3A&limit=2".to_owned();
    loop {
        let page = history(&server, &path);
        let records = page["records"].as_array().unwrap();
        assert!(records.len() <= 2);
        ids.extend(records.iter().map(|r| r["id"].as_i64().unwrap()));
        assert!(records
            .iter()
            .all(|r| r["name"].as_str().unwrap().starts_with("job:")));
        match page.get("next_cursor") {
            Some(cursor) => {
                path = format!(
                    "/history?prefix=job%3A&limit=2&cursor={}",
                    cursor.as_str().unwrap()
                )
            }
            None => break,
        }
    }
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    let all = history(&server, "/history");
    assert_eq!(all["records"].as_array().unwrap().len(), 6);
    let newest = all["records"][0]["at"].as_str().unwrap().to_owned();
    let since = history(
        &server,
        &format!("/history?since={}", newest.replace('+', "%2B")),
    );
    assert!(!since["records"].as_array().unwrap().is_empty());
    assert!(since["records"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["at"].as_str().unwrap() >= newest.as_str()));
    assert_eq!(
        history(&server, "/history?since=2999-01-01T00:00:00Z")["records"],
        json!([])
    );
}

fn the_stream_is_live_across_instances_and_resumes_after_the_last_id(db: TestDatabase) {
    let here = TestServer::start(&db, &[]);
    let there = TestServer::start(&db, &[]);
    let stream = Observer::open(&here, "/events?kinds=lock", &[]);
    assert_eq!(stream.content_type, "text/event-stream");
    // Give the stream's task its first read before the change (it passes on what follows).
    std::thread::sleep(Duration::from_millis(300));
    there.acquire("x", "a", 30);
    let answered = Instant::now();
    let granted = stream.next(SOON);
    assert!(
        granted.at.saturating_duration_since(answered) <= Duration::from_secs(1),
        "arrived {:?} after the answer",
        granted.at.saturating_duration_since(answered)
    );
    assert_eq!(granted.data["event"], "granted");
    assert_eq!(granted.data["name"], "x");
    assert_eq!(granted.id, granted.data["id"].as_u64());
    // Semaphores are not asked for.
    ok(
        &there,
        "POST",
        "/semaphores/s",
        json!({"owner": "a", "ttl_seconds": 30, "limit": 1}),
    );
    there.release("x", "a");
    let released = stream.next(SOON);
    assert_eq!(released.data["event"], "released");
    assert!(released.id > granted.id);
    drop(stream);
    // Reconnecting after the grant gives the release (and nothing before it), then live ones.
    let last = granted.id.unwrap().to_string();
    let again = Observer::open(&here, "/events", &[("last-event-id", &last)]);
    let semaphore = again.next(SOON);
    assert_eq!(semaphore.data["kind"], "semaphore");
    assert_eq!(again.next(SOON).id, released.id);
    here.acquire("y", "b", 30);
    assert_eq!(again.next(SOON).data["name"], "y");
    // From 0: every record kept.
    let all = Observer::open(&here, "/events", &[("last-event-id", "0")]);
    assert_eq!(all.next(SOON).id, granted.id);
}

fn a_consumer_that_disconnects_at_random_gets_every_change_once_in_order(db: TestDatabase) {
    const CHANGES: usize = 10_000;
    const SET: usize = 50;
    let here = TestServer::start(&db, &[]);
    let there = TestServer::start(&db, &[]);
    let writer = {
        let base = there.url("");
        std::thread::spawn(move || {
            let client = crate::server::Client::new(&base);
            let names: Vec<String> = (0..SET).map(|i| format!("r{i}")).collect();
            let locks: Vec<Value> = names.iter().map(|r| json!({"resource": r})).collect();
            for _ in 0..CHANGES / (2 * SET) {
                let body = json!({"owner": "w", "ttl_seconds": 30, "locks": locks});
                let granted = client.send("POST", "/locks", Some(&body)).expect("answers");
                assert_eq!(granted.body["acquired"], true, "{granted:?}");
                let body = json!({"owner": "w", "resources": names});
                let released = client
                    .send("DELETE", "/locks", Some(&body))
                    .expect("answers");
                assert_eq!(released.status, 200, "{released:?}");
            }
        })
    };
    let mut seen: Vec<u64> = Vec::with_capacity(CHANGES);
    let mut state = 0x9e37_79b9_u64;
    while seen.len() < CHANGES {
        let last = seen.last().copied().unwrap_or(0).to_string();
        let stream = Observer::open(&here, "/events", &[("last-event-id", &last)]);
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for _ in 0..1 + state % 1_500 {
            if seen.len() == CHANGES {
                break;
            }
            let event = stream.next(Duration::from_secs(20));
            seen.push(event.id.expect("every event has an id"));
        }
    }
    writer.join().expect("the writer");
    let mut all: Vec<u64> = vec![];
    let mut path = "/history?limit=1000".to_owned();
    loop {
        let page = history(&here, &path);
        all.extend(
            page["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_u64().unwrap()),
        );
        match page.get("next_cursor") {
            Some(cursor) => {
                path = format!("/history?limit=1000&cursor={}", cursor.as_str().unwrap())
            }
            None => break,
        }
    }
    all.reverse();
    assert_eq!(all.len(), CHANGES);
    assert_eq!(seen, all, "exactly the changes, in order");
}

fn without_retention_nothing_is_recorded(db: TestDatabase) {
    let server = TestServer::start(&db, &["--history-retention-hours", "0"]);
    server.acquire("x", "a", 30);
    server.release("x", "a");
    assert_eq!(history(&server, "/history")["records"], json!([]));
}

fn an_expiry_an_observer_saw_is_recorded_at_once(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let lock = Observer::open(&server, "/locks/job/observe", &[]);
    let election = Observer::open(&server, "/elections/leader/observe", &[]);
    let token = server.acquire("job", "w1", 1).token();
    let term = ok(
        &server,
        "POST",
        "/elections/leader/campaign",
        json!({"candidate": "c1", "ttl_seconds": 1}),
    );
    let term = term["leader"]["term"].as_i64().unwrap();
    // Both run out about a second from now; their observers see it, and so does the history,
    // long before the sweeper (a minute after the end) or another grant.
    let deadline = Instant::now() + SOON;
    for (stream, path, owner, token) in [
        (&lock, "/locks/job/history", "w1", token),
        (&election, "/elections/leader/history", "c1", term),
    ] {
        loop {
            // A lock's `expired`, an election's `vacant` with the reason `expired`.
            let event = stream.next_any(SOON);
            if event.event == "expired" || event.data["reason"] == "expired" {
                break;
            }
        }
        loop {
            let steps = story(&history(&server, path));
            if steps == vec![step("granted", owner, token), step("expired", owner, token)] {
                break;
            }
            assert!(Instant::now() < deadline, "{path}: {steps:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // The next holder's grant records no second expiry.
    let next_token = server.acquire("job", "w2", 30).token();
    assert!(next_token > token);
    assert_eq!(
        story(&history(&server, "/locks/job/history")),
        vec![
            step("granted", "w1", token),
            step("expired", "w1", token),
            step("granted", "w2", next_token),
        ]
    );
}

fn many_observed_locks_running_out_together_each_record_one_expiry(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let names: Vec<String> = (0..40).map(|i| format!("crashed-{i}")).collect();
    let _observers: Vec<Observer> = names
        .iter()
        .map(|name| Observer::open(&server, &format!("/locks/{name}/observe"), &[]))
        .collect();
    // One client's locks, all of a second: it crashed, and they run out within a few ms.
    let tokens: Vec<i64> = names
        .iter()
        .map(|name| server.acquire(name, "crashed-client", 1).token())
        .collect();
    let deadline = Instant::now() + SOON;
    for (name, token) in names.iter().zip(tokens) {
        let path = format!("/locks/{name}/history");
        loop {
            let steps = story(&history(&server, &path));
            let expected = vec![
                step("granted", "crashed-client", token),
                step("expired", "crashed-client", token),
            ];
            if steps == expected {
                break;
            }
            assert!(
                steps.len() < 2 || steps[..2] == expected[..steps.len().min(2)],
                "{path}: {steps:?}"
            );
            assert!(Instant::now() < deadline, "{path}: {steps:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
