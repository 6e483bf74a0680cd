//! The status of each primitive in one call ([`Looked`]): held, kept by a lock-delay after its
//! lease ran out (with the `Retry-After` counted from the service's clock), and free once the
//! delay is over, for a lock, a semaphore and an election alike.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use lock_domain::{
    Capacity, LockDelay, LockMode, Owner, PermitRequest, ResourceName, Tenant, Ttl, Weight,
};

use crate::{
    AcquireRequest, CampaignRequest, Looked, PermitsRequest, ServicePorts, StorePorts, WaiterLimits,
};
use crate::{LockService, NoEvents};

fn service(clock: &ManualClock) -> LockService {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(clock.clone())));
    LockService::new(
        ServicePorts {
            store: StorePorts::of(store),
            hints: None,
            clock: Arc::new(clock.clone()),
            events: Arc::new(NoEvents),
        },
        WaiterLimits::default(),
    )
}

fn name() -> ResourceName {
    ResourceName::parse("report").unwrap()
}

fn ttl() -> Ttl {
    Ttl::parse(10, 3_600).unwrap()
}

fn delay() -> LockDelay {
    LockDelay::parse(5).unwrap()
}

/// The place is held, then (10 s later, its lease run out) kept until 15 s by the lock-delay,
/// then free: `look` as the caller of each primitive's status hears it, at those instants.
async fn held_delayed_free<'a, T: std::fmt::Debug>(
    clock: &ManualClock,
    start: DateTime<Utc>,
    look: impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Looked<T>> + 'a>>,
) {
    assert!(matches!(look().await, Looked::Held(_)), "held while live");
    clock.set(start + chrono::TimeDelta::milliseconds(12_500));
    match look().await {
        Looked::Delayed {
            available_at,
            retry_after_seconds,
        } => {
            assert_eq!(available_at, start + chrono::TimeDelta::seconds(15));
            // 2.5 s left, rounded up.
            assert_eq!(retry_after_seconds, 3);
        }
        other => panic!("expected the lock-delay, got {other:?}"),
    }
    clock.advance(Duration::from_millis(2_500));
    assert!(
        matches!(look().await, Looked::Free),
        "free once the delay is over"
    );
}

#[tokio::test]
async fn a_lock_is_held_then_kept_by_its_lock_delay_then_free() {
    let clock = ManualClock::new();
    let start = lock_domain::Clock::now(&clock);
    let service = service(&clock);
    let granted = service
        .locks()
        .acquire(
            AcquireRequest {
                tenant: Tenant::default_tenant(),
                resource: name(),
                wait: Duration::ZERO,
                mode: LockMode::Exclusive,
                terms: lock_domain::LeaseTerms {
                    owner: Owner::parse("job").unwrap(),
                    ttl: ttl(),
                    value: None,
                    lock_delay: delay(),
                },
            },
            || false,
        )
        .await
        .unwrap();
    assert!(matches!(granted, crate::Acquired::Granted { .. }));
    held_delayed_free(&clock, start, || {
        Box::pin(async {
            service
                .locks()
                .look(Tenant::default_tenant(), name())
                .await
                .unwrap()
        })
    })
    .await;
}

#[tokio::test]
async fn a_semaphore_is_held_then_kept_by_its_lock_delay_then_free() {
    let clock = ManualClock::new();
    let start = lock_domain::Clock::now(&clock);
    let service = service(&clock);
    let limit = Capacity::semaphore_limit(2).unwrap();
    let granted = service
        .semaphores()
        .acquire(
            PermitsRequest {
                tenant: Tenant::default_tenant(),
                name: name(),
                permit: PermitRequest {
                    permits: Weight::permits(1, limit).unwrap(),
                    limit,
                    terms: lock_domain::LeaseTerms {
                        owner: Owner::parse("job").unwrap(),
                        ttl: ttl(),
                        value: None,
                        lock_delay: delay(),
                    },
                },
                wait: Duration::ZERO,
            },
            || false,
        )
        .await
        .unwrap();
    assert!(matches!(granted, crate::PermitsAcquired::Granted { .. }));
    match service
        .semaphores()
        .look(Tenant::default_tenant(), name())
        .await
        .unwrap()
    {
        Looked::Held(held) => {
            assert_eq!(held.state.holders.len(), 1);
            assert_eq!(held.waiting, 0);
        }
        other => panic!("expected the holder, got {other:?}"),
    }
    held_delayed_free(&clock, start, || {
        Box::pin(async {
            service
                .semaphores()
                .look(Tenant::default_tenant(), name())
                .await
                .unwrap()
        })
    })
    .await;
}

#[tokio::test]
async fn an_election_is_led_then_kept_by_its_lock_delay_then_vacant() {
    let clock = ManualClock::new();
    let start = lock_domain::Clock::now(&clock);
    let service = service(&clock);
    let campaigned = service
        .elections()
        .campaign(
            CampaignRequest {
                tenant: Tenant::default_tenant(),
                election: name(),
                wait: Duration::ZERO,
                terms: lock_domain::LeaseTerms {
                    owner: Owner::parse("node-a").unwrap(),
                    ttl: ttl(),
                    value: None,
                    lock_delay: delay(),
                },
            },
            || false,
        )
        .await
        .unwrap();
    assert!(matches!(campaigned, crate::Campaigned::Elected { .. }));
    // An election is a lock in the tenant's election namespace: the lock of the same name is
    // another, and free.
    assert!(matches!(
        service
            .locks()
            .look(Tenant::default_tenant(), name())
            .await
            .unwrap(),
        Looked::Free
    ));
    held_delayed_free(&clock, start, || {
        Box::pin(async {
            service
                .elections()
                .look(&Tenant::default_tenant(), &name())
                .await
                .unwrap()
        })
    })
    .await;
}
