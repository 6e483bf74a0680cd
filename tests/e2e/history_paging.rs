//! One name's history paged by cursor, on both backends: a lock's, a semaphore's and an
//! election's records followed two at a time through `next_cursor` are every record once,
//! newest first, the same as one big page; names of other kinds and other names stay out.

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::history::{history, ok};
use crate::server::TestServer;

on_both_backends!(one_name_s_history_pages_by_cursor_for_every_kind);

/// The pages of `path` (which has no query yet) with `limit`, followed through `next_cursor`
/// until it is absent: each page's records, newest first.
pub(crate) fn pages(server: &TestServer, path: &str, limit: usize) -> Vec<Vec<Value>> {
    let mut pages = vec![];
    let mut next = format!("{path}?limit={limit}");
    loop {
        let page = history(server, &next);
        let records = page["records"]
            .as_array()
            .unwrap_or_else(|| panic!("{next}: {page}"))
            .clone();
        assert!(records.len() <= limit, "{next}: {page}");
        pages.push(records);
        match page.get("next_cursor") {
            Some(cursor) => {
                let cursor = cursor.as_str().unwrap_or_else(|| panic!("{page}"));
                next = format!("{path}?limit={limit}&cursor={cursor}");
            }
            None => return pages,
        }
        assert!(pages.len() < 1_000, "{path}: the cursor never ends");
    }
}

fn ids(records: &[Value]) -> Vec<i64> {
    records.iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

fn one_name_s_history_pages_by_cursor_for_every_kind(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    // Seven changes of each kind's `pay`, with the other kinds' `pay` and a lock `payroll`
    // changing in between.
    for round in 0..3 {
        let owner = format!("w{round}");
        server.acquire("pay", &owner, 30).granted();
        server.acquire("payroll", &owner, 30).granted();
        let permit = json!({"owner": owner, "ttl_seconds": 30, "limit": 3});
        ok(&server, "POST", "/semaphores/pay", permit);
        let campaign = json!({"candidate": owner, "ttl_seconds": 30});
        ok(&server, "POST", "/elections/pay/campaign", campaign);
        if round < 2 {
            assert_eq!(server.release("pay", &owner).status, 204);
            assert_eq!(server.release("payroll", &owner).status, 204);
            let path = format!("/elections/pay/leader?candidate={owner}");
            assert_eq!(server.send("DELETE", &path, None).status, 204);
        }
    }
    assert_eq!(server.renew("pay", "w2", 40).status, 200);
    for owner in ["w0", "w1"] {
        let path = format!("/semaphores/pay?owner={owner}");
        assert_eq!(server.send("DELETE", &path, None).status, 204);
    }
    let renew = json!({"owner": "w2", "ttl_seconds": 40});
    ok(&server, "POST", "/semaphores/pay/renew", renew);
    let renew = json!({"candidate": "w2", "ttl_seconds": 40});
    ok(&server, "POST", "/elections/pay/renew", renew);
    // And the holder of each acquires again: a re-grant, the seventh record.
    server.acquire("pay", "w2", 40).granted();
    let permit = json!({"owner": "w2", "ttl_seconds": 40, "limit": 3});
    ok(&server, "POST", "/semaphores/pay", permit);
    let campaign = json!({"candidate": "w2", "ttl_seconds": 40});
    ok(&server, "POST", "/elections/pay/campaign", campaign);
    let alternating = [
        ("granted", "w0"),
        ("released", "w0"),
        ("granted", "w1"),
        ("released", "w1"),
        ("granted", "w2"),
        ("renewed", "w2"),
        ("re-granted", "w2"),
    ];
    let semaphore = [
        ("granted", "w0"),
        ("granted", "w1"),
        ("granted", "w2"),
        ("released", "w0"),
        ("released", "w1"),
        ("renewed", "w2"),
        ("re-granted", "w2"),
    ];
    for (path, kind, expected) in [
        ("/locks/pay/history", "lock", alternating),
        ("/semaphores/pay/history", "semaphore", semaphore),
        ("/elections/pay/history", "election", alternating),
    ] {
        let whole = history(&server, &format!("{path}?limit=1000"));
        assert!(whole.get("next_cursor").is_none(), "{path}: {whole}");
        let whole = whole["records"].as_array().unwrap().clone();
        assert!(
            whole
                .iter()
                .all(|r| r["kind"] == kind && r["name"] == "pay"),
            "{path}: {whole:?}"
        );
        let oldest_first: Vec<(&str, &str)> = whole
            .iter()
            .rev()
            .map(|r| (r["event"].as_str().unwrap(), r["owner"].as_str().unwrap()))
            .collect();
        assert_eq!(oldest_first, expected, "{path}");
        let ids_whole = ids(&whole);
        assert!(
            ids_whole.windows(2).all(|w| w[0] > w[1]),
            "{path}: newest first: {ids_whole:?}"
        );
        let small = pages(&server, path, 2);
        // Seven records two at a time take at least four pages (more when some come short).
        assert!(small.len() >= 4, "{path}: {small:?}");
        let followed: Vec<Value> = small.into_iter().flatten().collect();
        assert_eq!(followed, whole, "{path}: paged and whole differ");
        // One at a time as well.
        let single: Vec<Value> = pages(&server, path, 1).into_iter().flatten().collect();
        assert_eq!(ids(&single), ids_whole, "{path}");
    }
}
