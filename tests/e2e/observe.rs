//! Observe streams through the real binary, on both backends: the current state first, then
//! every change in order (elections: a new leader, a proclaimed value, a vacancy after a resign
//! or an expiry; locks and semaphores: acquired, renewed, released, expired), ids that only grow,
//! a reconnect with `Last-Event-ID` that starts from the current state, the timing targets (this
//! server within 100 ms, another within 1 s, an expiry within 250 ms), keep-alive comments,
//! tenants apart, and bad requests refused.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{timestamp_ms, TestServer};

on_both_backends!(
    an_election_stream_shows_every_change_in_order_with_vacancies,
    a_change_on_another_instance_arrives_within_a_second,
    a_lock_stream_shows_acquired_renewed_released_and_expired,
    a_semaphore_stream_shows_each_grant,
    a_reconnect_with_last_event_id_starts_from_the_current_state,
    a_quiet_stream_sends_a_comment_every_15_seconds,
    observers_see_only_their_tenant_and_bad_requests_are_refused,
);

/// One event as the stream delivered it, and when it arrived.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: Option<u64>,
    pub event: String,
    pub data: Value,
    pub at: Instant,
}

/// A stream read by a thread: its events (and comments, as `event: ":"`), as they arrive.
pub struct Observer {
    events: mpsc::Receiver<Event>,
    pub content_type: String,
}

impl Observer {
    pub fn open(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .build();
        let mut request = agent.get(&server.url(path));
        for (name, value) in headers {
            request = request.set(name, value);
        }
        let response = request.call().expect("the stream opens");
        let content_type = response
            .header("content-type")
            .unwrap_or_default()
            .to_owned();
        let reader = BufReader::new(response.into_reader());
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut id, mut event, mut data) = (None, String::new(), String::new());
            for line in reader.lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("id: ") {
                    id = rest.parse().ok();
                } else if let Some(rest) = line.strip_prefix("event: ") {
                    event = rest.to_owned();
                } else if let Some(rest) = line.strip_prefix("data: ") {
                    data = rest.to_owned();
                } else if line.starts_with(':') {
                    let comment = Event {
                        id: None,
                        event: ":".to_owned(),
                        data: Value::String(line),
                        at: Instant::now(),
                    };
                    if tx.send(comment).is_err() {
                        return;
                    }
                } else if line.is_empty() && !(event.is_empty() && data.is_empty()) {
                    // An event without `event:` is a `message` (as a browser's EventSource has it).
                    if event.is_empty() {
                        event = "message".to_owned();
                    }
                    let parsed = Event {
                        id: id.take(),
                        event: std::mem::take(&mut event),
                        data: serde_json::from_str(&data).unwrap_or(Value::Null),
                        at: Instant::now(),
                    };
                    data.clear();
                    if tx.send(parsed).is_err() {
                        return;
                    }
                }
            }
        });
        Self {
            events,
            content_type,
        }
    }

    /// The next event (comments skipped), within `within`.
    pub fn next(&self, within: Duration) -> Event {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = self
                .events
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no event within {within:?}"));
            if event.event != ":" {
                return event;
            }
        }
    }

    /// The next line of any kind, comments included, within `within`.
    pub fn next_any(&self, within: Duration) -> Event {
        self.events
            .recv_timeout(within)
            .unwrap_or_else(|_| panic!("nothing within {within:?}"))
    }

    /// Asserts that no event (comments aside) arrives within `within`.
    pub fn quiet(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.events.recv_timeout(left) {
                Ok(event) if event.event == ":" => {}
                Ok(event) => panic!("unexpected event {event:?}"),
                Err(_) => return,
            }
        }
    }
}

const SOON: Duration = Duration::from_secs(3);

fn post(server: &TestServer, path: &str, body: Value) -> (Value, Instant) {
    let reply = server.send("POST", path, Some(&body));
    assert_eq!(reply.status, 200, "{path}: {reply:?}");
    (reply.body, Instant::now())
}

/// Asserts that `event` arrived within `bound` of `answered` (or before it).
fn within(event: &Event, answered: Instant, bound: Duration) {
    let late = event.at.saturating_duration_since(answered);
    assert!(
        late <= bound,
        "{} arrived {late:?} after the answer",
        event.event
    );
}

