//! The PostgreSQL batcher under concurrency: many requests' writes run together must each be
//! answered as if run alone, operations on one key keep their order, and a row that blocks its
//! statement fails only its own operation, which then has changed nothing.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use lock_domain::testing::ManualClock;
use lock_domain::{AcquireOutcome, ReleaseResult, RenewResult, RepositoryError};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

async fn open(
    db: &TestDatabase,
    statement_timeout: Duration,
    batch_connections: u32,
) -> Arc<DieselLockRepository> {
    let mut config = StoreConfig::new(db.url().clone());
    config.statement_timeout = statement_timeout;
    config.postgres_batch_connections = batch_connections;
    let clock = Arc::new(ManualClock::new());
    let repo = tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .expect("open task")
        .expect("open the PostgreSQL store");
    Arc::new(repo)
}

fn granted(outcome: AcquireOutcome) -> lock_domain::Lock {
    match outcome {
        AcquireOutcome::Granted(lock) => lock,
        AcquireOutcome::Held => panic!("expected a grant, got Held"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_on_many_keys_are_answered_as_if_alone() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Duration::from_millis(1_500), 2).await;
    const KEYS: usize = 64;
    let acquires = (0..KEYS).map(|i| {
        let repo = Arc::clone(&repo);
        tokio::spawn(async move {
            repo.acquire(
                tenant(),
                name(&format!("r{i}")),
                owner(&format!("o{i}")),
                ttl(60),
                None,
            )
            .await
        })
    });
    let mut first = Vec::new();
    for task in acquires {
        first.push(granted(task.await.unwrap().unwrap()));
    }
    let mut tokens: Vec<i64> = first.iter().map(|l| l.fencing_token.value()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), KEYS, "every grant has its own token");

    // Mixed kinds at once, including misses that need telling apart: even keys are released by
    // their owner, odd ones renewed; a stranger tries the same on every key; unknown keys too.
    let mut tasks = Vec::new();
    for i in 0..KEYS {
        let own = Arc::clone(&repo);
        tasks.push(tokio::spawn(async move {
            let repo = own;
            let (t, r, o) = (tenant(), name(&format!("r{i}")), owner(&format!("o{i}")));
            if i % 2 == 0 {
                match repo.release(t, r, o).await.unwrap() {
                    ReleaseResult::Released(token) => token.value(),
                    other => panic!("r{i}: {other:?}"),
                }
            } else {
                match repo.renew(t, r, o, ttl(120), None).await.unwrap() {
                    RenewResult::Renewed(lock) => lock.fencing_token.value(),
                    other => panic!("r{i}: {other:?}"),
                }
            }
        }));
        let unknown = Arc::clone(&repo);
        tasks.push(tokio::spawn(async move {
            let result = unknown
                .release(tenant(), name(&format!("unknown{i}")), owner("x"))
                .await
                .unwrap();
            assert_eq!(result, ReleaseResult::NotFound);
            0
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let token = task.await.unwrap();
        if i % 2 == 0 {
            assert_eq!(token, first[i / 2].fencing_token.value(), "r{}", i / 2);
        }
    }
    for (i, before) in first.iter().enumerate() {
        let stranger = owner("stranger");
        let (t, r) = (tenant(), name(&format!("r{i}")));
        let release = repo.release(t.clone(), r.clone(), stranger.clone()).await;
        let acquire = repo
            .acquire(t.clone(), r.clone(), stranger, ttl(60), None)
            .await;
        if i % 2 == 0 {
            assert_eq!(release.unwrap(), ReleaseResult::NotFound, "r{i}");
            let lock = granted(acquire.unwrap());
            assert!(lock.fencing_token > before.fencing_token, "r{i}");
        } else {
            assert_eq!(release.unwrap(), ReleaseResult::Forbidden, "r{i}");
            assert!(matches!(acquire.unwrap(), AcquireOutcome::Held), "r{i}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operations_on_one_key_run_in_the_order_they_arrived() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Duration::from_millis(1_500), 2).await;
    for round in 0..20 {
        let r = name(&format!("ordered{round}"));
        // `join!` polls in order, and each operation is queued on its first poll.
        let (a, released, b, a_again) = tokio::join!(
            repo.acquire(tenant(), r.clone(), owner("a"), ttl(60), None),
            repo.release(tenant(), r.clone(), owner("a")),
            repo.acquire(tenant(), r.clone(), owner("b"), ttl(60), None),
            repo.acquire(tenant(), r.clone(), owner("a"), ttl(60), None),
        );
        let a = granted(a.unwrap());
        assert_eq!(released.unwrap(), ReleaseResult::Released(a.fencing_token));
        let b = granted(b.unwrap());
        assert!(b.fencing_token > a.fencing_token);
        assert!(matches!(a_again.unwrap(), AcquireOutcome::Held));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_row_locked_elsewhere_fails_only_its_own_operation_and_changes_nothing() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    // One batch connection, and every operation queued in one go (`join_all` queues each on its
    // first poll): the blocked renew shares its batch with the others.
    let repo = open(&db, Duration::from_millis(300), 1).await;
    let stuck = granted(
        repo.acquire(tenant(), name("stuck"), owner("holder"), ttl(60), None)
            .await
            .unwrap(),
    );
    // Another client's transaction holds the row lock of "stuck" meanwhile.
    let url = db.url_string();
    let mut blocker = tokio::task::spawn_blocking(move || {
        let mut conn = PgConnection::establish(&url).expect("connect");
        conn.batch_execute(
            "BEGIN; SELECT 1 FROM distributed_locks WHERE resource = 'stuck' FOR UPDATE",
        )
        .expect("lock the row");
        conn
    })
    .await
    .unwrap();

    let acquires = (0..16).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire(
                tenant(),
                name(&format!("free{i}")),
                owner("o"),
                ttl(60),
                None,
            )
            .await
        }
    });
    let (first_half, renew, second_half) = tokio::join!(
        futures::future::join_all(acquires.clone().take(8)),
        repo.renew(tenant(), name("stuck"), owner("holder"), ttl(600), None),
        futures::future::join_all(acquires.skip(8)),
    );
    for acquired in first_half.into_iter().chain(second_half) {
        granted(acquired.expect("an operation on a free row succeeds"));
    }
    match renew {
        Err(RepositoryError::Unavailable(_)) => {}
        other => panic!("the blocked renew answers unavailable, not {other:?}"),
    }

    tokio::task::spawn_blocking(move || blocker.batch_execute("ROLLBACK").expect("rollback"))
        .await
        .unwrap();
    let after = repo
        .status(tenant(), name("stuck"))
        .await
        .unwrap()
        .expect("still held");
    assert_eq!(after, stuck, "the renew that answered 503 changed nothing");
}
