//! The store's history outside the port's contract, on both backends: a sweep records the
//! expiry of a lease nobody took over (once), a process started without history records none,
//! and (PostgreSQL) the stream's read never passes an id whose transaction may still commit.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use lock_domain::testing::ManualClock;
use lock_domain::{
    Clock, HistoryEvent, HistoryQuery, HistoryRepository, HistorySubject, LeaseKind, ListLimit,
    ResourcePrefix, SystemClock,
};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig, SweepPosition};

async fn open(db: &TestDatabase, clock: Arc<dyn Clock>, record: bool) -> Arc<DieselLockRepository> {
    let mut config = StoreConfig::new(db.url().clone());
    config.sweep_grace = Duration::ZERO;
    config.record_history = record;
    open_store(config, clock).await
}

async fn events(repo: &DieselLockRepository, resource: &str) -> Vec<(HistoryEvent, String)> {
    let page = repo
        .history(
            tenant(),
            HistoryQuery {
                subject: HistorySubject::One {
                    kind: LeaseKind::Lock,
                    name: name(resource),
                },
                since: None,
                before: None,
                limit: ListLimit::parse(100).unwrap(),
            },
        )
        .await
        .unwrap();
    page.records
        .iter()
        .rev()
        .map(|r| (r.event, r.owner.as_str().to_owned()))
        .collect()
}

async fn sweep(repo: &DieselLockRepository) {
    let mut from = SweepPosition::START;
    while let Some(next) = repo.sweep_expired(1_000, from).await.unwrap().next {
        from = next;
    }
}

async fn a_sweep_records_an_expiry_once(db: TestDatabase, clock: Arc<dyn Clock>, wait: impl Fn()) {
    let repo = open(&db, clock, true).await;
    for resource in ["ran-out", "released"] {
        repo.acquire(tenant(), name(resource), owner("w"), ttl(1), None)
            .await
            .unwrap();
    }
    repo.release(tenant(), name("released"), owner("w"))
        .await
        .unwrap();
    wait();
    sweep(&repo).await;
    sweep(&repo).await;
    let granted = (HistoryEvent::Granted, "w".to_owned());
    assert_eq!(
        events(&repo, "ran-out").await,
        vec![granted.clone(), (HistoryEvent::Expired, "w".to_owned())]
    );
    assert_eq!(
        events(&repo, "released").await,
        vec![granted, (HistoryEvent::Released, "w".to_owned())],
        "a released lease's row is swept without another record"
    );
}

/// An expiry an observer saw and recorded is not recorded again when its row is swept.
async fn an_observed_expiry_is_not_swept_again(
    db: TestDatabase,
    clock: Arc<dyn Clock>,
    wait: impl Fn(),
) {
    let repo = open(&db, clock, true).await;
    let seen = repo
        .acquire(tenant(), name("seen"), owner("w"), ttl(1), None)
        .await
        .unwrap();
    let lock_domain::AcquireOutcome::Granted(seen) = seen else {
        panic!("granted: {seen:?}")
    };
    wait();
    assert!(repo
        .record_expiry(tenant(), name("seen"), owner("w"), seen.fencing_token)
        .await
        .unwrap());
    sweep(&repo).await;
    sweep(&repo).await;
    assert_eq!(
        events(&repo, "seen").await,
        vec![
            (HistoryEvent::Granted, "w".to_owned()),
            (HistoryEvent::Expired, "w".to_owned())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_an_observed_expiry_is_not_swept_again() {
    let clock = ManualClock::new();
    let moved = clock.clone();
    an_observed_expiry_is_not_swept_again(TestDatabase::sqlite(), Arc::new(clock), move || {
        moved.advance(Duration::from_millis(1_100))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_observed_expiry_is_not_swept_again() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    an_observed_expiry_is_not_swept_again(db, Arc::new(SystemClock), || {
        std::thread::sleep(Duration::from_millis(1_100))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_sweep_records_an_expiry_once() {
    let clock = ManualClock::new();
    let moved = clock.clone();
    a_sweep_records_an_expiry_once(TestDatabase::sqlite(), Arc::new(clock), move || {
        moved.advance(Duration::from_millis(1_100))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_sweep_records_an_expiry_once() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    a_sweep_records_an_expiry_once(db, Arc::new(SystemClock), || {
        std::thread::sleep(Duration::from_millis(1_100))
    })
    .await;
}

async fn a_process_without_history_records_none(db: TestDatabase) {
    let quiet = open(&db, Arc::new(SystemClock), false).await;
    quiet
        .acquire(tenant(), name("r"), owner("w"), ttl(30), None)
        .await
        .unwrap();
    quiet
        .release(tenant(), name("r"), owner("w"))
        .await
        .unwrap();
    assert_eq!(events(&quiet, "r").await, vec![]);
    assert_eq!(quiet.last_history_id().await.unwrap(), None);
    // Another process over the same database that records does.
    let recording = open(&db, Arc::new(SystemClock), true).await;
    recording
        .acquire(tenant(), name("r"), owner("v"), ttl(30), None)
        .await
        .unwrap();
    assert_eq!(
        events(&recording, "r").await,
        vec![(HistoryEvent::Granted, "v".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_process_without_history_records_none() {
    a_process_without_history_records_none(TestDatabase::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_process_without_history_records_none() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    a_process_without_history_records_none(db).await;
}

/// Two transactions draw history ids 1 and 2; the one with 2 commits first. The stream's read
/// stops before 2 until 1 has committed (or rolled back), then gives both in order: a reader
/// that went on from 2 would never see 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_the_stream_never_passes_an_id_still_in_flight() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Arc::new(SystemClock), true).await;
    let url = db.url_string();
    let insert = |resource: &str| {
        format!(
            "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
             VALUES ('default', '{resource}', 'w', 1, 9999999999999, nextval('fencing_tokens'))"
        )
    };
    let (mut slow, mut fast) = (
        PgConnection::establish(&url).unwrap(),
        PgConnection::establish(&url).unwrap(),
    );
    slow.batch_execute(&format!("BEGIN; {}", insert("slow")))
        .unwrap();
    fast.batch_execute(&insert("fast")).unwrap();
    for _ in 0..3 {
        let seen = repo.history_after(None, 100).await.unwrap();
        assert!(seen.is_empty(), "passed an id in flight: {seen:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    slow.batch_execute("COMMIT").unwrap();
    let mut seen = vec![];
    for _ in 0..50 {
        seen = repo.history_after(None, 100).await.unwrap();
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let names: Vec<&str> = seen.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["slow", "fast"]);
    // A transaction that rolls back leaves a gap the read goes past once it is settled.
    slow.batch_execute(&format!("BEGIN; {}; ROLLBACK", insert("gone")))
        .unwrap();
    fast.batch_execute(&insert("after")).unwrap();
    let mut after = vec![];
    for _ in 0..50 {
        after = repo.history_after(Some(seen[1].id), 100).await.unwrap();
        if !after.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let names: Vec<&str> = after.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["after"]);
    let tenant_page = repo
        .history(
            tenant(),
            HistoryQuery {
                subject: HistorySubject::Prefix(ResourcePrefix::default()),
                since: None,
                before: None,
                limit: ListLimit::parse(10).unwrap(),
            },
        )
        .await
        .unwrap();
    assert_eq!(tenant_page.records.len(), 3);
}
