//! PostgreSQL: every release and renew is heard, within 500 ms, by the `LISTEN` subscription of
//! every process that shares the database; grants and refused releases are not. The hint
//! connections use TLS as the pool's do (`sslmode=require`).

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_domain::testing::ManualClock;
use lock_domain::FreedHints;
use lock_domain::{AcquireOutcome, Freed, FreedLocks, Owner, ResourceName, Tenant, Ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

async fn open(db: &TestDatabase) -> DieselLockRepository {
    open_at(db.url().clone()).await
}

async fn open_at(url: DatabaseUrl) -> DieselLockRepository {
    let config = StoreConfig::new(url);
    tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(ManualClock::new()))
    })
    .await
    .expect("open task")
    .expect("open the PostgreSQL store")
}

/// Two stores on `db`: one subscribed to hints (kept open while its hints are read), the other
/// to write with.
async fn listening(
    db: &TestDatabase,
) -> (
    DieselLockRepository,
    DieselLockRepository,
    Box<dyn FreedLocks>,
) {
    let listener = open(db).await;
    let other = open(db).await;
    let hints = listener
        .subscribe_freed()
        .await
        .expect("subscribe")
        .expect("PostgreSQL gives hints");
    (listener, other, hints)
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
    let (_listener, other, mut hints) = listening(&db).await;
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

/// With `sslmode=require` (a database across a network), the listening and notifying
/// connections use TLS as the pool's do, and hints flow: before, they connected without TLS,
/// which such a server refuses, and every waiter fell back to polling.
#[tokio::test]
async fn hints_flow_over_tls_when_the_url_requires_it() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let DatabaseUrl::Postgres(plain) = db.url().clone() else {
        unreachable!()
    };
    let separator = if plain.contains('?') { '&' } else { '?' };
    let url = DatabaseUrl::Postgres(format!("{plain}{separator}sslmode=require"));
    let listener = open_at(url.clone()).await;
    let other = open_at(url).await;
    let mut hints = listener
        .subscribe_freed()
        .await
        .expect("subscribe over TLS")
        .expect("PostgreSQL gives hints");
    let (tenant, resource, a, _) = names();
    let ttl = Ttl::parse(30, 86_400).unwrap();
    other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    other
        .release(tenant.clone(), resource.clone(), a.clone())
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(5)).await,
        Some(Freed::Lock {
            tenant: tenant.clone(),
            resource: resource.clone(),
        }),
        "the release is heard"
    );

    // Every connection of the two stores is encrypted, the listener's and the notifier's too.
    let plain_sessions = tokio::task::spawn_blocking(move || {
        use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};
        #[derive(QueryableByName)]
        struct Sessions {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            plain: i64,
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            listening: i64,
        }
        let mut admin = PgConnection::establish(&plain).expect("connect");
        diesel::sql_query(
            "SELECT count(*) FILTER (WHERE NOT s.ssl) AS plain,
                    count(*) FILTER (WHERE a.query LIKE 'LISTEN%' OR a.query = 'SELECT 1') AS listening
             FROM pg_stat_activity AS a JOIN pg_stat_ssl AS s USING (pid)
             WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()",
        )
        .get_result::<Sessions>(&mut admin)
        .expect("read the sessions")
    })
    .await
    .unwrap();
    assert_eq!(plain_sessions.plain, 0, "a connection without TLS");
    assert!(plain_sessions.listening >= 1, "the listener was not found");
}

/// A lock handed from one owner to a writer in one commit (`apply_then`, as a queue hands a
/// release to its next waiter) was never free: no hint. Handed to a reader, others may share
/// it: a hint.
#[tokio::test]
async fn a_lock_handed_to_a_writer_in_one_commit_is_not_hinted() {
    use lock_domain::{Claim, LeaseOp, LeaseOutcome, LeaseStore, LeaseTerms, Place};
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let (_listener, other, mut hints) = listening(&db).await;
    let (tenant, resource, a, b) = names();
    let ttl = Ttl::parse(30, 86_400).unwrap();
    let release = |owner: &Owner| LeaseOp::Release {
        place: Place::Lock(resource.clone()),
        owner: owner.clone(),
    };
    let acquire = |owner: &Owner, claim: Claim| LeaseOp::Acquire {
        place: Place::Lock(resource.clone()),
        claim,
        terms: LeaseTerms::new(owner.clone(), ttl, None),
    };
    let expected = Freed::Lock {
        tenant: tenant.clone(),
        resource: resource.clone(),
    };

    let granted = other
        .acquire(tenant.clone(), resource.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    let elsewhere = ResourceName::parse("orders:8").unwrap();
    let granted = other
        .acquire(tenant.clone(), elsewhere.clone(), a.clone(), ttl, None)
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    let (released, handed) = other
        .apply_then(tenant.clone(), release(&a), acquire(&b, Claim::Exclusive))
        .await;
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert!(matches!(handed, Ok(LeaseOutcome::Granted(_))), "{handed:?}");
    // Then a release alone, of another lock: hints arrive in the order their writes
    // committed, so the first one heard would be the hand-over's, had it sent one.
    other
        .release(tenant.clone(), elsewhere.clone(), a.clone())
        .await
        .unwrap();
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(5)).await,
        Some(Freed::Lock {
            tenant: tenant.clone(),
            resource: elsewhere,
        }),
        "handed to a writer: never free, so the next hint is the other lock's"
    );

    let (released, reader) = other
        .apply_then(tenant.clone(), release(&b), acquire(&a, Claim::Shared))
        .await;
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert!(matches!(reader, Ok(LeaseOutcome::Granted(_))), "{reader:?}");
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(5)).await,
        Some(expected.clone()),
        "handed to a reader, whom others may join"
    );
}
