//! Database passwords never reach lockd's output: not in start-up errors, retry warnings,
//! refusals of a malformed URL, nor `--help` (issue #11, password redaction).

use std::process::{Command, Stdio};

use crate::server::lockd_binary;

const SECRET: &str = "s3cr3t";

/// Runs lockd with `database_url`, logging everything, and returns its stderr once it exits.
fn stderr_of(database_url: &str) -> String {
    let output = Command::new(lockd_binary())
        .args([
            "--bind",
            "127.0.0.1:0",
            "--startup-timeout-seconds",
            "1",
            "--pool-timeout-seconds",
            "1",
            "--database-url",
            database_url,
        ])
        .env("LOCKD_LOG", "trace")
        .env_remove("RUST_LOG")
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run lockd");
    assert!(!output.status.success(), "lockd started on {database_url}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn database_passwords_never_appear_on_stderr() {
    // A database that does not exist on the test server (or no server at all): libpq's own
    // message, after the server answered.
    let admin = lock_store_diesel::testing::postgres_admin_url();
    let server = admin
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('/'))
        .map_or("127.0.0.1:5432", |(authority, _)| {
            authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host)
        });
    let cases = [
        // Unreachable: nothing listens on port 1.
        format!("postgres://lockd:{SECRET}@127.0.0.1:1/locks?password={SECRET}"),
        format!("postgresql://lockd@127.0.0.1:1/locks?sslmode=disable&password={SECRET}"),
        format!("postgres://lockd:{SECRET}@{server}/lockd_no_such_database?password={SECRET}"),
        // Options libpq refuses, naming what it refuses.
        format!("postgres://lockd:{SECRET}@127.0.0.1:1/locks?password={SECRET}&bogus=1"),
        format!(
            "postgres://lockd:{SECRET}@127.0.0.1:1/locks?sslpassword={SECRET}&sslmode=nonsense"
        ),
        // Malformed: an unencoded '/' or '&' in a password, or an unknown scheme.
        format!(
            "postgres://lockd:{}/{}@127.0.0.1:1/locks",
            &SECRET[..3],
            &SECRET[3..]
        ),
        format!(
            "postgres://lockd@127.0.0.1:1/locks?password={}&{}",
            &SECRET[..3],
            &SECRET[3..]
        ),
        format!("mysql://root:{SECRET}@localhost/x"),
        format!("root:{SECRET}@localhost/x"),
    ];
    for url in &cases {
        let stderr = stderr_of(url);
        assert!(!stderr.trim().is_empty(), "{url}: nothing on stderr");
        // The whole secret, and either half of one that was cut at an unencoded character.
        for part in [SECRET, &SECRET[..3], &SECRET[3..]] {
            assert!(!stderr.contains(part), "{url} leaked {part:?}:\n{stderr}");
        }
    }
}

#[test]
fn help_does_not_show_the_database_url_from_the_environment() {
    let output = Command::new(lockd_binary())
        .arg("--help")
        .env(
            "DATABASE_URL",
            format!("postgres://lockd:{SECRET}@db/locks?password={SECRET}"),
        )
        .output()
        .expect("run lockd --help");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--database-url"), "{help}");
    assert!(!help.contains(SECRET), "{help}");
}
