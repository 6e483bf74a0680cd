//! What the events port hears of waits, contention and holds (`lockd_wait_seconds`,
//! `lockd_contended_acquires_total`, `lockd_hold_seconds`): each acquire that asked to wait is
//! measured once with how it was answered, each acquire that found its place held is counted
//! once, and each hold that a request ends is measured once, from its grant by the store's clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use lock_domain::{
    Capacity, FencingToken, ForceReason, Lock, LockDelay, LockMode, Owner, Permit,
    PermitReleaseResult, PermitRenewResult, PermitRequest, ReleaseResult, RenewResult,
    ResourceName, Tenant, Ttl, Weight,
};

use crate::{
    AcquireRequest, Acquired, CampaignRequest, ElectionReport, Fenced, HoldEnd, LockEvents,
    LockService, PermitsAcquired, PermitsRequest, Primitive, ServicePorts, StorePorts, Trouble,
    Waited, WaiterLimits, WaitersFull,
};

/// One report of the three this module is about.
#[derive(Debug, Clone, PartialEq)]
enum Heard {
    Waited(Primitive, Waited, Duration),
    Contended(Primitive),
    Held(Primitive, HoldEnd, Duration),
}

/// Keeps the waits, contentions and holds it hears; nothing else.
#[derive(Default)]
struct Recorder(Mutex<Vec<Heard>>);

