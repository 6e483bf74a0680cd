//! The event stream filtered by `prefix` and by several `kinds`, on both backends: the matching
//! records arrive, in order and with the ids the unfiltered stream gives them; the others (a
//! kind not asked for, a name outside the prefix, another case) never do, live or replayed from
//! `Last-Event-ID: 0`, and the stream is still open after the quiet.

use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::history::{ok, SOON};
use crate::observe::{Event, Observer};
use crate::server::TestServer;

on_both_backends!(a_stream_filtered_by_prefix_and_kinds_gets_exactly_the_matching_records);

const QUIET: Duration = Duration::from_millis(800);

/// `(kind, name, event)` of a record as the stream gave it.
fn said(event: &Event) -> (String, String, String) {
    let text = |key: &str| {
        event.data[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {event:?}"))
            .to_owned()
    };
    assert_eq!(event.id, event.data["id"].as_u64(), "{event:?}");
    (text("kind"), text("name"), text("event"))
}

fn take(stream: &Observer, count: usize) -> Vec<Event> {
    (0..count).map(|_| stream.next(SOON)).collect()
}

fn record(kind: &str, name: &str, event: &str) -> (String, String, String) {
    (kind.to_owned(), name.to_owned(), event.to_owned())
}

fn a_stream_filtered_by_prefix_and_kinds_gets_exactly_the_matching_records(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    const FILTERED: &str = "/events?prefix=job%3A&kinds=lock,semaphore";
    let filtered = Observer::open(&server, FILTERED, &[]);
    let elections = Observer::open(&server, "/events?prefix=job%3A&kinds=election", &[]);
    let everything = Observer::open(&server, "/events", &[]);
    // Give the streams their first read before the changes.
    std::thread::sleep(Duration::from_millis(300));
    let lock = |name: &str, owner: &str| server.acquire(name, owner, 30).granted().clone();
    let permit = |name: &str| {
        let body = json!({"owner": "p", "ttl_seconds": 30, "limit": 2});
        ok(&server, "POST", &format!("/semaphores/{name}"), body)
    };
    lock("job:1", "a");
    let campaign = json!({"candidate": "c", "ttl_seconds": 30});
    ok(&server, "POST", "/elections/job:2/campaign", campaign);
    lock("other", "a");
    permit("job:3");
    permit("jo");
    lock("JOB:4", "a");
    let read = json!({"owner": "r", "ttl_seconds": 30, "mode": "shared"});
    ok(&server, "POST", "/locks/job:5", read);
    permit("xjob:6");
    assert_eq!(server.release("job:1", "a").status, 204);
    let resign = server.send("DELETE", "/elections/job:2/leader?candidate=c", None);
    assert_eq!(resign.status, 204);
    let released = server.send("DELETE", "/semaphores/job:3?owner=p", None);
    assert_eq!(released.status, 204);

    let all = take(&everything, 11);
    let matching = [
        record("lock", "job:1", "granted"),
        record("semaphore", "job:3", "granted"),
        record("lock", "job:5", "granted"),
        record("lock", "job:1", "released"),
        record("semaphore", "job:3", "released"),
    ];
    let of_elections = [
        record("election", "job:2", "granted"),
        record("election", "job:2", "released"),
    ];
    // Each filtered stream is the unfiltered one's matching records, with the same ids.
    for (stream, expected) in [(&filtered, &matching[..]), (&elections, &of_elections[..])] {
        let got = take(stream, expected.len());
        assert_eq!(got.iter().map(said).collect::<Vec<_>>(), expected);
        let ids: Vec<Option<u64>> = got.iter().map(|e| e.id).collect();
        let same: Vec<Option<u64>> = all
            .iter()
            .filter(|e| expected.contains(&said(e)))
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, same);
        stream.quiet(QUIET);
    }
    // The quiet streams are open: the next matching change arrives, and nothing before it.
    lock("job:7", "a");
    assert_eq!(
        said(&filtered.next(SOON)),
        record("lock", "job:7", "granted")
    );
    let campaign = json!({"candidate": "c", "ttl_seconds": 30});
    ok(&server, "POST", "/elections/job:8/campaign", campaign);
    assert_eq!(
        said(&elections.next(SOON)),
        record("election", "job:8", "granted")
    );
    filtered.quiet(QUIET);
    // Replayed from the oldest record, the filter holds as well.
    let replay = Observer::open(&server, FILTERED, &[("last-event-id", "0")]);
    let replayed: Vec<_> = take(&replay, 6).iter().map(said).collect();
    let mut expected = matching.to_vec();
    expected.push(record("lock", "job:7", "granted"));
    assert_eq!(replayed, expected);
    replay.quiet(QUIET);
    let other_two = "/events?prefix=job%3A&kinds=election,semaphore";
    let replay = Observer::open(&server, other_two, &[("last-event-id", "0")]);
    let replayed: Vec<_> = take(&replay, 5).iter().map(said).collect();
    assert_eq!(
        replayed,
        [
            record("election", "job:2", "granted"),
            record("semaphore", "job:3", "granted"),
            record("election", "job:2", "released"),
            record("semaphore", "job:3", "released"),
            record("election", "job:8", "granted"),
        ]
    );
    replay.quiet(QUIET);
    permit("job:9");
    assert_eq!(
        said(&replay.next(SOON)),
        record("semaphore", "job:9", "granted")
    );
}
