//! Steps of the system clock under a running lockd on SQLite, where lockd's clock decides
//! expiry: the process runs under libfaketime (`LD_PRELOAD`), whose offset the test changes in a
//! file between requests (the monotonic clock, which timers use, is left alone).
//! - A step forward ends leases early (documented): the next holder's token is larger.
//! - A step back lengthens live leases and never lowers a token: no live lease is granted twice.
//!
//! libfaketime comes from Debian's `libfaketime` package (`.ci/run` installs it). Where it is
//! missing the test says so loudly and does nothing, except in CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};

use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

#[test]
fn clock_steps_on_sqlite_end_leases_early_forward_and_never_lower_a_token() {
    let Some(library) = libfaketime() else {
        return;
    };
    let db = TestDatabase::sqlite();
    let dir = tempfile::tempdir().expect("tempdir");
    let offset = dir.path().join("offset");
    step(&offset, "+0");
    let server = TestServer::start_with_env(
        &db.url_string(),
        &[],
        &[
            ("LD_PRELOAD", library.to_str().expect("a UTF-8 path")),
            (
                "FAKETIME_TIMESTAMP_FILE",
                offset.to_str().expect("a UTF-8 path"),
            ),
            ("FAKETIME_NO_CACHE", "1"),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ],
    );
    let first = server.acquire("job", "first", 30).token();

    // Forward by a minute: the 30 s lease has ended by lockd's clock, and the next holder's
    // token is larger.
    step(&offset, "+60");
    server.status("job").assert_problem(404, "not-found");
    let second = server.acquire("job", "second", 30).token();
    assert!(second > first, "{second} after {first}");
    assert_eq!(
        server.acquire("job", "third", 30).body["acquired"],
        false,
        "the new holder's lease is live"
    );

    // Back by an hour: the live lease only lasts longer; nobody else is granted it, and new
    // tokens keep growing.
    step(&offset, "-3600");
    assert_eq!(server.status("job").body["owner"], "second");
    assert_eq!(server.acquire("job", "third", 30).body["acquired"], false);
    let other = server.acquire("other", "first", 30).token();
    assert!(other > second, "{other} after {second}");
    assert_eq!(server.release("job", "second").status, 204);
    let third = server.acquire("job", "third", 30).token();
    assert!(third > other, "{third} after {other}");

    // And back to the true time: the hour-back lease ends (its expiry is an hour in the past).
    step(&offset, "+0");
    server.status("job").assert_problem(404, "not-found");
    let fourth = server.acquire("job", "fourth", 30).token();
    assert!(fourth > third, "{fourth} after {third}");
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Sets libfaketime's offset from the true time (`+60`, `-3600`: seconds).
fn step(file: &Path, offset: &str) {
    std::fs::write(file, offset).expect("write the offset");
}

fn libfaketime() -> Option<PathBuf> {
    let path = PathBuf::from(LIBFAKETIME);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{LIBFAKETIME} is missing; in CI (CI is set) this test must run, not skip"
    );
    eprintln!("\n!!!!! SKIPPING the clock-step test: no {LIBFAKETIME} (Debian's libfaketime)\n");
    None
}