impl Recorder {
    fn take(&self) -> Vec<Heard> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl LockEvents for Recorder {
    fn acquired(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &Acquired) {}
    fn released(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: ReleaseResult) {}
    fn renewed(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &RenewResult) {}
    fn waiter_rejected(&self, _: &Tenant, _: WaitersFull) {}
    fn grant_undone(&self, _: &Tenant, _: &Lock, _: bool, _: &'static str) {}
    fn permits_acquired(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &PermitsAcquired) {}
    fn permits_released(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: PermitReleaseResult) {}
    fn permits_renewed(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: &PermitRenewResult) {}
    fn permit_grant_undone(&self, _: &Tenant, _: &Permit, _: bool, _: &'static str) {}
    fn fence_checked(&self, _: &Tenant, _: Fenced, _: &ResourceName, _: FencingToken, _: bool) {}
    fn election(&self, _: &Tenant, _: &ResourceName, _: &Owner, _: ElectionReport<'_>) {}
    fn counted(&self, _: u64, _: u64) {}
    fn trouble(&self, _: Trouble<'_>) {}

    fn waited(&self, primitive: Primitive, how: Waited, waited: Duration) {
        self.0
            .lock()
            .unwrap()
            .push(Heard::Waited(primitive, how, waited));
    }

    fn contended(&self, primitive: Primitive) {
        self.0.lock().unwrap().push(Heard::Contended(primitive));
    }

    fn hold_ended(&self, primitive: Primitive, how: HoldEnd, held: Duration) {
        self.0
            .lock()
            .unwrap()
            .push(Heard::Held(primitive, how, held));
    }
}

fn service(clock: &ManualClock) -> (LockService, Arc<Recorder>) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(clock.clone())));
    let recorder = Arc::new(Recorder::default());
    let service = LockService::new(
        ServicePorts {
            store: StorePorts::of(store),
            hints: None,
            clock: Arc::new(clock.clone()),
            events: Arc::clone(&recorder) as Arc<dyn LockEvents>,
        },
        WaiterLimits::default(),
    );
    (service, recorder)
}

fn name() -> ResourceName {
    ResourceName::parse("report").unwrap()
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).unwrap()
}

fn terms(raw: &str) -> lock_domain::LeaseTerms {
    lock_domain::LeaseTerms {
        owner: owner(raw),
        ttl: Ttl::parse(600, 3_600).unwrap(),
        value: None,
        lock_delay: LockDelay::NONE,
    }
}

fn lock(raw: &str, mode: LockMode, wait: Duration) -> AcquireRequest {
    AcquireRequest {
        tenant: Tenant::default_tenant(),
        resource: name(),
        mode,
        terms: terms(raw),
        wait,
    }
}

fn permits(raw: &str, wait: Duration) -> PermitsRequest {
    let limit = Capacity::semaphore_limit(1).unwrap();
    PermitsRequest {
        tenant: Tenant::default_tenant(),
        name: name(),
        permit: PermitRequest {
            permits: Weight::permits(1, limit).unwrap(),
            limit,
            terms: terms(raw),
        },
        wait,
    }
}

/// A lock acquired by `raw` in `mode`, waiting at most `wait`.
async fn acquire(service: &LockService, raw: &str, mode: LockMode, wait: Duration) -> Acquired {
    service
        .locks()
        .acquire(lock(raw, mode, wait), || false)
        .await
        .unwrap()
}

/// The one wait heard, with its duration.
fn one_wait(heard: &[Heard]) -> (Primitive, Waited, Duration) {
    let waits: Vec<_> = heard
        .iter()
        .filter_map(|heard| match heard {
            Heard::Waited(primitive, how, waited) => Some((*primitive, *how, *waited)),
            _ => None,
        })
        .collect();
    assert_eq!(waits.len(), 1, "one wait measured: {heard:?}");
    waits[0]
}

fn contentions(heard: &[Heard]) -> Vec<Primitive> {
    heard
        .iter()
        .filter_map(|heard| match heard {
            Heard::Contended(primitive) => Some(*primitive),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_grant_at_once_without_a_wait_is_neither_measured_nor_contended() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let granted = acquire(&service, "a", LockMode::Exclusive, Duration::ZERO).await;
    assert!(matches!(granted, Acquired::Granted { .. }));
    assert_eq!(heard.take(), vec![]);
}

#[tokio::test]
async fn a_free_lock_asked_with_a_wait_is_measured_granted_and_not_contended() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let wait = Duration::from_secs(30);
    let granted = acquire(&service, "a", LockMode::Exclusive, wait).await;
    assert!(matches!(granted, Acquired::Granted { .. }));
    let heard = heard.take();
    let (primitive, how, waited) = one_wait(&heard);
    assert_eq!((primitive, how), (Primitive::Lock, Waited::Granted));
    assert!(waited < wait, "granted long before its wait ran out");
    assert_eq!(contentions(&heard), vec![]);
}

#[tokio::test]
async fn a_refusal_without_a_wait_is_contended_and_not_measured() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    acquire(&service, "a", LockMode::Exclusive, Duration::ZERO).await;
    let refused = acquire(&service, "b", LockMode::Shared, Duration::ZERO).await;
    assert!(matches!(refused, Acquired::Held { .. }));
    assert_eq!(heard.take(), vec![Heard::Contended(Primitive::SharedLock)]);
}

#[tokio::test]
async fn a_waiter_granted_after_a_release_is_contended_and_measured_from_its_arrival() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let service = Arc::new(service);
    acquire(&service, "a", LockMode::Exclusive, Duration::ZERO).await;
    let waiter = {
        let service = Arc::clone(&service);
        tokio::spawn(async move {
            service
                .locks()
                .acquire(
                    lock("b", LockMode::Exclusive, Duration::from_secs(60)),
                    || false,
                )
                .await
                .unwrap()
        })
    };
    let pause = Duration::from_millis(300);
    tokio::time::sleep(pause).await;
    // The holder held it 90 s by the store's clock.
    clock.advance(Duration::from_secs(90));
    service
        .locks()
        .release(Tenant::default_tenant(), name(), owner("a"))
        .await
        .unwrap();
    let answered = waiter.await.unwrap();
    assert!(matches!(answered, Acquired::Granted { waited: true, .. }));
    let heard = heard.take();
    assert!(heard.contains(&Heard::Held(
        Primitive::Lock,
        HoldEnd::Released,
        Duration::from_secs(90)
    )));
    let (primitive, how, waited) = one_wait(&heard);
    assert_eq!((primitive, how), (Primitive::Lock, Waited::Granted));
    assert!(
        waited >= pause,
        "waited {waited:?}, from before the release"
    );
    assert_eq!(contentions(&heard), vec![Primitive::Lock]);
}

#[tokio::test]
async fn a_wait_that_times_out_is_contended_and_measured_timed_out() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    acquire(&service, "a", LockMode::Exclusive, Duration::ZERO).await;
    let wait = Duration::from_millis(200);
    let answered = acquire(&service, "b", LockMode::Exclusive, wait).await;
    assert!(matches!(answered, Acquired::TimedOut { .. }));
    let heard = heard.take();
    let (primitive, how, waited) = one_wait(&heard);
    assert_eq!((primitive, how), (Primitive::Lock, Waited::TimedOut));
    assert!(waited >= wait);
    assert_eq!(contentions(&heard), vec![Primitive::Lock]);
}

