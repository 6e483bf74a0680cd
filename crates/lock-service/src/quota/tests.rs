//! Quotas over the reference store: each limit refuses what would go over it and changes
//! nothing, a re-grant adds no lease, racing acquires never pass `max_live_leases`, and a reload
//! takes effect at once for the next request.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    Capacity, LockDelay, LockMode, Owner, PermitRequest, ResourceName, ResourcePrefix, SystemClock,
    Tenant, Ttl, Weight,
};

use crate::{
    AcquireError, AcquireRequest, Acquired, CampaignRequest, FeedFilter, FeedStart, Limit,
    LimitsTable, LockService, Observed, OpenError, PermitsAcquired, PermitsRequest, QuotaExceeded,
};

pub(super) fn service(limits: &str) -> (LockService, Arc<InMemoryLockRepository>) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let service = LockService::over(Arc::clone(&store));
    service
        .tenants()
        .set_limits(LimitsTable::parse(limits).unwrap());
    (service, store)
}

pub(super) fn acme() -> Tenant {
    Tenant::parse("acme").unwrap()
}

pub(super) fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).unwrap()
}

pub(super) fn acquire(
    tenant: &Tenant,
    resource: &str,
    owner: &str,
    wait_ms: u64,
) -> AcquireRequest {
    AcquireRequest {
        tenant: tenant.clone(),
        resource: name(resource),
        mode: LockMode::Exclusive,
        terms: lock_domain::LeaseTerms::new(
            Owner::parse(owner).unwrap(),
            Ttl::parse(30, 3_600).unwrap(),
            None,
        ),
        wait: Duration::from_millis(wait_ms),
    }
}

pub(super) fn over(limit: Limit, allowed: u64) -> QuotaExceeded {
    QuotaExceeded { limit, allowed }
}

