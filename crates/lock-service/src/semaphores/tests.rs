//! Waiting for permits: first come first served with no barging, a wait that ends during an
//! attempt answers that attempt, and a grant made for a client that has gone is undone.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    Capacity, Owner, PermitReleaseResult, PermitRequest, ResourceName, SystemClock, Tenant, Ttl,
    Weight,
};

use crate::{LockService, PermitsAcquired, PermitsRequest};

fn service() -> LockService {
    LockService::over(Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock))))
}

fn request(who: &str, permits: i64, limit: i64, wait_ms: u64) -> PermitsRequest {
    let limit = Capacity::semaphore_limit(limit).unwrap();
    PermitsRequest {
        tenant: Tenant::default_tenant(),
        name: ResourceName::parse("sem").unwrap(),
        permit: PermitRequest {
            permits: Weight::permits(permits, limit).unwrap(),
            limit,
            terms: lock_domain::LeaseTerms {
                owner: Owner::parse(who).unwrap(),
                ttl: Ttl::parse(60, 3_600).unwrap(),
                value: None,
                lock_delay: lock_domain::LockDelay::NONE,
            },
        },
        wait: Duration::from_millis(wait_ms),
    }
}

async fn acquire(service: &LockService, request: PermitsRequest) -> PermitsAcquired {
    service
        .semaphores()
        .acquire(request, || false)
        .await
        .unwrap()
}

async fn release(service: &LockService, who: &str) -> PermitReleaseResult {
    service
        .semaphores()
        .release(
            Tenant::default_tenant(),
            ResourceName::parse("sem").unwrap(),
            Owner::parse(who).unwrap(),
        )
        .await
        .unwrap()
}

fn granted(outcome: &PermitsAcquired) -> bool {
    matches!(outcome, PermitsAcquired::Granted { .. })
}