#[tokio::test]
async fn permits_waited_for_are_contended_and_their_holds_measured() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let semaphores = service.semaphores();
    semaphores
        .acquire(permits("a", Duration::ZERO), || false)
        .await
        .unwrap();
    let wait = Duration::from_millis(200);
    let answered = semaphores
        .acquire(permits("b", wait), || false)
        .await
        .unwrap();
    assert!(matches!(answered, PermitsAcquired::TimedOut { .. }));
    clock.advance(Duration::from_secs(7));
    semaphores
        .release(Tenant::default_tenant(), name(), owner("a"))
        .await
        .unwrap();
    let heard = heard.take();
    let (primitive, how, _) = one_wait(&heard);
    assert_eq!((primitive, how), (Primitive::Semaphore, Waited::TimedOut));
    assert_eq!(contentions(&heard), vec![Primitive::Semaphore]);
    assert!(heard.contains(&Heard::Held(
        Primitive::Semaphore,
        HoldEnd::Released,
        Duration::from_secs(7)
    )));
}

#[tokio::test]
async fn a_release_of_nothing_measures_no_hold_and_a_force_release_measures_each() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let locks = service.locks();
    locks
        .release(Tenant::default_tenant(), name(), owner("nobody"))
        .await
        .unwrap();
    assert_eq!(heard.take(), vec![]);
    for reader in ["r1", "r2"] {
        acquire(&service, reader, LockMode::Shared, Duration::ZERO).await;
    }
    clock.advance(Duration::from_secs(42));
    let ended = locks
        .force_release(
            Tenant::default_tenant(),
            name(),
            ForceReason::parse("stuck").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(ended.len(), 2);
    let held = Heard::Held(
        Primitive::SharedLock,
        HoldEnd::ForceReleased,
        Duration::from_secs(42),
    );
    assert_eq!(heard.take(), vec![held.clone(), held]);
}

#[tokio::test]
async fn a_campaign_refused_at_once_is_contended_and_a_resign_measures_the_term() {
    let clock = ManualClock::new();
    let (service, heard) = service(&clock);
    let elections = service.elections();
    let campaign = |candidate: &str| CampaignRequest {
        tenant: Tenant::default_tenant(),
        election: name(),
        terms: terms(candidate),
        wait: Duration::ZERO,
    };
    elections.campaign(campaign("a"), || false).await.unwrap();
    elections.campaign(campaign("b"), || false).await.unwrap();
    assert_eq!(heard.take(), vec![Heard::Contended(Primitive::Election)]);
    clock.advance(Duration::from_secs(300));
    elections
        .resign(Tenant::default_tenant(), name(), owner("a"))
        .await
        .unwrap();
    assert_eq!(
        heard.take(),
        vec![Heard::Held(
            Primitive::Election,
            HoldEnd::Released,
            Duration::from_secs(300)
        )]
    );
}

/// A lease that ran out is heard of as an `expired` hold, held for its TTL, once, from the
/// background count that takes the store's notes; a released one only as `released`.
#[tokio::test(start_paused = true)]
async fn a_lease_that_ran_out_is_heard_of_once_from_the_background_count() {
    use lock_domain::testing::calls::LeaseCalls;
    use lock_domain::{AcquireOutcome, StoreHealth};

    let clock = ManualClock::new();
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(clock.clone())));
    let recorder = Arc::new(Recorder::default());
    let acquire = |who: &str, seconds: i64| {
        let store = Arc::clone(&store);
        let who = owner(who);
        async move {
            let outcome = store
                .acquire(
                    Tenant::default_tenant(),
                    name(),
                    who,
                    Ttl::parse(seconds, 3_600).unwrap(),
                    None,
                )
                .await
                .unwrap();
            assert!(matches!(outcome, AcquireOutcome::Granted(_)), "{outcome:?}");
        }
    };
    acquire("alice", 2).await;
    clock.advance(Duration::from_millis(2_500));
    acquire("bob", 30).await;
    let counter = tokio::spawn(crate::run_live_lock_counter(
        Arc::clone(&store) as Arc<dyn StoreHealth>,
        Arc::clone(&recorder) as Arc<dyn LockEvents>,
        Duration::from_secs(5),
    ));
    // The first round runs at once; the next after the interval, with nothing left to take.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        recorder.take(),
        vec![Heard::Held(
            Primitive::Lock,
            HoldEnd::Expired,
            Duration::from_secs(2)
        )]
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(recorder.take(), vec![], "once");
    counter.abort();
}
