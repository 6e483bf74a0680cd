//! Several lockd processes started at once on a fresh SQLite file: every one of them opens the
//! store, and the schema ends complete, each migration applied once.
//!
//! The openers are processes (this test binary re-run as a child), as in production: SQLite's
//! locks between processes are what the migrations must wait for.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use lock_domain::SystemClock;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

/// Set in a child: the file to open, and the instant (ms since the epoch) to open it at.
const CHILD_PATH: &str = "LOCKD_TEST_CONCURRENT_OPEN_PATH";
const CHILD_AT: &str = "LOCKD_TEST_CONCURRENT_OPEN_AT_MS";
const OPENERS: usize = 8;
const ROUNDS: usize = 6;

fn epoch_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[test]
fn processes_opening_a_fresh_file_at_once_all_succeed() {
    if let (Ok(path), Ok(at)) = (std::env::var(CHILD_PATH), std::env::var(CHILD_AT)) {
        open_as_child(Path::new(&path), at.parse().unwrap());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for round in 0..ROUNDS {
        let path = dir.path().join(format!("round-{round}.db"));
        // All start their open at the same instant, after the slowest has started up.
        let at = epoch_ms() + 300;
        let children: Vec<_> = (0..OPENERS)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .args([
                        "--exact",
                        "processes_opening_a_fresh_file_at_once_all_succeed",
                        "--nocapture",
                        "--test-threads=1",
                    ])
                    .env(CHILD_PATH, &path)
                    .env(CHILD_AT, at.to_string())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let failures: Vec<String> = children
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .filter(|output| !output.status.success())
            .map(|output| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                )
            })
            .collect();
        assert!(
            failures.is_empty(),
            "round {round}: {} of {OPENERS} openers failed:\n{}",
            failures.len(),
            failures.join("\n---\n")
        );
        assert_schema_complete(&path);
    }
}

/// Opens the store at `at_ms` and exits the test with its outcome.
fn open_as_child(path: &Path, at_ms: u128) {
    let wait = at_ms.saturating_sub(epoch_ms());
    std::thread::sleep(Duration::from_millis(wait.try_into().unwrap()));
    let config = StoreConfig::new(DatabaseUrl::Sqlite(path.to_path_buf()));
    let started = Instant::now();
    if let Err(error) = DieselLockRepository::open(&config, Arc::new(SystemClock)) {
        panic!("open failed after {:?}: {error}", started.elapsed());
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

fn count(conn: &mut SqliteConnection, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .n
}

fn assert_schema_complete(path: &Path) {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    let migrations =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/sqlite"))
            .unwrap()
            .count();
    assert_eq!(
        count(
            &mut conn,
            "SELECT COUNT(*) AS n FROM __diesel_schema_migrations"
        ),
        i64::try_from(migrations).unwrap(),
        "each migration applied once"
    );
    for (table, rows) in [
        ("distributed_locks", 0),
        ("fencing_counter", 1),
        ("expired_takeovers", 1),
        ("history_context", 1),
    ] {
        assert_eq!(
            count(&mut conn, &format!("SELECT COUNT(*) AS n FROM {table}")),
            rows,
            "{table}"
        );
    }
    assert_eq!(
        count(
            &mut conn,
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'trigger'"
        ),
        // The fencing counter's two, the takeover count's and the one ending run-out readers
        // at a takeover (migration 17). The history's are TEMP triggers of each process's
        // writer connection, not in the file.
        4,
        "triggers"
    );
    let header = std::fs::read(path).unwrap();
    assert_eq!((header[18], header[19]), (2, 2), "the file is in WAL mode");
}