/// Lets spawned waiters reach their queue.
async fn settle(service: &LockService, waiters: usize) {
    let (tenant, name) = (
        Tenant::default_tenant(),
        ResourceName::parse("sem").unwrap(),
    );
    for _ in 0..200 {
        if service.semaphores().waiters(&tenant, &name) == waiters {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("expected {waiters} waiters");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_that_needs_more_is_not_overtaken() {
    let service = service();
    assert!(granted(
        &acquire(&service, request("holder", 2, 3, 0)).await
    ));
    let big = tokio::spawn({
        let service = service.clone();
        async move { acquire(&service, request("big", 3, 3, 10_000)).await }
    });
    settle(&service, 1).await;
    let small = tokio::spawn({
        let service = service.clone();
        async move { acquire(&service, request("small", 1, 3, 10_000)).await }
    });
    settle(&service, 2).await;
    // One permit is free, but two wait in line: a new acquire does not barge in.
    assert_eq!(
        acquire(&service, request("eager", 1, 3, 0)).await,
        PermitsAcquired::Unavailable {
            limit: Capacity::semaphore_limit(3).unwrap(),
            available: 1,
            retry_after_seconds: None,
        }
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !small.is_finished(),
        "the 1-permit waiter overtook the head"
    );
    // The holder itself is answered at once, queue or not (a re-grant).
    assert!(granted(
        &acquire(&service, request("holder", 2, 3, 0)).await
    ));
    assert!(matches!(
        release(&service, "holder").await,
        PermitReleaseResult::Released(_)
    ));
    let big = big.await.unwrap();
    assert!(
        matches!(big, PermitsAcquired::Granted { waited: true, .. }),
        "{big:?}"
    );
    assert!(!small.is_finished());
    assert!(matches!(
        release(&service, "big").await,
        PermitReleaseResult::Released(_)
    ));
    assert!(granted(&small.await.unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_ends_without_room_says_how_much_is_free() {
    let service = service();
    assert!(granted(
        &acquire(&service, request("holder", 2, 2, 0)).await
    ));
    let outcome = acquire(&service, request("late", 1, 2, 150)).await;
    // The holder's lease (60 s) ends in about a minute: 60, or 59 on a machine slow enough to
    // take more than a second for the wait and the read after it.
    let PermitsAcquired::TimedOut {
        limit,
        available,
        retry_after_seconds,
    } = outcome
    else {
        panic!("expected a timed-out wait, got {outcome:?}");
    };
    assert_eq!(
        (limit, available),
        (Capacity::semaphore_limit(2).unwrap(), 0)
    );
    assert!(
        (59..=60).contains(&retry_after_seconds),
        "{retry_after_seconds}"
    );
    settle(&service, 0).await;
    // Another limit than the holders' is refused, queue or not.
    assert_eq!(
        acquire(&service, request("other", 1, 5, 100)).await,
        PermitsAcquired::LimitMismatch(Capacity::semaphore_limit(2).unwrap())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_that_goes_away_leaves_the_queue_and_holds_nothing() {
    let service = service();
    assert!(granted(
        &acquire(&service, request("holder", 1, 1, 0)).await
    ));
    let gone = tokio::spawn({
        let service = service.clone();
        async move { acquire(&service, request("gone", 1, 1, 10_000)).await }
    });
    settle(&service, 1).await;
    gone.abort();
    settle(&service, 0).await;
    release(&service, "holder").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let state = service
        .semaphores()
        .status(
            Tenant::default_tenant(),
            ResourceName::parse("sem").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        state, None,
        "nobody holds a permit for a client that has gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_for_a_client_that_hung_up_is_undone() {
    let service = service();
    assert!(granted(
        &acquire(&service, request("holder", 1, 1, 0)).await
    ));
    let hung_up = tokio::spawn({
        let service = service.clone();
        async move {
            service
                .semaphores()
                .acquire(request("hung-up", 1, 1, 10_000), || true)
                .await
                .unwrap()
        }
    });
    settle(&service, 1).await;
    release(&service, "holder").await;
    assert_eq!(hung_up.await.unwrap(), PermitsAcquired::HungUp);
    for _ in 0..100 {
        let state = service
            .semaphores()
            .status(
                Tenant::default_tenant(),
                ResourceName::parse("sem").unwrap(),
            )
            .await
            .unwrap();
        if state.is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the abandoned grant was not undone");
}

/// A wait during an outage answers that the store is unavailable, never a guess at the free
/// permits: the first attempt finds no room, every later one fails.
#[tokio::test]
async fn a_wait_that_ends_in_an_outage_answers_unavailable() {
    use std::sync::atomic::{AtomicU32, Ordering};

    use lock_domain::{LeaseOp, LeaseOutcome, MockLeaseStore, Refusal, RepositoryError};
    let memory = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let attempts = Arc::new(AtomicU32::new(0));
    let mut leases = MockLeaseStore::new();
    leases.expect_apply().returning(move |_, op| match op {
        LeaseOp::Acquire { .. } if attempts.fetch_add(1, Ordering::SeqCst) == 0 => {
            Ok(LeaseOutcome::Refused(Refusal::Held {
                holders: vec![],
                available: 0,
                delayed_until: None,
            }))
        }
        _ => Err(RepositoryError::unavailable("the database is cut off")),
    });
    let service = LockService::new(
        crate::ServicePorts {
            store: crate::StorePorts {
                leases: Arc::new(leases),
                sessions: Arc::clone(&memory) as _,
                history: Arc::clone(&memory) as _,
                usage: Arc::clone(&memory) as _,
            },
            hints: None,
            clock: Arc::new(SystemClock),
            events: Arc::new(crate::NoEvents),
        },
        crate::WaiterLimits::default(),
    );
    let answer = service
        .semaphores()
        .acquire(request("w", 1, 2, 150), || false)
        .await;
    assert!(
        matches!(
            answer,
            Err(crate::AcquireError::Store(RepositoryError::Unavailable(_)))
        ),
        "{answer:?}"
    );
}

/// Another process shares the store, which can only say that it committed something
/// (SQLite's hint, `Freed::Unknown`, as often as every 5 ms): a waiting head looks (a read)
/// before it tries again (a write), so hints that changed nothing of its semaphore cost no
/// attempt; the hint after that process freed the permits still grants the waiter at once, long
/// before its own next look (every `SAFETY_PERIOD`, 5 s, while hints are live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hint_that_another_process_committed_costs_an_attempt_only_once_permits_changed() {
    use lock_domain::{Freed, LeaseOp, LeaseOutcome, LeaseStore, Place};

    let crate::waiting::tests::Hinted {
        service,
        memory,
        noting,
        send,
    } = crate::waiting::tests::Hinted::new();
    let counts = || (noting.count("acquire"), noting.count("look"));
    // The other process holds the semaphore's one permit for a minute.
    let (tenant, name) = (
        Tenant::default_tenant(),
        ResourceName::parse("sem").unwrap(),
    );
    let elsewhere = request("elsewhere", 1, 1, 0).permit;
    let taken = memory
        .apply(
            tenant.clone(),
            LeaseOp::Acquire {
                place: Place::Semaphore(name.clone()),
                claim: elsewhere.claim(),
                terms: elsewhere.terms.clone(),
            },
        )
        .await
        .unwrap();
    assert!(matches!(taken, LeaseOutcome::Granted(_)), "{taken:?}");
    let waiter = tokio::spawn({
        let service = service.clone();
        async move { acquire(&service, request("here", 1, 1, 20_000)).await }
    });
    settle(&service, 1).await;
    // The hints are live and the head's first attempts are over: it waits for its own next look
    // for `SAFETY_PERIOD`.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (attempts, looks) = counts();
    for _ in 0..20 {
        send.send(Freed::Unknown).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (attempts_after, looks_after) = counts();
    assert!(
        attempts_after - attempts <= 1,
        "20 hints of commits that left the semaphore as it was made {} attempts",
        attempts_after - attempts
    );
    assert!(looks_after > looks, "the hints were looked into");
    assert!(!waiter.is_finished());

    crate::waiting::tests::released_elsewhere(
        &memory,
        &tenant,
        Place::Semaphore(name.clone()),
        "elsewhere",
    )
    .await;
    send.send(Freed::Unknown).unwrap();
    let answer = tokio::time::timeout(Duration::from_millis(2_500), waiter)
        .await
        .expect("granted within 2.5 s of the hint, not at its own look 5 s on")
        .unwrap();
    assert!(granted(&answer), "{answer:?}");
}
