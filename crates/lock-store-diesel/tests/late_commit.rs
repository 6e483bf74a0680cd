//! "503: nothing happened" must stay true enough that no lease is left held by nobody. A grant
//! whose COMMIT stalls past the caller's deadline (PostgreSQL's `statement_timeout` does not cover
//! COMMIT) lands after the caller heard 503: lockd undoes it. And a write whose caller went away
//! before it started never runs.
//!
//! The stalled COMMIT is a deferred constraint trigger that sleeps at commit time, in this test's
//! own database only.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use lock_domain::{
    AcquireOutcome, Claim, Freed, FreedHints, LeaseOp, LeaseStore, LeaseTerms, Place,
    RepositoryError, StoreEvents, SystemClock, UnheardGrant, UnheardKind,
};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

async fn open(config: StoreConfig) -> Arc<DieselLockRepository> {
    open_store(config, Arc::new(SystemClock)).await
}

/// Every grant of `slow` to `late` sleeps `seconds` in its COMMIT.
fn stall_commits_of_slow(db: &TestDatabase, seconds: f64) {
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!()
    };
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(&format!(
        "CREATE FUNCTION stall_commit() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_sleep({seconds}); RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER stall_commit AFTER INSERT OR UPDATE ON distributed_locks
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
         WHEN (NEW.resource = 'slow' AND NEW.owner = 'late' AND NEW.expires_at_ms > NEW.acquired_at_ms)
         EXECUTE FUNCTION stall_commit();"
    ))
    .expect("create the stalling trigger");
}

/// What the store reported of what it did on its own.
#[derive(Default)]
struct Reported(Mutex<Vec<UnheardGrant>>);

impl StoreEvents for Reported {
    fn unheard_grant(&self, grant: &UnheardGrant) {
        self.0.lock().unwrap().push(grant.clone());
    }

    fn sessions_expired(&self, _count: usize) {}
}

/// A store on `db` with a 500 ms statement timeout and `batch_connections` batching connections
/// (0: none), and what it reports of what it did on its own.
async fn reporting_store(
    db: &TestDatabase,
    batch_connections: u32,
) -> (Arc<DieselLockRepository>, Arc<Reported>) {
    let mut config = StoreConfig::new(db.url().clone());
    config.statement_timeout = Duration::from_millis(500);
    config.postgres_batch_connections = batch_connections;
    let reported = Arc::new(Reported::default());
    let events: Arc<dyn StoreEvents> = Arc::clone(&reported) as _;
    let repo = Arc::new(
        tokio::task::spawn_blocking(move || {
            DieselLockRepository::open_reporting(&config, Arc::new(SystemClock), events)
        })
        .await
        .expect("open task")
        .expect("open the store"),
    );
    (repo, reported)
}

