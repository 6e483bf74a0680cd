//! A value on every lock lease, through the real binary on both backends: set on acquire (one
//! lock, several, either mode), shown by `GET` and the listing, kept by a renew or re-grant
//! without one, replaced by one with one, never inherited by the next holder; 4096 bytes of
//! compact JSON at most; and the value's text comes back exactly as it was sent.

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::server::{Reply, TestServer};

on_both_backends!(
    a_value_stays_with_its_exclusive_lease,
    a_value_stays_with_each_shared_lease,
    a_value_is_at_most_4096_bytes_of_compact_json,
    a_value_comes_back_byte_for_byte,
);

fn acquire(server: &TestServer, resource: &str, body: Value) -> Reply {
    server.send("POST", &format!("/locks/{resource}"), Some(&body))
}

/// A renew's body: `owner`, 60 s, with `value` unless it is `None`.
fn renewal(owner: &str, value: Option<Value>) -> Value {
    let mut body = json!({"owner": owner, "ttl_seconds": 60});
    if let Some(value) = value {
        body["value"] = value;
    }
    body
}

fn renew(server: &TestServer, resource: &str, body: Value) -> Value {
    let reply = server.send("POST", &format!("/locks/{resource}/renew"), Some(&body));
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body
}

/// An acquire's or renew's body: `owner`, 30 s, in `mode`, with `value` unless it is `None`.
fn lease(owner: &str, mode: &str, value: Option<Value>) -> Value {
    let mut body = json!({"owner": owner, "ttl_seconds": 30, "mode": mode});
    if let Some(value) = value {
        body["value"] = value;
    }
    body
}

/// The value of a lock object: `None` when the member is absent (`null` is no absence).
fn value(lock: &Value) -> Option<&Value> {
    lock.as_object().expect("a lock object").get("value")
}

