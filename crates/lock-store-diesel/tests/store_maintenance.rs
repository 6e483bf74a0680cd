//! Store behaviour outside the port's contract, on both backends: sweeping expired rows, and
//! (PostgreSQL) one clock for every instance.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::ManualClock;
use lock_domain::{
    AcquireOutcome, Clock, LockRepository, Owner, ReleaseResult, ResourceName, Tenant, Ttl,
};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).unwrap()
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).unwrap()
}

fn ttl(seconds: i64) -> Ttl {
    Ttl::parse(seconds, 86_400).unwrap()
}

async fn open(
    db: &TestDatabase,
    clock: Arc<dyn Clock>,
    sweep_grace: Duration,
) -> DieselLockRepository {
    let mut config = StoreConfig::new(db.url().clone());
    config.sweep_grace = sweep_grace;
    tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .unwrap()
        .unwrap()
}

async fn token(repo: &DieselLockRepository, resource: &str, who: &str, seconds: i64) -> i64 {
    match repo
        .acquire(
            Tenant::default_tenant(),
            name(resource),
            owner(who),
            ttl(seconds),
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock.fencing_token.value(),
        AcquireOutcome::Held => panic!("{resource} held"),
    }
}

/// Expired and released rows are deleted in bounded batches; live locks stay; tokens keep
/// increasing after the rows that carried them are gone.
async fn sweeping_keeps_live_locks_and_token_order(
    db: TestDatabase,
    clock: ManualClock,
    real_time: bool,
) {
    let repo = open(&db, Arc::new(clock.clone()), Duration::ZERO).await;
    let mut highest = 0;
    for i in 0..25 {
        highest = highest.max(token(&repo, &format!("short-{i}"), "w", 1).await);
    }
    let live = token(&repo, "live", "w", 600).await;
    let released = token(&repo, "released", "w", 600).await;
    assert_eq!(
        repo.release(Tenant::default_tenant(), name("released"), owner("w"))
            .await
            .unwrap(),
        ReleaseResult::Released(lock_domain::FencingToken::new(released).unwrap())
    );
    highest = highest.max(live).max(released);
    if real_time {
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    } else {
        clock.advance(Duration::from_millis(1_100));
    }
    let mut total = 0;
    loop {
        let deleted = repo.sweep_expired(10).await.unwrap();
        assert!(deleted <= 10, "a batch is bounded: {deleted}");
        total += deleted;
        if deleted < 10 {
            break;
        }
    }
    // 25 expired, plus the released row where release only ends the lease (PostgreSQL).
    assert!((25..=26).contains(&total), "swept {total}");
    assert_eq!(repo.sweep_expired(10).await.unwrap(), 0);
    assert!(
        repo.status(Tenant::default_tenant(), name("live"))
            .await
            .unwrap()
            .is_some(),
        "a live lock is never swept"
    );
    for resource in ["short-3", "released", "fresh"] {
        let next = token(&repo, resource, "w2", 30).await;
        assert!(
            next > highest,
            "{resource}: {next} after sweeping must exceed {highest}"
        );
        highest = next;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sweeping_keeps_live_locks_and_token_order() {
    sweeping_keeps_live_locks_and_token_order(TestDatabase::sqlite(), ManualClock::new(), false)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sweeping_keeps_live_locks_and_token_order() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    sweeping_keeps_live_locks_and_token_order(db, ManualClock::new(), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sweeping_respects_the_grace_period() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let repo = open(&db, Arc::new(clock.clone()), Duration::from_secs(60)).await;
    token(&repo, "r", "w", 1).await;
    clock.advance(Duration::from_secs(30));
    assert_eq!(
        repo.sweep_expired(100).await.unwrap(),
        0,
        "expired 29 s ago, grace 60 s"
    );
    clock.advance(Duration::from_secs(32));
    assert_eq!(repo.sweep_expired(100).await.unwrap(), 1);
}

/// Two instances on one PostgreSQL database whose own clocks are 60 s apart still agree on who
/// holds a lock, because the database server's clock decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_instances_with_skewed_clocks_agree_on_the_holder() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let behind = ManualClock::new();
    let ahead = ManualClock::new();
    ahead.advance(Duration::from_secs(60));
    let a = open(&db, Arc::new(behind), Duration::from_secs(60)).await;
    let b = open(&db, Arc::new(ahead), Duration::from_secs(60)).await;

    let lock = match a
        .acquire(Tenant::default_tenant(), name("r"), owner("alice"), ttl(30))
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock,
        AcquireOutcome::Held => panic!("free resource held"),
    };
    // With its own clock 60 s ahead, b would think alice's 30 s lease long over.
    assert_eq!(
        b.acquire(Tenant::default_tenant(), name("r"), owner("bob"), ttl(30))
            .await
            .unwrap(),
        AcquireOutcome::Held
    );
    assert_eq!(
        b.status(Tenant::default_tenant(), name("r")).await.unwrap(),
        Some(lock.clone())
    );
    assert_eq!(
        b.release(Tenant::default_tenant(), name("r"), owner("bob"))
            .await
            .unwrap(),
        ReleaseResult::Forbidden
    );
    let wall = chrono::Utc::now();
    let skew = (lock.acquired_at - wall).num_seconds().abs();
    assert!(
        skew < 5,
        "timestamps come from the server's clock, not a manual one: {lock:?}"
    );

    // And the other way round.
    match b
        .acquire(Tenant::default_tenant(), name("s"), owner("bob"), ttl(30))
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(_) => {}
        AcquireOutcome::Held => panic!("free resource held"),
    }
    assert_eq!(
        a.acquire(Tenant::default_tenant(), name("s"), owner("alice"), ttl(30))
            .await
            .unwrap(),
        AcquireOutcome::Held
    );
}
