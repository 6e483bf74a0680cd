//! `max_live_leases` at the moment of each grant, over the reference store: a burst of waiting
//! acquires of every primitive is held at the limit, one ended lease is replaced by one queued
//! grant (in queue order), and a wait that the quota held back ends in [`QuotaExceeded`].

use std::future::Future;
use std::time::Duration;

use lock_domain::{
    Capacity, LeaseUsage, LockDelay, LockMode, LockSet, Owner, PermitRequest, Ttl, Weight,
};

use super::tests::{acme, acquire, name, over, service as limited};
use crate::{
    AcquireError, Acquired, CampaignRequest, Campaigned, Limit, LockService, MultiAcquireRequest,
    MultiAcquired, PermitsAcquired, PermitsRequest, QuotaExceeded,
};

/// How a grant attempt ended: granted, not granted, or refused by the quota.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Granted,
    NotGranted,
    Over(QuotaExceeded),
}

fn answer<T>(result: Result<T, AcquireError>, granted: impl Fn(&T) -> bool) -> Answer {
    match result {
        Ok(outcome) if granted(&outcome) => Answer::Granted,
        Ok(_) => Answer::NotGranted,
        Err(AcquireError::QuotaExceeded(exceeded)) => Answer::Over(exceeded),
        Err(other) => panic!("{other:?}"),
    }
}

fn ttl() -> Ttl {
    Ttl::parse(30, 3_600).unwrap()
}

fn permits(owner: &str, permits: i64, limit: i64, wait: Duration) -> PermitsRequest {
    let limit = Capacity::semaphore_limit(limit).unwrap();
    PermitsRequest {
        tenant: acme(),
        name: name("pool"),
        permit: PermitRequest {
            permits: Weight::permits(permits, limit).unwrap(),
            limit,
            terms: lock_domain::LeaseTerms {
                owner: Owner::parse(owner).unwrap(),
                ttl: ttl(),
                value: None,
                lock_delay: LockDelay::NONE,
            },
        },
        wait,
    }
}

async fn take_permits(service: &LockService, request: PermitsRequest) -> Answer {
    answer(
        service.semaphores().acquire(request, || false).await,
        |got| matches!(got, PermitsAcquired::Granted { .. }),
    )
}

async fn take_lock(service: &LockService, request: crate::AcquireRequest) -> Answer {
    answer(service.locks().acquire(request, || false).await, |got| {
        matches!(got, Acquired::Granted { .. })
    })
}

/// Runs 40 attempts made by `attempt(i)` at once, and counts the answers: every one not granted
/// must be the quota's refusal.
async fn burst<F, A>(attempt: F) -> usize
where
    F: Fn(usize) -> A,
    A: Future<Output = Answer> + Send + 'static,
{
    let racers: Vec<_> = (0..40).map(|i| tokio::spawn(attempt(i))).collect();
    let mut granted = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Answer::Granted => granted += 1,
            Answer::Over(exceeded) => assert_eq!(exceeded, over(Limit::MaxLiveLeases, 5)),
            Answer::NotGranted => panic!("refused, with room and the quota the only limit"),
        }
    }
    granted
}

const WAIT: Duration = Duration::from_millis(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_of_waiting_acquires_is_held_at_the_limit_for_every_primitive() {
    let limits = "acme max_live_leases=5\n";
    for mode in [LockMode::Exclusive, LockMode::Shared] {
        let (service, store) = limited(limits);
        let granted = burst(|i| {
            let service = service.clone();
            let mut request = acquire(&acme(), &format!("q-{i}"), &format!("w{i}"), 300);
            request.mode = mode;
            async move { take_lock(&service, request).await }
        })
        .await;
        assert_eq!(granted, 5, "{mode:?}");
        assert_eq!(
            store.count_live_leases(acme()).await.unwrap(),
            5,
            "{mode:?}"
        );
    }

    let (service, store) = limited(limits);
    let granted = burst(|i| {
        let service = service.clone();
        async move { take_permits(&service, permits(&format!("p{i}"), 1, 40, WAIT)).await }
    })
    .await;
    assert_eq!(granted, 5, "permits");
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 5);

    let (service, store) = limited(limits);
    let granted = burst(|i| {
        let service = service.clone();
        let set = LockSet::new(
            lock_domain::LeaseTerms::new(Owner::parse(&format!("s{i}")).unwrap(), ttl(), None),
            vec![
                (name(&format!("a-{i}")), LockMode::Exclusive),
                (name(&format!("b-{i}")), LockMode::Exclusive),
            ],
        )
        .unwrap();
        let request = MultiAcquireRequest {
            tenant: acme(),
            set,
            wait: WAIT,
        };
        async move {
            answer(
                service.locks().acquire_all(request, || false).await,
                |got| matches!(got, MultiAcquired::Granted { .. }),
            )
        }
    })
    .await;
    assert_eq!(granted, 2, "sets of two");
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 4);

    let (service, store) = limited(limits);
    let granted = burst(|i| {
        let service = service.clone();
        let request = CampaignRequest {
            tenant: acme(),
            election: name(&format!("e-{i}")),
            wait: WAIT,
            terms: lock_domain::LeaseTerms {
                owner: Owner::parse(&format!("c{i}")).unwrap(),
                ttl: ttl(),
                value: None,
                lock_delay: LockDelay::NONE,
            },
        };
        async move {
            answer(
                service.elections().campaign(request, || false).await,
                |got| matches!(got, Campaigned::Elected { .. }),
            )
        }
    })
    .await;
    assert_eq!(granted, 5, "campaigns");
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 5);
}

