//! The audit log of the real binary in its default text format (issue #11, fault 8): a resource
//! and an owner written to look like more fields stay one quoted value each.

use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

/// The line with every quoted value taken out, so that only lockd's own keys are left.
fn without_quoted_values(line: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in line.chars() {
        match (quoted, escaped, c) {
            (true, false, '\\') => escaped = true,
            (true, true, _) => escaped = false,
            (_, false, '"') => quoted = !quoted,
            (false, _, c) => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn a_forged_resource_and_owner_stay_one_field_each() {
    let db = TestDatabase::sqlite();
    let server = TestServer::start(&db, &["--log", "lockd::audit=info"]);
    let resource = "x fencing_token=1 event=released owner=victim";
    let reply = server.send(
        "POST",
        "/locks/x%20fencing_token=1%20event=released%20owner=victim",
        Some(&json!({"owner": "mallory tenant=globex", "ttl_seconds": 30})),
    );
    assert_eq!(reply.body["lock"]["resource"], resource, "{reply:?}");

    let deadline = Instant::now() + Duration::from_secs(5);
    let line = loop {
        if let Some(line) = server
            .drain_stderr()
            .into_iter()
            .find(|line| line.contains("lockd::audit") && line.contains("granted"))
        {
            break line;
        }
        assert!(Instant::now() < deadline, "no audit line for the grant");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        line.contains(r#"resource="x fencing_token=1 event=released owner=victim""#),
        "{line}"
    );
    assert!(line.contains(r#"owner="mallory tenant=globex""#), "{line}");
    let keys = without_quoted_values(&line);
    for key in ["event=", "owner=", "tenant=", "resource=", "fencing_token="] {
        assert_eq!(keys.matches(key).count(), 1, "{key} in {line}");
    }
}
