//! The body of a set's acquire, and how the answers of `POST /locks` and `DELETE /locks` are
//! read.

use serde_json::json;

use super::*;

fn lock(resource: &str, token: i64, mode: &str) -> String {
    let times =
        r#""acquired_at":"2026-11-29T21:32:27.123Z","expires_at":"2026-11-29T21:32:57.123Z""#;
    let rest = format!(r#""fencing_token":{token},"mode":"{mode}","value":7"#);
    format!(r#"{{"resource":"{resource}","owner":"o",{times},{rest}}}"#)
}

#[test]
fn a_set_is_sent_in_order_with_modes_only_where_shared() {
    let locks = [LockSpec::exclusive("b"), LockSpec::shared("a")];
    assert_eq!(
        acquire_all_body("o", 30, &locks, 0, None),
        json!({"owner": "o", "ttl_seconds": 30,
               "locks": [{"resource": "b"}, {"resource": "a", "mode": "shared"}]})
    );
    assert_eq!(
        acquire_all_body("o", 30, &locks[..1], 5, Some(&json!({"job": 1}))),
        json!({"owner": "o", "ttl_seconds": 30, "locks": [{"resource": "b"}],
               "wait_seconds": 5, "value": {"job": 1}})
    );
}

#[test]
fn a_granted_set_is_read_in_request_order() {
    let text = format!(
        r#"{{"acquired":true,"locks":[{},{}]}}"#,
        lock("b", 9, "exclusive"),
        lock("a", 10, "shared")
    );
    let LocksAcquired::Granted(locks) = parse_acquired_all(text, None).unwrap() else {
        panic!("granted expected")
    };
    let read: Vec<_> = locks
        .iter()
        .map(|l| {
            (
                l.resource.as_str(),
                l.fencing_token,
                l.mode,
                l.value.clone(),
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            ("b", 9, Mode::Exclusive, Some(json!(7))),
            ("a", 10, Mode::Shared, Some(json!(7)))
        ]
    );
}

#[test]
fn an_unavailable_set_is_read_with_its_retry_after() {
    let text = r#"{"acquired":false,"unavailable":["a","c"]}"#.to_owned();
    assert_eq!(
        parse_acquired_all(text, Some(3)).unwrap(),
        LocksAcquired::Unavailable {
            resources: vec!["a".to_owned(), "c".to_owned()],
            retry_after_seconds: Some(3),
        }
    );
    for broken in [
        r#"{"acquired":false}"#,
        r#"{"acquired":true,"unavailable":["a"]}"#,
        r#"{"acquired":true,"lock":{}}"#,
    ] {
        let error = parse_acquired_all(broken.to_owned(), None).unwrap_err();
        assert!(
            matches!(error, ClientError::Unexpected { status: 200, .. }),
            "{error:?}"
        );
    }
}

#[test]
fn each_release_of_many_is_read() {
    let text = r#"{"results":[{"resource":"a","result":"released","fencing_token":9},
        {"resource":"b","result":"forbidden"},{"resource":"c","result":"not_found"}]}"#;
    let one = |resource: &str, outcome, fencing_token| LockReleased {
        resource: resource.to_owned(),
        outcome,
        fencing_token,
    };
    assert_eq!(
        parse_released_all(text.to_owned()).unwrap(),
        [
            one("a", Released::Released, Some(9)),
            one("b", Released::Forbidden, None),
            one("c", Released::NotFound, None),
        ]
    );
    for broken in [
        r#"{"results":[{"resource":"a","result":"gone"}]}"#,
        r#"{"results":{}}"#,
        r#"[]"#,
    ] {
        let error = parse_released_all(broken.to_owned()).unwrap_err();
        assert!(
            matches!(error, ClientError::Unexpected { status: 200, .. }),
            "{error:?}"
        );
    }
}
