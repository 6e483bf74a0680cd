//! SQLite's WAL stays bounded: while another connection holds a read transaction open (a
//! backup, the `sqlite3` shell), every commit stays in the WAL and it grows past its limit; once
//! that reader has gone the writer empties it within a couple of checks, writes go on all along,
//! and a store that stops leaves an empty WAL behind. Nothing acknowledged is lost.

use lock_domain::testing::calls::LeaseCalls;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use lock_domain::SystemClock;
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

const LIMIT: u64 = 256 << 10;

fn wal_size(database: &Path) -> u64 {
    let mut wal = database.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
}

async fn cycle(repo: &DieselLockRepository, n: usize) {
    let resource = name(&format!("r{}", n % 50));
    repo.acquire(tenant(), resource.clone(), owner("o"), ttl(30), None)
        .await
        .unwrap();
    repo.release(tenant(), resource, owner("o")).await.unwrap();
}

#[derive(QueryableByName)]
struct Checked {
    #[diesel(sql_type = diesel::sql_types::Text)]
    integrity_check: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wal_grown_past_its_limit_under_a_reader_is_emptied_once_the_reader_goes() {
    let db = TestDatabase::sqlite();
    let DatabaseUrl::Sqlite(path) = db.url().clone() else {
        unreachable!()
    };
    let mut config = StoreConfig::new(db.url().clone());
    config.sqlite_wal_limit = LIMIT;
    let repo = open_store(config, Arc::new(SystemClock)).await;
    cycle(&repo, 0).await;

    // A reader holds a snapshot, as a backup or an idle `sqlite3` shell inside BEGIN would.
    let mut reader = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    reader
        .batch_execute("BEGIN; SELECT count(*) FROM distributed_locks;")
        .unwrap();
    let mut n = 1;
    let started = Instant::now();
    while wal_size(&path) < 8 * LIMIT {
        cycle(&repo, n).await;
        n += 1;
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the WAL did not grow: {}",
            wal_size(&path)
        );
    }
    // The writer checks every second: the reader still needs the WAL, so it stays.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    cycle(&repo, n).await;
    let held = wal_size(&path);
    assert!(held >= 8 * LIMIT, "{held}");

    reader.batch_execute("COMMIT").unwrap();
    drop(reader);
    // Writes go on; the WAL is emptied within a few checks.
    let gone = Instant::now();
    loop {
        n += 1;
        cycle(&repo, n).await;
        if wal_size(&path) <= LIMIT {
            break;
        }
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "the WAL is still {} bytes {:?} after the reader went",
            wal_size(&path),
            gone.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The last write is there, and a lease taken now survives the store's stop.
    repo.acquire(tenant(), name("kept"), owner("k"), ttl(60), None)
        .await
        .unwrap();
    drop(repo);
    let stopped = Instant::now();
    while wal_size(&path) > 0 {
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "a stopped store left {} bytes of WAL",
            wal_size(&path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut check = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
    let checked: Vec<Checked> = diesel::sql_query("PRAGMA integrity_check")
        .load(&mut check)
        .unwrap();
    assert_eq!(
        checked
            .iter()
            .map(|c| c.integrity_check.as_str())
            .collect::<Vec<_>>(),
        ["ok"]
    );
    drop(check);
    let repo = open_store(StoreConfig::new(db.url().clone()), Arc::new(SystemClock)).await;
    let status = repo.status(tenant(), name("kept")).await.unwrap();
    assert_eq!(status.map(|lock| lock.owner), Some(owner("k")));
}
