//! SQLite: a process hears of the commits other processes make on the same file (a hint that
//! any lock may have been freed), and never of its own; while it wants no hints its writer
//! looks for none, and the first hint once they are wanted again covers what was committed
//! meanwhile; the subscription ends with the store.
//!
//! Two stores opened on one file stand for two processes: each has its own writer connection,
//! which is what SQLite tells apart.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::calls::LeaseCalls;
use lock_domain::{
    AcquireOutcome, Freed, FreedHints, FreedLocks, Owner, ResourceName, SystemClock, Tenant, Ttl,
};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

/// Far longer than the writer's probe period (5 ms) and its idle wake-up (1 s), so that only a
/// hint that never comes runs it out.
const HEARD_WITHIN: Duration = Duration::from_secs(10);

/// Long enough for a hint that should not come to have come (several probe periods).
const QUIET_FOR: Duration = Duration::from_millis(300);

async fn open(path: &std::path::Path) -> DieselLockRepository {
    let config = StoreConfig::new(DatabaseUrl::Sqlite(path.to_path_buf()));
    tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, Arc::new(SystemClock)))
        .await
        .expect("open task")
        .expect("open the SQLite store")
}

/// The next hint, `Ok(None)` when the subscription ended, `Err` when none came in time.
async fn next_within(
    hints: &mut Box<dyn FreedLocks>,
    within: Duration,
) -> Result<Option<Freed>, tokio::time::error::Elapsed> {
    tokio::time::timeout(within, hints.next()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_of_another_process_are_heard_and_this_process_s_own_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locks.db");
    let listener = open(&path).await;
    let other = open(&path).await;
    let tenant = Tenant::default_tenant();
    let resource = ResourceName::parse("orders:7").unwrap();
    let (a, b) = (Owner::parse("a").unwrap(), Owner::parse("b").unwrap());
    let ttl = Ttl::parse(30, 86_400).unwrap();

    let mut hints = listener
        .subscribe_freed()
        .await
        .expect("subscribe")
        .expect("SQLite gives hints");
    hints.wanted(true);
    // The first look of the writer after a subscription is a hint in itself: whatever was
    // committed between the subscription and that look would otherwise go unheard.
    assert_eq!(
        next_within(&mut hints, HEARD_WITHIN).await,
        Ok(Some(Freed::Unknown)),
        "the subscription's first hint"
    );

    // This process's own writes: its waiters hear of them directly, not through hints.
    let granted = listener
        .acquire(tenant.clone(), resource.clone(), b.clone(), ttl, None)
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    listener
        .release(tenant.clone(), resource.clone(), b.clone())
        .await
        .unwrap();
    assert!(
        next_within(&mut hints, QUIET_FOR).await.is_err(),
        "a process's own commits are no hint to it"
    );

    // Another process's grant and release: each commit is heard.
    let granted = other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    assert_eq!(
        next_within(&mut hints, HEARD_WITHIN).await,
        Ok(Some(Freed::Unknown)),
        "another process's commit"
    );
    other
        .release(tenant.clone(), resource.clone(), a.clone())
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, HEARD_WITHIN).await,
        Ok(Some(Freed::Unknown)),
        "another process's release"
    );
    // Nothing more was committed: no more hints.
    assert!(next_within(&mut hints, QUIET_FOR).await.is_err());

    // Hints not wanted (no request waits): the writer does not look, so another process's
    // commit is not heard...
    hints.wanted(false);
    other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    assert!(
        next_within(&mut hints, QUIET_FOR).await.is_err(),
        "no hint while none is wanted"
    );
    // ...until they are wanted again: the first look then sees that commit.
    hints.wanted(true);
    assert_eq!(
        next_within(&mut hints, HEARD_WITHIN).await,
        Ok(Some(Freed::Unknown)),
        "a commit made while no hint was wanted"
    );
    assert!(next_within(&mut hints, QUIET_FOR).await.is_err());

    // The store (and its writer thread) gone, the subscription ends.
    drop(listener);
    assert_eq!(next_within(&mut hints, HEARD_WITHIN).await, Ok(None));
}
