//! Shared and exclusive acquires through the service: readers coexist, a waiting writer is not
//! overtaken by later readers of this process, a change of mode is refused, and status, release,
//! renew and list see every holder.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    Hold, ListLimit, ListQuery, LockMode, Owner, ReleaseResult, RenewResult, ResourceName,
    ResourcePrefix, SystemClock, Tenant, Ttl,
};

use crate::{AcquireRequest, Acquired, LockService};

fn service() -> LockService {
    LockService::over(Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock))))
}

fn tenant() -> Tenant {
    Tenant::default_tenant()
}

fn doc() -> ResourceName {
    ResourceName::parse("doc").unwrap()
}

fn owner(who: &str) -> Owner {
    Owner::parse(who).unwrap()
}

fn request(who: &str, mode: LockMode, wait_ms: u64) -> AcquireRequest {
    AcquireRequest {
        tenant: tenant(),
        resource: doc(),
        mode,
        terms: lock_domain::LeaseTerms::new(owner(who), Ttl::parse(60, 3_600).unwrap(), None),
        wait: Duration::from_millis(wait_ms),
    }
}

async fn acquire(service: &LockService, who: &str, mode: LockMode, wait_ms: u64) -> Acquired {
    service
        .locks()
        .acquire(request(who, mode, wait_ms), || false)
        .await
        .unwrap()
}

fn granted_in(outcome: &Acquired, mode: LockMode) -> bool {
    matches!(outcome, Acquired::Granted { lock, .. } if lock.mode == mode)
}

async fn release(service: &LockService, who: &str) -> ReleaseResult {
    service
        .locks()
        .release(tenant(), doc(), owner(who))
        .await
        .unwrap()
}

