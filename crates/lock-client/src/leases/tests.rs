//! The bodies an acquire sends, and how acquire and status answers are read.

use serde_json::json;

use super::*;

/// A lock object of owner `o`, token 17, without its closing brace.
const LOCK: &str = concat!(
    r#"{"resource":"r","owner":"o","acquired_at":"2026-11-29T21:32:27.123Z","#,
    r#""expires_at":"2026-11-29T21:32:57.123Z","fencing_token":17"#
);

fn lock(rest: &str) -> String {
    format!("{LOCK}{rest}}}")
}

fn lease(owner: &str, token: i64, mode: Mode, value: Option<Value>) -> Lease {
    Lease {
        resource: "r".to_owned(),
        owner: owner.to_owned(),
        acquired_at: "2026-11-29T21:32:27.123Z".to_owned(),
        expires_at: "2026-11-29T21:32:57.123Z".to_owned(),
        fencing_token: token,
        mode,
        value,
        session: None,
    }
}

#[test]
fn a_default_acquire_sends_the_v1_body() {
    let body = acquire_body("o", 30, &AcquireOptions::default());
    assert_eq!(body, json!({"owner": "o", "ttl_seconds": 30}));
}

#[test]
fn mode_wait_and_value_are_sent_when_they_say_something() {
    let options = AcquireOptions::shared()
        .waiting(5)
        .with_value(json!({"addr": "10.0.0.7"}));
    assert_eq!(
        acquire_body("o", 30, &options),
        json!({"owner": "o", "ttl_seconds": 30, "mode": "shared", "wait_seconds": 5,
               "value": {"addr": "10.0.0.7"}})
    );
    // `null` is a value like any other here: the server reads it as none.
    let null = AcquireOptions::default().with_value(Value::Null);
    assert_eq!(
        acquire_body("o", 30, &null),
        json!({"owner": "o", "ttl_seconds": 30, "value": null})
    );
}

#[test]
fn a_grant_is_read_with_its_mode_and_value() {
    let granted = format!(
        r#"{{"acquired":true,"lock":{}}}"#,
        lock(r#","mode":"shared","value":{"n":[1,"é"]}"#)
    );
    assert_eq!(
        parse_acquired(granted, None).unwrap(),
        Acquired::Granted(lease("o", 17, Mode::Shared, Some(json!({"n": [1, "é"]}))))
    );
    // A server before modes and values: exclusive, no value.
    let v1 = format!(r#"{{"acquired":true,"lock":{}}}"#, lock(""));
    assert_eq!(
        parse_acquired(v1, None).unwrap(),
        Acquired::Granted(lease("o", 17, Mode::Exclusive, None))
    );
    let held = r#"{"acquired":false,"resource":"r"}"#.to_owned();
    assert_eq!(
        parse_acquired(held, Some(4)).unwrap(),
        Acquired::Held {
            retry_after_seconds: Some(4)
        }
    );
    for broken in [
        r#"{"acquired":true}"#.to_owned(),
        format!(
            r#"{{"acquired":true,"lock":{}}}"#,
            lock(r#","mode":"upgrade""#)
        ),
        "[]".to_owned(),
    ] {
        let error = parse_acquired(broken, None).unwrap_err();
        assert!(
            matches!(error, ClientError::Unexpected { status: 200, .. }),
            "{error:?}"
        );
    }
}

#[test]
fn a_status_is_one_exclusive_lock_or_the_shared_holders() {
    let exclusive = lock(r#","mode":"exclusive","value":"v""#);
    assert_eq!(
        parse_status(exclusive).unwrap(),
        LockStatus::Exclusive(lease("o", 17, Mode::Exclusive, Some(json!("v"))))
    );
    assert_eq!(
        parse_status(lock("")).unwrap(),
        LockStatus::Exclusive(lease("o", 17, Mode::Exclusive, None)),
        "a server before modes"
    );
    let reader = |owner: &str, token: i64, value: &str| {
        lock(&format!(r#","mode":"shared"{value}"#))
            .replace(r#""owner":"o""#, &format!(r#""owner":"{owner}""#))
            .replace("17", &token.to_string())
    };
    let shared = format!(
        r#"{{"resource":"r","mode":"shared","holders":[{},{}]}}"#,
        reader("r1", 3, r#","value":[true]"#),
        reader("r2", 4, "")
    );
    assert_eq!(
        parse_status(shared).unwrap(),
        LockStatus::Shared {
            resource: "r".to_owned(),
            holders: vec![
                lease("r1", 3, Mode::Shared, Some(json!([true]))),
                lease("r2", 4, Mode::Shared, None),
            ],
        }
    );
    for broken in [
        r#"{"resource":"r","mode":"exclusive","holders":[]}"#.to_owned(),
        lock(r#","mode":"shared""#),
        r#"{"resource":"r"}"#.to_owned(),
    ] {
        let error = parse_status(broken).unwrap_err();
        assert!(
            matches!(error, ClientError::Unexpected { status: 200, .. }),
            "{error:?}"
        );
    }
}