/// Waits until `count()` is `n` (for at most 20 s).
async fn until(n: usize, count: impl Fn() -> usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while count() != n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} waiting, never {n}",
            count()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_ended_semaphore_grant_is_replaced_by_one_queued_grant_in_queue_order() {
    let (service, store) = limited("acme max_live_leases=2\n");
    assert_eq!(
        take_permits(&service, permits("big", 8, 8, Duration::ZERO)).await,
        Answer::Granted
    );
    let mut waiters = Vec::new();
    for i in 1..=8 {
        let service2 = service.clone();
        waiters.push(tokio::spawn(async move {
            take_permits(
                &service2,
                permits(&format!("w{i}"), 1, 8, Duration::from_secs(3)),
            )
            .await
        }));
        until(i, || service.semaphores().waiters(&acme(), &name("pool"))).await;
    }
    service
        .semaphores()
        .release(acme(), name("pool"), Owner::parse("big").unwrap())
        .await
        .unwrap();
    until(6, || service.semaphores().waiters(&acme(), &name("pool"))).await;
    let (w1, w2) = (waiters.remove(0), waiters.remove(0));
    assert_eq!(w1.await.unwrap(), Answer::Granted);
    assert_eq!(w2.await.unwrap(), Answer::Granted);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 2);
    assert_eq!(service.semaphores().waiters(&acme(), &name("pool")), 6);
    // One place frees: the next in line (w3), and no one behind it, takes it.
    service
        .semaphores()
        .release(acme(), name("pool"), Owner::parse("w1").unwrap())
        .await
        .unwrap();
    let w3 = waiters.remove(0);
    assert_eq!(w3.await.unwrap(), Answer::Granted);
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 2);
    for rest in waiters {
        assert_eq!(
            rest.await.unwrap(),
            Answer::Over(over(Limit::MaxLiveLeases, 2))
        );
    }
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_released_writer_is_replaced_by_as_many_readers_as_the_quota_has_room_for() {
    let (service, store) = limited("acme max_live_leases=2\n");
    assert_eq!(
        take_lock(&service, acquire(&acme(), "r", "writer", 0)).await,
        Answer::Granted
    );
    let mut readers = Vec::new();
    for i in 1..=8 {
        let service2 = service.clone();
        let mut request = acquire(&acme(), "r", &format!("reader{i}"), 3_000);
        request.mode = LockMode::Shared;
        readers.push(tokio::spawn(
            async move { take_lock(&service2, request).await },
        ));
        until(i, || service.locks().waiters(&acme(), &name("r"))).await;
    }
    service
        .locks()
        .release(acme(), name("r"), Owner::parse("writer").unwrap())
        .await
        .unwrap();
    let (r1, r2) = (readers.remove(0), readers.remove(0));
    assert_eq!(r1.await.unwrap(), Answer::Granted);
    assert_eq!(r2.await.unwrap(), Answer::Granted);
    for rest in readers {
        assert_eq!(
            rest.await.unwrap(),
            Answer::Over(over(Limit::MaxLiveLeases, 2))
        );
    }
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_campaign_refused_while_its_candidate_came_to_lead_is_a_regrant() {
    // Two instances over one store. B's campaign for o0 waits while x leads; through A, x
    // resigns and o0 is elected. B's wait ends (before its poller looks again, 200 ms) refused,
    // and the leader it reads then is o0 itself: "not elected, and you lead" describes no one
    // instant, so the answer is the sitting leader's re-grant.
    let store = std::sync::Arc::new(lock_domain::testing::InMemoryLockRepository::new(
        std::sync::Arc::new(lock_domain::SystemClock),
    ));
    let a = LockService::over(std::sync::Arc::clone(&store));
    let b = LockService::over(store);
    let campaign = |candidate: &str, wait: Duration| CampaignRequest {
        tenant: acme(),
        election: name("e"),
        wait,
        terms: lock_domain::LeaseTerms {
            owner: Owner::parse(candidate).unwrap(),
            ttl: ttl(),
            value: None,
            lock_delay: LockDelay::NONE,
        },
    };
    a.elections()
        .campaign(campaign("x", Duration::ZERO), || false)
        .await
        .unwrap();
    let waiting = {
        let b = b.clone();
        let request = campaign("o0", Duration::from_millis(150));
        tokio::spawn(async move { b.elections().campaign(request, || false).await.unwrap() })
    };
    until(1, || b.elections().waiters(&acme(), &name("e"))).await;
    a.elections()
        .resign(acme(), name("e"), Owner::parse("x").unwrap())
        .await
        .unwrap();
    let Campaigned::Elected { leader, .. } = a
        .elections()
        .campaign(campaign("o0", Duration::ZERO), || false)
        .await
        .unwrap()
    else {
        panic!("o0 not elected through A")
    };
    match waiting.await.unwrap() {
        Campaigned::Elected { leader: got, .. } => {
            assert_eq!(got.candidate.as_str(), "o0");
            assert_eq!(got.term, leader.term, "a re-grant keeps the term");
        }
        Campaigned::NotElected { leader, .. } => {
            panic!("not elected, naming {leader:?} as the leader")
        }
        Campaigned::HungUp => panic!("hung up"),
    }
}