#[tokio::test]
async fn readers_share_and_a_writer_waits_for_the_last_of_them() {
    let service = service();
    assert!(granted_in(
        &acquire(&service, "r1", LockMode::Shared, 0).await,
        LockMode::Shared
    ));
    assert!(granted_in(
        &acquire(&service, "r2", LockMode::Shared, 0).await,
        LockMode::Shared
    ));
    // The writer is refused, and told by whom: the two readers.
    match acquire(&service, "w", LockMode::Exclusive, 0).await {
        Acquired::Held { holders } => {
            let owners: Vec<&str> = holders.iter().map(|lock| lock.owner.as_str()).collect();
            assert_eq!(owners, ["r1", "r2"]);
        }
        other => panic!("expected held by the readers, got {other:?}"),
    }
    let Some(Hold::Shared(holders)) = service.locks().status(tenant(), doc()).await.unwrap() else {
        panic!("a shared hold");
    };
    assert_eq!(holders.len(), 2);
    let writer = {
        let service = service.clone();
        tokio::spawn(async move { acquire(&service, "w", LockMode::Exclusive, 5_000).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(matches!(
        release(&service, "r1").await,
        ReleaseResult::Released(_)
    ));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!writer.is_finished(), "a reader still holds the lock");
    let renewed = service
        .locks()
        .renew(
            tenant(),
            doc(),
            owner("r2"),
            Ttl::parse(30, 3_600).unwrap(),
            None,
        )
        .await
        .unwrap();
    assert!(matches!(renewed, RenewResult::Renewed(lock) if lock.mode == LockMode::Shared));
    assert!(matches!(
        release(&service, "r2").await,
        ReleaseResult::Released(_)
    ));
    let outcome = tokio::time::timeout(Duration::from_secs(2), writer)
        .await
        .expect("the writer is granted once the readers are gone")
        .unwrap();
    assert!(
        matches!(outcome, Acquired::Granted { ref lock, waited: true } if lock.mode == LockMode::Exclusive)
    );
    assert_eq!(release(&service, "r2").await, ReleaseResult::Forbidden);
}

#[tokio::test]
async fn a_waiting_writer_is_not_overtaken_by_later_readers() {
    let service = service();
    assert!(granted_in(
        &acquire(&service, "r1", LockMode::Shared, 0).await,
        LockMode::Shared
    ));
    let writer = {
        let service = service.clone();
        tokio::spawn(async move { acquire(&service, "w", LockMode::Exclusive, 5_000).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Readers hold the lock, but a writer waits: a new reader does not barge in...
    assert!(matches!(
        acquire(&service, "r2", LockMode::Shared, 0).await,
        Acquired::Held { .. }
    ));
    // ...and one that waits queues behind the writer.
    let reader = {
        let service = service.clone();
        tokio::spawn(async move { acquire(&service, "r3", LockMode::Shared, 5_000).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!reader.is_finished());
    // The holder itself is re-granted at once.
    assert!(granted_in(
        &acquire(&service, "r1", LockMode::Shared, 0).await,
        LockMode::Shared
    ));
    release(&service, "r1").await;
    let written = tokio::time::timeout(Duration::from_secs(2), writer)
        .await
        .unwrap()
        .unwrap();
    assert!(granted_in(&written, LockMode::Exclusive));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!reader.is_finished(), "the writer holds the lock");
    release(&service, "w").await;
    let read = tokio::time::timeout(Duration::from_secs(2), reader)
        .await
        .unwrap()
        .unwrap();
    assert!(granted_in(&read, LockMode::Shared));
}

#[tokio::test]
async fn the_same_owner_in_the_other_mode_is_refused() {
    let service = service();
    assert!(granted_in(
        &acquire(&service, "a", LockMode::Shared, 0).await,
        LockMode::Shared
    ));
    assert_eq!(
        acquire(&service, "a", LockMode::Exclusive, 0).await,
        Acquired::ModeMismatch
    );
    assert_eq!(
        acquire(&service, "a", LockMode::Exclusive, 200).await,
        Acquired::ModeMismatch
    );
    release(&service, "a").await;
    assert!(granted_in(
        &acquire(&service, "a", LockMode::Exclusive, 0).await,
        LockMode::Exclusive
    ));
    assert_eq!(
        acquire(&service, "a", LockMode::Shared, 0).await,
        Acquired::ModeMismatch
    );
    assert_eq!(
        acquire(&service, "a", LockMode::Shared, 200).await,
        Acquired::ModeMismatch
    );
    assert!(matches!(
        acquire(&service, "b", LockMode::Shared, 0).await,
        Acquired::Held { .. }
    ));
}

#[tokio::test]
async fn a_listing_shows_every_shared_holder() {
    let service = service();
    acquire(&service, "r1", LockMode::Shared, 0).await;
    acquire(&service, "r2", LockMode::Shared, 0).await;
    let other = AcquireRequest {
        resource: ResourceName::parse("zed").unwrap(),
        ..request("w", LockMode::Exclusive, 0)
    };
    service.locks().acquire(other, || false).await.unwrap();
    let query = ListQuery {
        prefix: ResourcePrefix::parse("").unwrap(),
        after: None,
        limit: ListLimit::parse(10).unwrap(),
    };
    let page = service.locks().list(tenant(), query).await.unwrap();
    let seen: Vec<(String, String, LockMode)> = page
        .locks
        .iter()
        .map(|l| {
            (
                l.lock.resource.as_str().to_owned(),
                l.lock.owner.as_str().to_owned(),
                l.lock.mode,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("doc".into(), "r1".into(), LockMode::Shared),
            ("doc".into(), "r2".into(), LockMode::Shared),
            ("zed".into(), "w".into(), LockMode::Exclusive),
        ]
    );
    assert!(page
        .locks
        .iter()
        .all(|l| l.ttl_remaining > Duration::from_secs(50)));
}

#[tokio::test]
async fn every_reader_queued_behind_a_writer_is_granted_when_it_leaves() {
    let service = service();
    assert!(granted_in(
        &acquire(&service, "w", LockMode::Exclusive, 0).await,
        LockMode::Exclusive
    ));
    let readers: Vec<_> = ["r1", "r2", "r3"]
        .into_iter()
        .map(|who| {
            let service = service.clone();
            tokio::spawn(async move { acquire(&service, who, LockMode::Shared, 5_000).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    release(&service, "w").await;
    for reader in readers {
        let outcome = tokio::time::timeout(Duration::from_millis(500), reader)
            .await
            .expect("every queued reader is granted at once, not at the first one's expiry")
            .unwrap();
        assert!(granted_in(&outcome, LockMode::Shared), "{outcome:?}");
    }
}

#[tokio::test]
async fn a_holder_asking_for_the_other_mode_is_refused_even_behind_waiters() {
    let service = service();
    acquire(&service, "h", LockMode::Exclusive, 0).await;
    let waiter = {
        let service = service.clone();
        tokio::spawn(async move { acquire(&service, "w2", LockMode::Exclusive, 5_000).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    for wait_ms in [0, 1_000] {
        assert_eq!(
            acquire(&service, "h", LockMode::Shared, wait_ms).await,
            Acquired::ModeMismatch,
            "wait {wait_ms} ms"
        );
    }
    release(&service, "h").await;
    assert!(granted_in(&waiter.await.unwrap(), LockMode::Exclusive));
    release(&service, "w2").await;
    acquire(&service, "r", LockMode::Shared, 0).await;
    let writer = {
        let service = service.clone();
        tokio::spawn(async move { acquire(&service, "w", LockMode::Exclusive, 5_000).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        acquire(&service, "r", LockMode::Exclusive, 1_000).await,
        Acquired::ModeMismatch
    );
    release(&service, "r").await;
    assert!(granted_in(&writer.await.unwrap(), LockMode::Exclusive));
}

#[tokio::test]
async fn a_waiting_reader_beside_readers_is_granted_at_once_not_queued() {
    let service = service();
    acquire(&service, "r1", LockMode::Shared, 0).await;
    let outcome = acquire(&service, "r2", LockMode::Shared, 5_000).await;
    assert!(
        matches!(outcome, Acquired::Granted { ref lock, .. } if lock.mode == LockMode::Shared),
        "{outcome:?}"
    );
    assert_eq!(
        service.waiting_stats().granted_after_wait,
        0,
        "readers do not queue behind each other"
    );
}