fn ids_grow(events: &[&Event]) {
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e.id.expect("every event has an id"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids {ids:?}");
}

fn an_election_stream_shows_every_change_in_order_with_vacancies(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let observer = Observer::open(&server, "/elections/scheduler/observe", &[]);
    assert_eq!(observer.content_type, "text/event-stream");
    let first = observer.next(SOON);
    assert_eq!(
        (first.event.as_str(), &first.data),
        ("vacant", &json!({"election": "scheduler"}))
    );

    let campaign = |candidate: &str, ttl: i64, value: Option<Value>| {
        let mut body = json!({"candidate": candidate, "ttl_seconds": ttl});
        if let Some(value) = value {
            body["value"] = value;
        }
        let (answer, at) = post(&server, "/elections/scheduler/campaign", body);
        assert_eq!(answer["elected"], true, "{answer}");
        (answer["leader"].clone(), at)
    };
    let (a, at) = campaign("a", 30, Some(json!({"address": "10.0.0.7"})));
    let elected = observer.next(SOON);
    within(&elected, at, Duration::from_millis(100));
    assert_eq!((elected.event.as_str(), &elected.data), ("leader", &a));

    let (proclaimed, at) = post(
        &server,
        "/elections/scheduler/proclaim",
        json!({"candidate": "a", "value": {"address": "10.0.0.8"}}),
    );
    let event = observer.next(SOON);
    within(&event, at, Duration::from_millis(100));
    assert_eq!((event.event.as_str(), &event.data), ("leader", &proclaimed));

    // A renewal and the leader campaigning again without a value are no change of leader.
    post(
        &server,
        "/elections/scheduler/renew",
        json!({"candidate": "a", "ttl_seconds": 30}),
    );
    campaign("a", 30, None);
    let resigned = server.send("DELETE", "/elections/scheduler/leader?candidate=a", None);
    assert_eq!(resigned.status, 204);
    let resigned_at = Instant::now();
    let vacant = observer.next(SOON);
    within(&vacant, resigned_at, Duration::from_millis(100));
    assert_eq!(
        (vacant.event.as_str(), &vacant.data),
        (
            "vacant",
            &json!({"election": "scheduler", "term": a["term"], "reason": "resigned"})
        )
    );

    let (b, at) = campaign("b", 1, None);
    let next = observer.next(SOON);
    within(&next, at, Duration::from_millis(100));
    assert_eq!((next.event.as_str(), &next.data), ("leader", &b));
    assert!(b["term"].as_i64() > a["term"].as_i64());
    // b stops renewing: the vacancy is reported within 250 ms of its expires_at.
    let expired = observer.next(SOON);
    assert_eq!(
        (expired.event.as_str(), &expired.data),
        (
            "vacant",
            &json!({"election": "scheduler", "term": b["term"], "reason": "expired"})
        )
    );
    let expires_at = timestamp_ms(&b["expires_at"]);
    let now_ms = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let late_ms = now_ms - expires_at - i64::try_from(expired.at.elapsed().as_millis()).unwrap();
    assert!(
        (0..=250).contains(&late_ms),
        "vacancy {late_ms} ms after expires_at"
    );
    ids_grow(&[&first, &elected, &event, &vacant, &next, &expired]);
    observer.quiet(Duration::from_millis(300));
}

fn a_change_on_another_instance_arrives_within_a_second(db: TestDatabase) {
    let here = TestServer::start(&db, &[]);
    let there = TestServer::start(&db, &[]);
    let election = Observer::open(&here, "/elections/x/observe", &[]);
    let lock = Observer::open(&here, "/locks/x/observe", &[]);
    assert_eq!(election.next(SOON).event, "vacant");
    assert_eq!(lock.next(SOON).event, "state");
    let (answer, at) = post(
        &there,
        "/elections/x/campaign",
        json!({"candidate": "a", "ttl_seconds": 30}),
    );
    let event = election.next(SOON);
    within(&event, at, Duration::from_secs(1));
    assert_eq!(
        (event.event.as_str(), &event.data),
        ("leader", &answer["leader"])
    );
    let (answer, at) = post(&there, "/locks/x", json!({"owner": "o", "ttl_seconds": 30}));
    let event = lock.next(SOON);
    within(&event, at, Duration::from_secs(1));
    assert_eq!(
        (event.event.as_str(), &event.data),
        ("acquired", &answer["lock"])
    );
    assert_eq!(
        there
            .send("DELETE", "/elections/x/leader?candidate=a", None)
            .status,
        204
    );
    let at = Instant::now();
    let event = election.next(SOON);
    within(&event, at, Duration::from_secs(1));
    assert_eq!(event.event, "vacant");
    assert_eq!(event.data["reason"], "resigned");
}

fn a_lock_stream_shows_acquired_renewed_released_and_expired(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let (held, _) = post(
        &server,
        "/locks/doc",
        json!({"owner": "w", "ttl_seconds": 30}),
    );
    let observer = Observer::open(&server, "/locks/doc/observe", &[]);
    let first = observer.next(SOON);
    assert_eq!(
        (first.event.as_str(), &first.data),
        (
            "state",
            &json!({"resource": "doc", "holders": [held["lock"]]})
        )
    );
    let (renewed, _) = post(
        &server,
        "/locks/doc/renew",
        json!({"owner": "w", "ttl_seconds": 60}),
    );
    let event = observer.next(SOON);
    assert_eq!((event.event.as_str(), &event.data), ("renewed", &renewed));
    assert_eq!(server.release("doc", "w").status, 204);
    let event = observer.next(SOON);
    assert_eq!((event.event.as_str(), &event.data), ("released", &renewed));
    // Two readers, each its own lease.
    let read = |owner: &str, ttl: i64| {
        post(
            &server,
            "/locks/doc",
            json!({"owner": owner, "ttl_seconds": ttl, "mode": "shared"}),
        )
        .0["lock"]
            .clone()
    };
    let (r1, r2) = (read("r1", 30), read("r2", 1));
    let (e1, e2) = (observer.next(SOON), observer.next(SOON));
    assert_eq!((e1.event.as_str(), &e1.data), ("acquired", &r1));
    assert_eq!((e2.event.as_str(), &e2.data), ("acquired", &r2));
    let expired = observer.next(SOON);
    assert_eq!((expired.event.as_str(), &expired.data), ("expired", &r2));
    assert_eq!(server.release("doc", "r1").status, 204);
    assert_eq!(observer.next(SOON).event, "released");
    observer.quiet(Duration::from_millis(300));
}

fn a_semaphore_stream_shows_each_grant(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let observer = Observer::open(&server, "/semaphores/exports/observe", &[]);
    let first = observer.next(SOON);
    assert_eq!(
        (first.event.as_str(), &first.data),
        ("state", &json!({"name": "exports", "holders": []}))
    );
    let take = |owner: &str| {
        post(
            &server,
            "/semaphores/exports",
            json!({"owner": owner, "ttl_seconds": 30, "limit": 2}),
        )
        .0["permit"]
            .clone()
    };
    let (a, b) = (take("a"), take("b"));
    assert_eq!(observer.next(SOON).data, a);
    assert_eq!(observer.next(SOON).data, b);
    let released = server.send("DELETE", "/semaphores/exports?owner=a", None);
    assert_eq!(released.status, 204);
    let event = observer.next(SOON);
    assert_eq!((event.event.as_str(), &event.data), ("released", &a));
}

fn a_reconnect_with_last_event_id_starts_from_the_current_state(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let first = Observer::open(&server, "/elections/x/observe", &[]);
    first.next(SOON);
    let (answer, _) = post(
        &server,
        "/elections/x/campaign",
        json!({"candidate": "a", "ttl_seconds": 30}),
    );
    let seen = first.next(SOON);
    drop(first);
    let last = seen.id.unwrap().to_string();
    let again = Observer::open(&server, "/elections/x/observe", &[("last-event-id", &last)]);
    let state = again.next(SOON);
    assert_eq!(
        (state.event.as_str(), &state.data),
        ("leader", &answer["leader"])
    );
    assert!(
        state.id.unwrap() > seen.id.unwrap(),
        "ids keep growing across a reconnect"
    );
    // A Last-Event-ID from the future (another server's clock, say) is still exceeded.
    let ahead = (seen.id.unwrap() + 1_000_000_000).to_string();
    let later = Observer::open(
        &server,
        "/elections/x/observe",
        &[("last-event-id", &ahead)],
    );
    assert!(later.next(SOON).id.unwrap() > seen.id.unwrap() + 1_000_000_000);
}

fn a_quiet_stream_sends_a_comment_every_15_seconds(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let observer = Observer::open(&server, "/locks/quiet/observe", &[]);
    let opened = observer.next(SOON).at;
    let comment = observer.next_any(Duration::from_secs(17));
    assert_eq!(comment.event, ":", "{comment:?}");
    let after = comment.at.duration_since(opened);
    assert!(after >= Duration::from_secs(14), "{after:?}");
}

fn observers_see_only_their_tenant_and_bad_requests_are_refused(db: TestDatabase) {
    const ACME: &str = "acme-observe-key-0123456789";
    const GLOBEX: &str = "globex-observe-key-9876543210";
    let (server, _keys) =
        crate::tenants::start_with_keys(&db, &[("acme", ACME, false), ("globex", GLOBEX, false)]);
    let bearer = |key: &str| format!("Bearer {key}");
    let acme = Observer::open(
        &server,
        "/locks/x/observe",
        &[("authorization", &bearer(ACME))],
    );
    assert_eq!(acme.next(SOON).event, "state");
    let granted = server.send_with_header(
        "POST",
        "/locks/x",
        Some(&json!({"owner": "g", "ttl_seconds": 30})),
        ("authorization", &bearer(GLOBEX)),
    );
    assert_eq!(granted.body["acquired"], true);
    acme.quiet(Duration::from_millis(600));
    server
        .send("GET", "/locks/x/observe", None)
        .assert_problem(401, "unauthorized");
    let as_acme = |method: &str, path: &str| {
        server.send_with_header(method, path, None, ("authorization", &bearer(ACME)))
    };
    as_acme("GET", "/elections/%00/observe").assert_problem(422, "validation-failed");
    as_acme("GET", "/semaphores/%FF/observe").assert_problem(422, "validation-failed");
    let post = as_acme("POST", "/locks/x/observe");
    post.assert_problem(405, "method-not-allowed");
    assert_eq!(post.header("allow"), Some("GET"));
}
