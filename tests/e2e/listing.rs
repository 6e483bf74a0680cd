//! `GET /locks` and `GET /metrics` through the real binary, on both backends: bytewise pages
//! followed by cursor, literal prefixes, expired locks left out, problems for bad queries, and
//! metrics that parse and move with the requests.

use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::Value;

use crate::server::TestServer;

/// Every byte but ASCII letters and digits as `%XX`, so that `%`, `_`, `\` and multibyte names
/// reach the server as written.
fn encode(raw: &str) -> String {
    raw.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn names(page: &Value) -> Vec<String> {
    page["locks"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {page}"))
        .iter()
        .map(|l| l["resource"].as_str().expect("resource").to_owned())
        .collect()
}

/// Pages through `/locks?prefix=…&limit=…` and returns every name, in the order served.
fn all_pages(server: &TestServer, prefix: &str, limit: u32) -> Vec<String> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut path = format!("/locks?prefix={}&limit={limit}", encode(prefix));
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let reply = server.send("GET", &path, None);
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(reply.content_type, "application/json");
        let page_names = names(&reply.body);
        assert!(page_names.len() <= limit as usize);
        seen.extend(page_names);
        match reply.body.get("next_cursor") {
            Some(next) => cursor = Some(next.as_str().expect("a string cursor").to_owned()),
            None => return seen,
        }
    }
    panic!("paging did not end")
}

fn listing_pages_bytewise_with_literal_prefixes(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let mut names_granted = vec![
        "job:b",
        "job:B",
        "job:a",
        "job:A",
        "job:é",
        "job:日本",
        "job:z",
        "job:100%",
        "job:100_",
        "job:1000",
        "job:a\\b",
        "job:a_b",
        "jobless",
        "other",
    ];
    for name in &names_granted {
        let reply = server.acquire(&encode(name), "lister", 60);
        assert_eq!(reply.granted()["resource"], *name);
    }
    let short = server.acquire("job:short", "lister", 1);
    assert_eq!(short.status, 200);
    names_granted.retain(|n| n.starts_with("job:"));
    names_granted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    std::thread::sleep(Duration::from_millis(1_200));

    // Pages of 3, then of 1000: the same names, bytewise, expired one left out.
    assert_eq!(all_pages(&server, "job:", 3), names_granted);
    assert_eq!(all_pages(&server, "job:", 1000), names_granted);
    assert_eq!(all_pages(&server, "job:100%", 10), ["job:100%"]);
    assert_eq!(all_pages(&server, "job:100_", 10), ["job:100_"]);
    assert_eq!(all_pages(&server, "job:a\\", 10), ["job:a\\b"]);
    assert_eq!(all_pages(&server, "job:a_", 10), ["job:a_b"]);
    assert_eq!(all_pages(&server, "job:é", 10), ["job:é"]);
    assert!(all_pages(&server, "job:%", 10).is_empty());

    let page = server.send("GET", "/locks?prefix=other", None);
    let lock = &page.body["locks"][0];
    assert_eq!(lock["owner"], "lister");
    assert!(lock["fencing_token"].as_i64().is_some_and(|t| t > 0));
    let remaining = lock["ttl_remaining_ms"].as_i64().expect("ttl_remaining_ms");
    assert!((50_000..=60_000).contains(&remaining), "{remaining}");
    assert!(page.body.get("next_cursor").is_none(), "{}", page.body);

    for (path, field, code) in [
        ("/locks?limit=0", "limit", "out_of_range"),
        ("/locks?limit=1001", "limit", "out_of_range"),
        ("/locks?limit=many", "limit", "invalid_type"),
        ("/locks?cursor=garbage!", "cursor", "invalid_cursor"),
        ("/locks?prefix=%0A", "prefix", "control_character"),
        ("/locks?sort=desc", "sort", "unknown_parameter"),
    ] {
        let reply = server.send("GET", path, None);
        reply.assert_problem(422, "validation-failed");
        assert_eq!(
            reply.error_codes(),
            [(field.to_owned(), code.to_owned())],
            "{path}"
        );
    }
}

/// The value of the sample `series` in a scrape, if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn scrape(server: &TestServer) -> String {
    let reply = server.send("GET", "/metrics", None);
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.content_type,
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = reply.body.as_str().expect("text").to_owned();
    for line in text.lines() {
        let ok = line.starts_with("# HELP lockd_")
            || line.starts_with("# TYPE lockd_")
            || (line.starts_with("lockd_")
                && line
                    .rsplit_once(' ')
                    .is_some_and(|(_, v)| v.parse::<f64>().is_ok() || v == "+Inf"));
        assert!(ok, "not an exposition line: {line:?}");
    }
    text
}

fn metrics_move_with_requests(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let granted = r#"lockd_acquire_total{outcome="granted"}"#;
    let posts =
        r#"lockd_http_requests_total{route="/locks/{resource}",method="POST",status="200"}"#;
    let before = scrape(&server);
    assert_eq!(sample(&before, granted), Some(0.0));
    assert!(sample(&before, r#"lockd_db_pool_connections{state="idle"}"#).is_some());

    server.acquire("metered-secret", "w", 60);
    server.acquire("metered-secret", "intruder", 60);
    server.release("metered-secret", "w");
    server.acquire("metered-secret", "w", 60);
    // A lease left to run out, then taken over by another owner: one expired takeover. The
    // released lock above, taken again, is none.
    server.acquire("let-expire", "sleepy", 1);
    std::thread::sleep(Duration::from_millis(1_100));
    server.acquire("let-expire", "next", 60);
    let after = scrape(&server);
    assert_eq!(sample(&after, granted), Some(4.0));
    assert_eq!(
        sample(&after, r#"lockd_acquire_total{outcome="held"}"#),
        Some(1.0)
    );
    assert_eq!(
        sample(&after, r#"lockd_release_total{result="released"}"#),
        Some(1.0)
    );
    assert_eq!(sample(&after, posts), Some(5.0));
    assert!(
        !after.contains("metered-secret"),
        "no resource name in the metrics"
    );

    // The live-lock count and the expired takeovers are read in the background every 5 s.
    let deadline = Instant::now() + Duration::from_secs(12);
    loop {
        let text = scrape(&server);
        if sample(&text, "lockd_live_locks") == Some(2.0)
            && sample(&text, "lockd_expired_takeovers_total") == Some(1.0)
        {
            assert!(sample(&text, "lockd_live_locks_age_seconds").is_some_and(|age| age < 6.0));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "lockd_live_locks never reached 2 with one expired takeover:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

on_both_backends!(
    listing_pages_bytewise_with_literal_prefixes,
    metrics_move_with_requests
);