/// After a stalled commit answered 503 (the caller gives up at its connection deadline, 2 s, at
/// the latest; the request started at `started`): waits for the commit to land (about 4 s after
/// the start) and for `slow` to be held by nobody (the undo follows at once), and returns the
/// one grant the store reported it undid (through its events port: the audit log's, in a
/// server).
async fn undone_once_the_commit_lands(
    repo: &DieselLockRepository,
    reported: &Reported,
    started: Instant,
) -> UnheardGrant {
    assert!(started.elapsed() < Duration::from_millis(3_500));
    tokio::time::sleep(Duration::from_millis(4_600).saturating_sub(started.elapsed())).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    while repo.status(tenant(), name("slow")).await.unwrap().is_some() {
        assert!(
            Instant::now() < deadline,
            "a grant answered 503 is held by nobody for its whole TTL"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let reported = reported.0.lock().unwrap().clone();
    assert_eq!(reported.len(), 1, "{reported:?}");
    reported[0].clone()
}

async fn a_grant_committed_after_its_503_is_undone(batch_connections: u32) {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let (repo, reported) = reporting_store(&db, batch_connections).await;
    stall_commits_of_slow(&db, 4.0);
    // Another process on the database, listening for leases that end.
    let elsewhere = open(StoreConfig::new(db.url().clone())).await;
    let mut hints = elsewhere
        .subscribe_freed()
        .await
        .expect("subscribe")
        .expect("PostgreSQL gives hints");

    let started = Instant::now();
    let outcome = repo
        .acquire(tenant(), name("slow"), owner("late"), ttl(60), None)
        .await;
    assert!(
        matches!(outcome, Err(RepositoryError::Unavailable(_))),
        "expected 503 before the stalled commit, got {outcome:?} after {:?}",
        started.elapsed()
    );
    let undone = &undone_once_the_commit_lands(&repo, &reported, started).await;
    assert_eq!(
        (undone.kind, undone.name.as_str(), undone.owner.as_str()),
        (UnheardKind::Lock, "slow", "late")
    );
    assert!(undone.undone, "{undone:?}");
    // The undo freed the lease as a release would: waiters everywhere hear of it (the grant,
    // and the reads, are no hints), rather than wait for the lease's end.
    let heard = tokio::time::timeout(Duration::from_secs(10), hints.next()).await;
    assert_eq!(
        heard,
        Ok(Some(Freed::Lock {
            tenant: tenant(),
            resource: name("slow")
        })),
        "the undo is a hint to every process"
    );
    // Anyone may take it now, with a larger token.
    let next = repo
        .acquire(tenant(), name("slow"), owner("next"), ttl(60), None)
        .await
        .unwrap();
    assert!(matches!(next, AcquireOutcome::Granted(_)), "{next:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batched_a_grant_committed_after_its_503_is_undone() {
    a_grant_committed_after_its_503_is_undone(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_unbatched_a_grant_committed_after_its_503_is_undone() {
    a_grant_committed_after_its_503_is_undone(0).await;
}

/// A lock's release and the grant to the next in line commit together (`apply_then`): when
/// that commit stalls past the caller's deadline, both are answered 503, and the grant that then
/// lands is undone, reported once: the lock is left free, not held by a waiter who gave up.
async fn a_pair_committed_after_its_503_leaves_the_lock_free(batch_connections: u32) {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let (repo, reported) = reporting_store(&db, batch_connections).await;
    let first = repo
        .acquire(tenant(), name("slow"), owner("early"), ttl(60), None)
        .await
        .unwrap();
    assert!(matches!(first, AcquireOutcome::Granted(_)), "{first:?}");
    stall_commits_of_slow(&db, 4.0);

    let started = Instant::now();
    let release = LeaseOp::Release {
        place: Place::Lock(name("slow")),
        owner: owner("early"),
    };
    let grant = LeaseOp::Acquire {
        place: Place::Lock(name("slow")),
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(owner("late"), ttl(60), None),
    };
    let (released, granted) = repo.apply_then(tenant(), release, grant).await;
    assert!(
        matches!(released, Err(RepositoryError::Unavailable(_)))
            && matches!(granted, Err(RepositoryError::Unavailable(_))),
        "both 503 before the stalled commit, got {released:?} and {granted:?} after {:?}",
        started.elapsed()
    );
    let undone = undone_once_the_commit_lands(&repo, &reported, started).await;
    assert_eq!(
        (undone.name.as_str(), undone.owner.as_str()),
        ("slow", "late")
    );
    assert!(undone.undone, "{undone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batched_a_pair_committed_after_its_503_leaves_the_lock_free() {
    a_pair_committed_after_its_503_leaves_the_lock_free(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_unbatched_a_pair_committed_after_its_503_leaves_the_lock_free() {
    a_pair_committed_after_its_503_leaves_the_lock_free(0).await;
}

/// SQLite: the writer is held up by another process's write lock; an acquire whose request is
/// dropped meanwhile must not run once the writer gets the lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_write_whose_caller_went_away_before_it_started_never_runs() {
    let db = TestDatabase::sqlite();
    let repo = open(StoreConfig::new(db.url().clone())).await;
    let DatabaseUrl::Sqlite(path) = db.url() else {
        unreachable!()
    };
    let mut other = diesel::SqliteConnection::establish(&path.to_string_lossy()).expect("open");
    other
        .batch_execute("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE")
        .expect("take the write lock");
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        repo.acquire(tenant(), name("gone"), owner("ghost"), ttl(60), None),
    )
    .await;
    assert!(
        dropped.is_err(),
        "the acquire should wait for the write lock"
    );
    other.batch_execute("COMMIT").expect("let the writer go");
    // A later write goes through the writer after the dropped one.
    let later = repo
        .acquire(tenant(), name("other"), owner("someone"), ttl(60), None)
        .await
        .unwrap();
    assert!(matches!(later, AcquireOutcome::Granted(_)));
    assert_eq!(
        repo.status(tenant(), name("gone")).await.unwrap(),
        None,
        "the write of a caller that went away ran, and its lease is held by nobody"
    );
}
