//! The file framing pinned down: a header spelled as the histories always spelled it, the
//! defaults of an older header, and a bad line named by its number.

use super::*;

#[test]
fn a_header_is_the_run_between_the_names_and_the_lock_delays() {
    let run = Run {
        start: 5,
        seed: 7,
        horizon_us: 1,
        margin_us: 2,
    };
    let names = ["r0".to_owned()];
    let delays = BTreeMap::from([("r0".to_owned(), 3)]);
    let header = run.header(Some(("resources", &names)), Some(&delays));
    let spelled = json!({
        "resources": names, "start": 5, "horizon_us": 1, "margin_us": 2, "seed": 7,
        "lock_delays_us": delays,
    });
    assert_eq!(header.to_string(), spelled.to_string());
    assert_eq!(Run::read(&header), Some(run));
    assert_eq!(names_of(&header["resources"]), vec!["r0".to_owned()]);
    assert_eq!(lock_delays(&header["lock_delays_us"]), delays);
}

#[test]
fn an_old_header_gets_the_defaults() {
    let run = Run::read(&json!({"start": 5})).expect("a start is enough");
    assert_eq!(
        (run.seed, run.horizon_us, run.margin_us),
        (0, DEFAULT_HORIZON_US, DEFAULT_MARGIN_US)
    );
    assert_eq!(Run::read(&json!({"seed": 1})), None);
    assert!(names_of(&Value::Null).is_empty());
    assert!(lock_delays(&Value::Null).is_empty());
}

#[test]
fn a_bad_line_is_named_by_its_number() {
    let header = |h: &Value| h["n"].as_u64().map(|n| vec![n]);
    let line = |read: &mut Vec<u64>, v: &Value| {
        read.push(v.as_u64()?);
        Some(())
    };
    assert_eq!(read("", "empty", header, line), Err("empty".to_owned()));
    assert_eq!(
        read("{\"n\":1}\n2\n3\n", "empty", header, line),
        Ok(vec![1, 2, 3])
    );
    assert_eq!(
        read("{\"n\":1}\n2\nx\n", "empty", header, line),
        Err("line 3: x".to_owned())
    );
    assert_eq!(
        read("{}\n2\n", "empty", header, line),
        Err("line 1: {}".to_owned())
    );
    assert_eq!(number(&json!(4_294_967_296_u64)), None);
    assert_eq!(status(&json!(70_000)), None);
    assert_eq!(list(&json!([1, "x"]), Value::as_u64), None);
}
