//! Bad input to `POST /locks` and `DELETE /locks`, on both backends: one 422 listing every
//! invalid field in the contract's order, and nothing acquired or released.

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use super::{absent, acquire_all, granted_all, set};
use crate::server::TestServer;

on_both_backends!(
    a_bad_set_is_one_422_and_holds_nothing,
    a_bad_release_of_many_is_one_422_and_releases_nothing,
);

/// Each body's expected 422, as (field, code) pairs.
type Cases = Vec<(Value, Vec<(&'static str, &'static str)>)>;

fn assert_codes(server: &TestServer, method: &str, cases: Cases) {
    for (body, expected) in cases {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(field, code)| ((*field).to_owned(), (*code).to_owned()))
            .collect();
        let reply = server.send(method, "/locks", Some(&body));
        assert_eq!(reply.error_codes(), expected, "{method} {body}");
    }
}

fn a_bad_set_is_one_422_and_holds_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let locks = |locks: Value| json!({"owner": "o", "ttl_seconds": 30, "locks": locks});
    let many: Vec<Value> = (0..65)
        .map(|i| json!({"resource": format!("m{i}")}))
        .collect();
    let twice =
        json!([{"resource": "m1"}, {"resource": "m2"}, {"resource": "m1", "mode": "shared"}]);
    let names = json!([{"resource": "m1"}, {"mode": "shared"}, {"resource": ""}, {"resource": 7}]);
    let everything = json!({"owner": "", "ttl_seconds": 0, "locks": [{"resource": "m1", "mode": 1}],
                            "wait_seconds": -1, "value": "x".repeat(4_095)});
    let cases: Cases = vec![
        (
            json!({"owner": "o", "ttl_seconds": 30}),
            vec![("locks", "required")],
        ),
        (locks(json!(null)), vec![("locks", "required")]),
        (locks(json!("m1")), vec![("locks", "invalid_type")]),
        (
            locks(json!({"resource": "m1"})),
            vec![("locks", "invalid_type")],
        ),
        (locks(json!([])), vec![("locks", "out_of_range")]),
        (locks(json!(many)), vec![("locks", "out_of_range")]),
        (locks(twice), vec![("locks", "duplicate")]),
        (
            locks(json!(["m1", 7])),
            vec![("locks[0]", "invalid_type"), ("locks[1]", "invalid_type")],
        ),
        (
            locks(names),
            vec![
                ("locks[1].resource", "required"),
                ("locks[2].resource", "empty"),
                ("locks[3].resource", "invalid_type"),
            ],
        ),
        (
            locks(json!([{"resource": "m1", "mode": "read"}, {"resource": "m2", "mode": 2}])),
            vec![
                ("locks[0].mode", "invalid_value"),
                ("locks[1].mode", "invalid_type"),
            ],
        ),
        (
            everything,
            vec![
                ("owner", "empty"),
                ("ttl_seconds", "out_of_range"),
                ("locks[0].mode", "invalid_type"),
                ("wait_seconds", "out_of_range"),
                ("value", "too_long"),
            ],
        ),
    ];
    assert_codes(&server, "POST", cases);
    absent(&server, &["m1", "m2", "m64"]);
    let listed = server.send("GET", "/locks", None);
    assert_eq!(listed.body["locks"], json!([]), "{listed:?}");
    // 64 distinct locks are one set.
    let names: Vec<String> = (0..64).map(|i| format!("m{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    granted_all(&acquire_all(&server, &set("o", &names)), "o", &names);
}

fn a_bad_release_of_many_is_one_422_and_releases_nothing(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let held = server.acquire("c", "bob", 30).granted().clone();
    let resources = |resources: Value| json!({"owner": "bob", "resources": resources});
    let cases: Cases = vec![
        (json!({"owner": "bob"}), vec![("resources", "required")]),
        (resources(json!(null)), vec![("resources", "required")]),
        (json!({"resources": ["c"]}), vec![("owner", "required")]),
        (resources(json!([])), vec![("resources", "out_of_range")]),
        (resources(json!("c")), vec![("resources", "invalid_type")]),
        (
            resources(json!(["c", "c"])),
            vec![("resources", "duplicate")],
        ),
        (
            json!({"owner": " ", "resources": ["c", 7, ""]}),
            vec![
                ("owner", "empty"),
                ("resources[1]", "invalid_type"),
                ("resources[2]", "empty"),
            ],
        ),
    ];
    assert_codes(&server, "DELETE", cases);
    assert_eq!(server.status("c").body, held, "nothing released");
}