async fn outcome(service: &LockService, request: AcquireRequest) -> Result<bool, QuotaExceeded> {
    match service.locks().acquire(request, || false).await {
        Ok(Acquired::Granted { .. }) => Ok(true),
        Ok(_) => Ok(false),
        Err(AcquireError::QuotaExceeded(exceeded)) => Err(exceeded),
        Err(other) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn live_leases_are_limited_per_tenant_and_a_regrant_adds_none() {
    let (service, _) = service("acme max_live_leases=2\n");
    let other = Tenant::parse("globex").unwrap();
    assert_eq!(
        outcome(&service, acquire(&acme(), "a", "w1", 0)).await,
        Ok(true)
    );
    // An election's leader is one of the tenant's leases.
    let campaign = CampaignRequest {
        tenant: acme(),
        election: name("leader"),
        wait: Duration::ZERO,
        terms: lock_domain::LeaseTerms {
            owner: Owner::parse("c1").unwrap(),
            ttl: Ttl::parse(30, 3_600).unwrap(),
            value: None,
            lock_delay: LockDelay::NONE,
        },
    };
    service
        .elections()
        .campaign(campaign.clone(), || false)
        .await
        .unwrap();
    let refused = over(Limit::MaxLiveLeases, 2);
    assert_eq!(
        outcome(&service, acquire(&acme(), "b", "w2", 0)).await,
        Err(refused)
    );
    // Refused before anything was attempted: the lock is still free.
    assert_eq!(
        service.locks().status(acme(), name("b")).await.unwrap(),
        None
    );
    // Waiting or not, and for any primitive.
    assert_eq!(
        outcome(&service, acquire(&acme(), "b", "w2", 50)).await,
        Err(refused)
    );
    let limit = Capacity::semaphore_limit(3).unwrap();
    let permits = PermitsRequest {
        tenant: acme(),
        name: name("pool"),
        permit: PermitRequest {
            permits: Weight::permits(1, limit).unwrap(),
            limit,
            terms: lock_domain::LeaseTerms {
                owner: Owner::parse("p1").unwrap(),
                ttl: Ttl::parse(30, 3_600).unwrap(),
                value: None,
                lock_delay: LockDelay::NONE,
            },
        },
        wait: Duration::ZERO,
    };
    assert!(matches!(
        service.semaphores().acquire(permits.clone(), || false).await,
        Err(AcquireError::QuotaExceeded(e)) if e == refused
    ));
    // The holders are granted again, and other tenants are not limited.
    assert_eq!(
        outcome(&service, acquire(&acme(), "a", "w1", 0)).await,
        Ok(true)
    );
    assert!(matches!(
        service.elections().campaign(campaign, || false).await,
        Ok(crate::Campaigned::Elected { .. })
    ));
    assert_eq!(
        outcome(&service, acquire(&other, "b", "w2", 0)).await,
        Ok(true)
    );
    // A release makes room.
    service
        .locks()
        .release(acme(), name("a"), Owner::parse("w1").unwrap())
        .await
        .unwrap();
    assert!(matches!(
        service.semaphores().acquire(permits, || false).await,
        Ok(PermitsAcquired::Granted { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_acquires_never_pass_the_limit() {
    let (service, store) = service("acme max_live_leases=5\n");
    let racers = (0..40).map(|i| {
        let service = service.clone();
        tokio::spawn(async move {
            outcome(
                &service,
                acquire(&acme(), &format!("r{i}"), &format!("w{i}"), 0),
            )
            .await
        })
    });
    let mut granted = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Ok(true) => granted += 1,
            Ok(false) => panic!("a free lock was not granted"),
            Err(exceeded) => assert_eq!(exceeded, over(Limit::MaxLiveLeases, 5)),
        }
    }
    assert_eq!(granted, 5);
    use lock_domain::LeaseUsage;
    assert_eq!(store.count_live_leases(acme()).await.unwrap(), 5);
}

#[tokio::test]
async fn waiters_are_limited_per_tenant_and_a_wait_holds_no_other_acquire_back() {
    // With max_live_leases too: a waiting acquire is admitted, then waits without holding the
    // tenant's other acquires back.
    let (service, _) = service("acme max_live_leases=10 max_waiters=1\n");
    assert_eq!(
        outcome(&service, acquire(&acme(), "a", "holder", 0)).await,
        Ok(true)
    );
    let first = {
        let service = service.clone();
        tokio::spawn(async move { outcome(&service, acquire(&acme(), "a", "w1", 5_000)).await })
    };
    while service.locks().waiters(&acme(), &name("a")) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let at_once = tokio::time::timeout(
        Duration::from_secs(1),
        outcome(&service, acquire(&acme(), "a", "w2", 5_000)),
    );
    assert_eq!(
        at_once
            .await
            .expect("refused at once, not after the first wait"),
        Err(over(Limit::MaxWaiters, 1))
    );
    // An acquire that does not wait is not a waiter, and is answered during the wait.
    let free = tokio::time::timeout(
        Duration::from_secs(1),
        outcome(&service, acquire(&acme(), "b", "w3", 0)),
    );
    assert_eq!(free.await.expect("answered during the wait"), Ok(true));
    let waiters = |usage: Vec<crate::QuotaUsage>| {
        usage
            .into_iter()
            .find(|u| u.limit == Limit::MaxWaiters)
            .map(|u| (u.allowed, u.used))
    };
    assert_eq!(waiters(service.tenants().usage().await), Some((1, Some(1))));
    service
        .locks()
        .release(acme(), name("a"), Owner::parse("holder").unwrap())
        .await
        .unwrap();
    assert_eq!(first.await.unwrap(), Ok(true));
    assert_eq!(waiters(service.tenants().usage().await), Some((1, Some(0))));
}

#[tokio::test]
async fn observers_and_event_streams_share_one_limit() {
    let (service, _) = service("acme max_observers=2\n");
    let observation = service
        .observe(acme(), Observed::Lock, name("a"))
        .await
        .unwrap();
    let filter = FeedFilter {
        tenant: acme(),
        prefix: ResourcePrefix::default(),
        kinds: vec![],
    };
    let feed = service
        .history()
        .follow(filter.clone(), FeedStart::Now)
        .await
        .unwrap();
    assert!(matches!(
        service.observe(acme(), Observed::Semaphore, name("b")).await,
        Err(OpenError::QuotaExceeded(e)) if e == over(Limit::MaxObservers, 2)
    ));
    assert!(matches!(
        service
            .history()
            .follow(filter.clone(), FeedStart::Now)
            .await,
        Err(OpenError::QuotaExceeded(_))
    ));
    // Another tenant is not limited.
    let other = Tenant::parse("globex").unwrap();
    let mut theirs = Vec::new();
    for _ in 0..3 {
        theirs.push(
            service
                .observe(other.clone(), Observed::Lock, name("a"))
                .await
                .unwrap(),
        );
    }
    drop(observation);
    let again = service
        .history()
        .follow(filter, FeedStart::Now)
        .await
        .unwrap();
    drop((feed, again, theirs));
    assert_eq!(
        service
            .tenants()
            .usage()
            .await
            .iter()
            .map(|u| u.used)
            .collect::<Vec<_>>(),
        [Some(0)]
    );
}

#[tokio::test]
async fn lease_lengths_are_bounded_and_a_reload_applies_to_the_next_request() {
    let (service, _) = service("acme max_ttl_seconds=60\n");
    let ttl = |seconds| Ttl::parse(seconds, 86_400).unwrap();
    assert_eq!(service.tenants().check_ttl(&acme(), ttl(60)), Ok(()));
    assert_eq!(
        service.tenants().check_ttl(&acme(), ttl(61)),
        Err(over(Limit::MaxTtlSeconds, 60))
    );
    assert_eq!(
        service
            .tenants()
            .check_ttl(&Tenant::default_tenant(), ttl(86_400)),
        Ok(())
    );
    service
        .tenants()
        .set_limits(LimitsTable::parse("acme max_live_leases=0\n").unwrap());
    assert_eq!(service.tenants().check_ttl(&acme(), ttl(61)), Ok(()));
    assert_eq!(
        outcome(&service, acquire(&acme(), "a", "w1", 0)).await,
        Err(over(Limit::MaxLiveLeases, 0))
    );
    service.tenants().set_limits(LimitsTable::default());
    assert_eq!(
        outcome(&service, acquire(&acme(), "a", "w1", 0)).await,
        Ok(true)
    );
}
