//! Runs the `nightly_export` example's job once on a fresh SQLite database, and checks its
//! downstream store refuses a stale fencing token.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../examples/nightly_export.rs"]
mod nightly_export;

use std::time::Duration;

use lock_domain::FencingToken;
use lock_store_diesel::testing::TestDatabase;
use nightly_export::{ExportJob, FencedDirectory, StaleToken};

#[test]
fn the_example_job_exports_under_the_lock_and_stale_tokens_are_refused() {
    let db = TestDatabase::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let job = ExportJob {
        database_url: db.url().clone(),
        output_dir: dir.path().join("out"),
        parts: 2,
        part_time: Duration::from_millis(10),
    };
    let first = nightly_export::run(&job).unwrap();
    let second = nightly_export::run(&job).unwrap();
    assert!(
        second > first,
        "each run is a new grant: {first:?} then {second:?}"
    );
    let part = std::fs::read_to_string(job.output_dir.join("part-2.csv")).unwrap();
    assert_eq!(part, format!("part,2\ntoken,{}\n", second.value()));

    let output = FencedDirectory::open(&job.output_dir).unwrap();
    assert_eq!(output.highest_token(), second.value());
    let error = output
        .write(first, "late.csv", "from a holder that lost the lock")
        .unwrap_err();
    let stale = error.downcast_ref::<StaleToken>().expect("a stale token");
    assert_eq!((stale.offered, stale.seen), (first.value(), second.value()));
    assert!(!job.output_dir.join("late.csv").exists());
    assert!(output
        .write(
            FencingToken::new(second.value() + 1).unwrap(),
            "next.csv",
            "ok"
        )
        .is_ok());
}