/// The live locks whose names start with `prefix`, as (owner, value).
fn listed(server: &TestServer, prefix: &str) -> Vec<(String, Option<Value>)> {
    let page = server.send("GET", &format!("/locks?prefix={prefix}"), None);
    assert_eq!(page.status, 200, "{page:?}");
    page.body["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .map(|l| (l["owner"].as_str().unwrap().to_owned(), value(l).cloned()))
        .collect()
}

fn entry(owner: &str, value: Option<Value>) -> (String, Option<Value>) {
    (owner.to_owned(), value)
}

fn a_value_stays_with_its_exclusive_lease(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let addr = json!({"addr": "10.0.0.7:8443"});
    let lock = acquire(
        &server,
        "leader",
        lease("a", "exclusive", Some(addr.clone())),
    )
    .granted()
    .clone();
    assert_eq!(value(&lock), Some(&addr));
    assert_eq!(server.status("leader").body, lock, "GET shows it");
    assert_eq!(listed(&server, "leader"), [entry("a", Some(addr.clone()))]);

    // Kept by a renew and a re-grant without one (`null` is none too), replaced by one with one.
    let kept = renew(&server, "leader", renewal("a", None));
    assert_eq!(value(&kept), Some(&addr));
    let kept = renew(&server, "leader", renewal("a", Some(Value::Null)));
    assert_eq!(value(&kept), Some(&addr), "null is no value: kept");
    let regranted = acquire(&server, "leader", lease("a", "exclusive", None));
    assert_eq!(value(regranted.granted()), Some(&addr));
    assert_eq!(regranted.token(), lock["fencing_token"].as_i64().unwrap());
    let replaced = renew(&server, "leader", renewal("a", Some(json!([1, 2]))));
    assert_eq!(value(&replaced), Some(&json!([1, 2])));
    assert_eq!(value(&server.status("leader").body), Some(&json!([1, 2])));
    let regranted = acquire(
        &server,
        "leader",
        lease("a", "exclusive", Some(json!("v3"))),
    );
    assert_eq!(value(regranted.granted()), Some(&json!("v3")));
    assert_eq!(listed(&server, "leader"), [entry("a", Some(json!("v3")))]);
    // Falsy values are values.
    for falsy in [json!(0), json!(false), json!(""), json!({}), json!([])] {
        let renewed = renew(&server, "leader", renewal("a", Some(falsy.clone())));
        assert_eq!(value(&renewed), Some(&falsy));
    }

    // Refused holders change nothing; the next holder starts without one.
    assert_eq!(server.acquire("leader", "b", 30).body["acquired"], false);
    assert_eq!(value(&server.status("leader").body), Some(&json!([])));
    assert_eq!(server.release("leader", "a").status, 204);
    let next = server.acquire("leader", "b", 30).granted().clone();
    assert_eq!(value(&next), None, "{next}");
    assert_eq!(value(&server.status("leader").body), None);
    assert_eq!(listed(&server, "leader"), [entry("b", None)]);
    // So does the same owner's next lease, and one taken over after an expiry.
    assert_eq!(server.release("leader", "b").status, 204);
    let again = server.acquire("leader", "a", 30).granted().clone();
    assert_eq!(value(&again), None, "a new lease of a: {again}");
    let brief = json!({"owner": "c", "ttl_seconds": 1, "value": "c's"});
    acquire(&server, "brief", brief).granted();
    let mut takeover = lease("d", "exclusive", None);
    takeover["wait_seconds"] = json!(5);
    let took = acquire(&server, "brief", takeover).granted().clone();
    assert_eq!(took["owner"], "d");
    assert_eq!(value(&took), None, "{took}");
}

fn a_value_stays_with_each_shared_lease(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let r1 = acquire(&server, "cat", lease("r1", "shared", Some(json!({"r": 1}))))
        .granted()
        .clone();
    let r2 = acquire(&server, "cat", lease("r2", "shared", None))
        .granted()
        .clone();
    assert_eq!((value(&r1), value(&r2)), (Some(&json!({"r": 1})), None));
    assert_eq!(server.status("cat").body["holders"], json!([r1, r2]));
    let both = |one: Value, two: Option<Value>| vec![entry("r1", Some(one)), entry("r2", two)];
    assert_eq!(listed(&server, "cat"), both(json!({"r": 1}), None));

    // Each reader's own value: set, kept and replaced without touching the other's.
    let two = renew(&server, "cat", renewal("r2", Some(json!("two"))));
    assert_eq!(value(&two), Some(&json!("two")));
    let kept = renew(&server, "cat", renewal("r1", None));
    assert_eq!(value(&kept), Some(&json!({"r": 1})));
    let regranted = acquire(&server, "cat", lease("r1", "shared", None));
    assert_eq!(value(regranted.granted()), Some(&json!({"r": 1})));
    assert_eq!(
        listed(&server, "cat"),
        both(json!({"r": 1}), Some(json!("two")))
    );
    let regranted = acquire(&server, "cat", lease("r1", "shared", Some(json!(1.5))));
    assert_eq!(value(regranted.granted()), Some(&json!(1.5)));
    let holders = server.status("cat").body["holders"].clone();
    assert_eq!(
        (value(&holders[0]), value(&holders[1])),
        (Some(&json!(1.5)), Some(&json!("two")))
    );

    // Readers that come later, or come back, start without one; so does the next writer.
    assert_eq!(server.release("cat", "r1").status, 204);
    assert_eq!(
        value(acquire(&server, "cat", lease("r3", "shared", None)).granted()),
        None
    );
    assert_eq!(
        value(acquire(&server, "cat", lease("r1", "shared", None)).granted()),
        None
    );
    for reader in ["r1", "r2", "r3"] {
        assert_eq!(server.release("cat", reader).status, 204);
    }
    assert_eq!(value(server.acquire("cat", "w", 30).granted()), None);

    // A set's value is on each of its locks, in either mode.
    let set = json!({"owner": "t", "ttl_seconds": 30, "value": {"job": 7}, "locks": [
        {"resource": "set:a"}, {"resource": "set:b", "mode": "shared"}]});
    let granted = server.send("POST", "/locks", Some(&set));
    assert_eq!(granted.body["acquired"], true, "{granted:?}");
    for lock in granted.body["locks"].as_array().expect("locks") {
        assert_eq!(value(lock), Some(&json!({"job": 7})), "{lock}");
    }
    assert_eq!(
        value(&server.status("set:a").body),
        Some(&json!({"job": 7}))
    );
    let holders = &server.status("set:b").body["holders"];
    assert_eq!(value(&holders[0]), Some(&json!({"job": 7})));
    // The set re-granted: without a value each lock keeps its own, with one each is replaced.
    renew(&server, "set:a", renewal("t", Some(json!("a's own"))));
    let values_of = |set: Value| -> Vec<Option<Value>> {
        let reply = server.send("POST", "/locks", Some(&set));
        let locks = reply.body["locks"].as_array().expect("granted").clone();
        locks.iter().map(|lock| value(lock).cloned()).collect()
    };
    let mut again = set.clone();
    again.as_object_mut().expect("a body").remove("value");
    let kept = values_of(again);
    assert_eq!(kept, [Some(json!("a's own")), Some(json!({"job": 7}))]);
    again = set;
    again["value"] = json!(8);
    assert_eq!(values_of(again), [Some(json!(8)), Some(json!(8))]);
    assert_eq!(
        listed(&server, "set"),
        [entry("t", Some(json!(8))), entry("t", Some(json!(8)))]
    );
}

/// A JSON string whose compact text is `bytes` long: `"` + `x`s + `"`.
fn string_of(bytes: usize) -> Value {
    json!("x".repeat(bytes - 2))
}

fn a_value_is_at_most_4096_bytes_of_compact_json(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let largest = string_of(4_096);
    let lock = acquire(
        &server,
        "big",
        lease("a", "exclusive", Some(largest.clone())),
    )
    .granted()
    .clone();
    assert_eq!(value(&lock), Some(&largest));
    let reader = acquire(
        &server,
        "big-r",
        lease("r", "shared", Some(largest.clone())),
    )
    .granted()
    .clone();
    // Bytes, not characters: 2047 two-byte characters fit, 2048 do not.
    let accents = |n: usize| json!("é".repeat(n));
    let renewed = renew(&server, "big", renewal("a", Some(accents(2_047))));
    assert_eq!(value(&renewed), Some(&accents(2_047)));

    let too_long = [("value".to_owned(), "too_long".to_owned())];
    let over = [string_of(4_097), accents(2_048), json!([string_of(4_095)])];
    for value in over {
        let with = |owner: &str, mode: &str| lease(owner, mode, Some(value.clone()));
        let to = |path: &str, body: Value| server.send("POST", path, Some(&body)).error_codes();
        assert_eq!(to("/locks/fresh", with("a", "exclusive")), too_long);
        assert_eq!(to("/locks/fresh", with("a", "shared")), too_long);
        assert_eq!(
            to("/locks/big", with("a", "exclusive")),
            too_long,
            "a re-grant"
        );
        let renew_with = |owner: &str| renewal(owner, Some(value.clone()));
        assert_eq!(to("/locks/big/renew", renew_with("a")), too_long);
        assert_eq!(to("/locks/big-r/renew", renew_with("r")), too_long);
        let mut set = renew_with("a");
        set["locks"] = json!([{"resource": "fresh"}, {"resource": "fresh-2", "mode": "shared"}]);
        assert_eq!(to("/locks", set), too_long);
    }
    // Nothing changed.
    server.status("fresh").assert_problem(404, "not-found");
    server.status("fresh-2").assert_problem(404, "not-found");
    assert_eq!(value(&server.status("big").body), Some(&accents(2_047)));
    assert_eq!(server.status("big-r").body["holders"], json!([reader]));

    // Whitespace outside strings does not count: 4096 bytes once compact.
    let spaced = format!(
        r#"{{"owner": "s", "ttl_seconds": 30, "value": [ {} ,  0 ] }}"#,
        string_of(4_092)
    );
    let reply = server.send_raw(
        "POST",
        "/locks/spaced",
        Some("application/json"),
        spaced.as_bytes(),
    );
    assert_eq!(value(reply.granted()), Some(&json!([string_of(4_092), 0])));
}

/// A value written with whitespace, escapes, astral characters and numbers that a parser would
/// rewrite, and its compact text: the same characters, whitespace outside strings removed.
const SENT: &str = r#"{ "text" : "é \u00e9 \n\t \" \\ \/ 😀 \ud83d\ude00 \u0000" ,
    "numbers" : [ 1.50, -0, 1E+2, 12345678901234567890123, 0.1e-7 ],
    "nested" : { "b" : [ true , false , null ], "a" : { }, "" : "spaces  inside  kept" } }"#;
