//! PostgreSQL: every release and renew is heard, within 500 ms, by the `LISTEN` subscription of
//! every process that shares the database; grants and refused releases are not.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_domain::testing::ManualClock;
use lock_domain::FreedHints;
use lock_domain::{AcquireOutcome, Freed, FreedLocks, Owner, ResourceName, Tenant, Ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

async fn open(db: &TestDatabase) -> DieselLockRepository {
    let config = StoreConfig::new(db.url().clone());
    tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(ManualClock::new()))
    })
    .await
    .expect("open task")
    .expect("open the PostgreSQL store")
}

fn names() -> (Tenant, ResourceName, Owner, Owner) {
    (
        Tenant::default_tenant(),
        ResourceName::parse("orders:7").unwrap(),
        Owner::parse("a").unwrap(),
        Owner::parse("b").unwrap(),
    )
}

async fn next_within(hints: &mut Box<dyn FreedLocks>, within: Duration) -> Option<Freed> {
    tokio::time::timeout(within, hints.next())
        .await
        .ok()
        .flatten()
}

#[tokio::test]
async fn a_release_in_another_process_is_heard_and_grants_are_not() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let listener = open(&db).await;
    let other = open(&db).await;
    let mut hints = listener
        .subscribe_freed()
        .await
        .expect("subscribe")
        .expect("PostgreSQL gives hints");
    let (tenant, resource, a, b) = names();
    let ttl = Ttl::parse(30, 86_400).unwrap();

    let granted = other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    assert_eq!(
        next_within(&mut hints, Duration::from_millis(300)).await,
        None,
        "a grant frees nothing"
    );

    let expected = Freed::Lock {
        tenant: tenant.clone(),
        resource: resource.clone(),
    };
    other
        .renew(
            tenant.clone(),
            resource.clone(),
            a.clone(),
            Ttl::parse(5, 86_400).unwrap(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(2))
            .await
            .as_ref(),
        Some(&expected),
        "a renew may shorten the lease: a hint"
    );

    let released_at = Instant::now();
    other
        .release(tenant.clone(), resource.clone(), a.clone())
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(2))
            .await
            .as_ref(),
        Some(&expected)
    );
    let heard_after = released_at.elapsed();
    assert!(
        heard_after < Duration::from_millis(500),
        "heard after {heard_after:?}"
    );

    // A release that matches nothing (another owner's lock) is no hint.
    other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    other
        .release(tenant.clone(), resource.clone(), b.clone())
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, Duration::from_millis(300)).await,
        None
    );
}