const COMPACT: &str = concat!(
    r#"{"text":"é \u00e9 \n\t \" \\ \/ 😀 \ud83d\ude00 \u0000","#,
    r#""numbers":[1.50,-0,1E+2,12345678901234567890123,0.1e-7],"#,
    r#""nested":{"b":[true,false,null],"a":{},"":"spaces  inside  kept"}}"#,
);

/// Sends `body` (JSON text) and answers the raw text of a 200 answer.
fn exchange(server: &TestServer, method: &str, path: &str, body: Option<&str>) -> String {
    let request = ureq::request(method, &server.url(path)).set("content-type", "application/json");
    let response = match body {
        Some(body) => request.send_string(body),
        None => request.call(),
    }
    .unwrap_or_else(|error| panic!("{method} {path}: {error}"));
    assert_eq!(response.status(), 200, "{method} {path}");
    response.into_string().expect("the answer's text")
}

fn a_value_comes_back_byte_for_byte(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let member = format!(r#""value":{COMPACT}"#);
    let shows_it = |text: &str, what: &str| {
        assert_eq!(text.matches(&member).count(), 1, "{what}: {text}");
    };
    let with_value = |owner: &str, mode: &str| {
        format!(r#"{{"owner": "{owner}", "ttl_seconds": 30, "mode": "{mode}", "value": {SENT}}}"#)
    };
    let granted = exchange(
        &server,
        "POST",
        "/locks/raw",
        Some(&with_value("a", "exclusive")),
    );
    shows_it(&granted, "the grant");
    shows_it(&exchange(&server, "GET", "/locks/raw", None), "GET");
    shows_it(
        &exchange(&server, "GET", "/locks?prefix=raw", None),
        "the listing",
    );
    let renew = r#"{"owner": "a", "ttl_seconds": 60}"#;
    shows_it(
        &exchange(&server, "POST", "/locks/raw/renew", Some(renew)),
        "a renew",
    );

    exchange(
        &server,
        "POST",
        "/locks/raw-shared",
        Some(&with_value("r", "shared")),
    );
    shows_it(
        &exchange(&server, "GET", "/locks/raw-shared", None),
        "a reader in GET",
    );
    let set = format!(
        r#"{{"owner": "t", "ttl_seconds": 30, "locks": [{{"resource": "raw-set"}}], "value": {}}}"#,
        SENT
    );
    shows_it(&exchange(&server, "POST", "/locks", Some(&set)), "a set");
    shows_it(
        &exchange(&server, "GET", "/locks/raw-set", None),
        "a set's lock in GET",
    );

    // And it is the JSON value that was sent.
    let parsed: Value = serde_json::from_str(SENT).expect("SENT is JSON");
    assert_eq!(value(&server.status("raw").body), Some(&parsed));
}
