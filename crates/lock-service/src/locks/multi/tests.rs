//! Multi-lock through the service: all or nothing at once, waiting until every lock is free
//! together (holding nothing meanwhile), a hung-up waiter's grants undone, and release many.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    LockMode, LockSet, Owner, ReleaseResult, ResourceName, SystemClock, Tenant, Ttl,
};

use crate::{AcquireRequest, Acquired, LockService, MultiAcquireRequest, MultiAcquired};

fn service() -> LockService {
    LockService::over(Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock))))
}

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).unwrap()
}

fn request(who: &str, names: &[&str], wait_ms: u64) -> MultiAcquireRequest {
    MultiAcquireRequest {
        tenant: Tenant::default_tenant(),
        set: LockSet::new(
            lock_domain::LeaseTerms::new(
                Owner::parse(who).unwrap(),
                Ttl::parse(60, 3_600).unwrap(),
                None,
            ),
            names
                .iter()
                .map(|n| (name(n), LockMode::Exclusive))
                .collect(),
        )
        .unwrap(),
        wait: Duration::from_millis(wait_ms),
    }
}

async fn single(service: &LockService, who: &str, resource: &str) -> Acquired {
    let request = AcquireRequest {
        tenant: Tenant::default_tenant(),
        resource: name(resource),
        wait: Duration::ZERO,
        mode: LockMode::Exclusive,
        terms: lock_domain::LeaseTerms {
            owner: Owner::parse(who).unwrap(),
            ttl: Ttl::parse(60, 3_600).unwrap(),
            value: None,
            lock_delay: lock_domain::LockDelay::NONE,
        },
    };
    service.locks().acquire(request, || false).await.unwrap()
}

async fn release(service: &LockService, who: &str, resource: &str) -> ReleaseResult {
    service
        .locks()
        .release(
            Tenant::default_tenant(),
            name(resource),
            Owner::parse(who).unwrap(),
        )
        .await
        .unwrap()
}

/// `request`, made in a task of its own; `hung_up`: whether its client has gone.
fn waiting_set(
    service: &LockService,
    request: MultiAcquireRequest,
    hung_up: bool,
) -> tokio::task::JoinHandle<MultiAcquired> {
    let service = service.clone();
    tokio::spawn(async move {
        service
            .locks()
            .acquire_all(request, move || hung_up)
            .await
            .unwrap()
    })
}

#[tokio::test]
async fn a_waiting_set_is_granted_when_its_last_lock_is_freed_and_holds_nothing_before() {
    let service = service();
    single(&service, "x", "a").await;
    single(&service, "y", "c").await;
    assert_eq!(
        service
            .locks()
            .acquire_all(request("o", &["a", "b", "c"], 0), || false)
            .await
            .unwrap(),
        MultiAcquired::Unavailable {
            resources: vec![name("a"), name("c")]
        }
    );
    let waiter = waiting_set(&service, request("o", &["a", "b", "c"], 5_000), false);
    tokio::time::sleep(Duration::from_millis(50)).await;
    // While it waits it holds nothing: b is free for anyone.
    assert!(matches!(
        single(&service, "z", "b").await,
        Acquired::Granted { .. }
    ));
    release(&service, "z", "b").await;
    release(&service, "x", "a").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished(), "c is still held");
    release(&service, "y", "c").await;
    let outcome = tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("granted soon after the last release")
        .unwrap();
    let MultiAcquired::Granted { locks, waited } = outcome else {
        panic!("expected the set, got {outcome:?}");
    };
    assert!(waited);
    assert_eq!(locks.len(), 3);
    let results = service
        .locks()
        .release_all(
            Tenant::default_tenant(),
            Owner::parse("o").unwrap(),
            vec![name("c"), name("nope"), name("a")],
        )
        .await
        .unwrap();
    assert!(matches!(results[0], (_, ReleaseResult::Released(_))));
    assert_eq!(results[1].1, ReleaseResult::NotFound);
    assert!(matches!(results[2], (_, ReleaseResult::Released(_))));
}

#[tokio::test]
async fn a_wait_that_ends_says_when_to_retry_and_a_hung_up_waiter_keeps_nothing() {
    let service = service();
    single(&service, "x", "a").await;
    let outcome = service
        .locks()
        .acquire_all(request("o", &["a", "b"], 300), || false)
        .await
        .unwrap();
    let MultiAcquired::TimedOut {
        resources,
        retry_after_seconds,
    } = outcome
    else {
        panic!("expected the wait to end, got {outcome:?}");
    };
    assert_eq!(resources, [name("a")]);
    assert!(
        (59..=61).contains(&retry_after_seconds),
        "{retry_after_seconds}"
    );
    let waiter = waiting_set(&service, request("gone", &["a", "b"], 5_000), true);
    tokio::time::sleep(Duration::from_millis(50)).await;
    release(&service, "x", "a").await;
    assert_eq!(waiter.await.unwrap(), MultiAcquired::HungUp);
    let a = service
        .locks()
        .status(Tenant::default_tenant(), name("a"))
        .await
        .unwrap();
    let b = service
        .locks()
        .status(Tenant::default_tenant(), name("b"))
        .await
        .unwrap();
    assert_eq!((a, b), (None, None), "the gone client's grants were undone");
}

/// How many tries a waiting set has made once it is past its first ones, made every 200 ms until
/// the hints are live: none for 300 ms (then it looks by itself only every 5 s).
async fn past_first_tries(noting: &crate::waiting::tests::Noting) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut tries = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = noting.count("acquire-all");
        if now > 0 && now == tries {
            return tries;
        }
        assert!(std::time::Instant::now() < deadline, "the set kept trying");
        tries = now;
    }
}

/// A waiting set watches its own locks: releases of other locks through this process do not
/// make it try again (a write each), while the release of one of its locks does, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_set_tries_again_for_a_release_of_its_own_locks_only() {
    // Live hints that never come: a waiting set looks by itself only every 5 s.
    let crate::waiting::tests::Hinted {
        service,
        noting,
        send: _no_hints,
        ..
    } = crate::waiting::tests::Hinted::new();
    single(&service, "x", "a").await;
    let waiter = waiting_set(&service, request("o", &["a", "b"], 20_000), false);
    let tries = past_first_tries(&noting).await;
    for round in 0..20 {
        let other = format!("other-{round}");
        single(&service, "y", &other).await;
        assert!(matches!(
            release(&service, "y", &other).await,
            ReleaseResult::Released(_)
        ));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        noting.count("acquire-all") - tries <= 1,
        "20 releases of other locks made {} tries",
        noting.count("acquire-all") - tries
    );
    assert!(!waiter.is_finished());
    release(&service, "x", "a").await;
    let outcome = tokio::time::timeout(Duration::from_millis(2_500), waiter)
        .await
        .expect("granted at once after its lock's release, not at its own look 5 s on")
        .unwrap();
    assert!(
        matches!(outcome, MultiAcquired::Granted { .. }),
        "{outcome:?}"
    );
}

/// Another process shares the store, which can only say that it committed something (SQLite's
/// hint, `Freed::Unknown`, as often as every 5 ms): the poller reads the locks that refused a
/// waiting set (a read) before the set tries again (a write), so hints that left them as they
/// were cost no try; once that process has let a reader in where a writer was, the next hint
/// grants the set that asks to read it, long before its own next look (every 5 s while hints
/// are live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unnamed_hint_costs_a_waiting_set_a_try_only_once_its_locks_may_be_free() {
    use lock_domain::{Claim, Freed, LeaseOp, LeaseOutcome, LeaseStore, LeaseTerms, Place};

    let crate::waiting::tests::Hinted {
        service,
        memory,
        noting,
        send,
    } = crate::waiting::tests::Hinted::new();
    // What the other process does, straight to the store: no hint of this process's own.
    let elsewhere = |op: LeaseOp| {
        let memory = Arc::clone(&memory);
        async move { memory.apply(Tenant::default_tenant(), op).await.unwrap() }
    };
    let take = |who: &str, claim: Claim| LeaseOp::Acquire {
        place: Place::Lock(name("a")),
        claim,
        terms: LeaseTerms::new(
            Owner::parse(who).unwrap(),
            Ttl::parse(60, 3_600).unwrap(),
            None,
        ),
    };
    let taken = elsewhere(take("x", Claim::Exclusive)).await;
    assert!(matches!(taken, LeaseOutcome::Granted(_)), "{taken:?}");
    let reads_a = MultiAcquireRequest {
        set: LockSet::new(
            request("o", &["b"], 0).set.terms().clone(),
            vec![
                (name("a"), LockMode::Shared),
                (name("b"), LockMode::Exclusive),
            ],
        )
        .unwrap(),
        ..request("o", &["a", "b"], 20_000)
    };
    let waiter = waiting_set(&service, reads_a, false);
    let tries = past_first_tries(&noting).await;
    let looks = noting.count("look");
    for _ in 0..20 {
        send.send(Freed::Unknown).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        noting.count("acquire-all") - tries <= 1,
        "20 hints of commits that left its locks as they were made {} tries",
        noting.count("acquire-all") - tries
    );
    assert!(noting.count("look") > looks, "the hints were looked into");
    assert!(!waiter.is_finished());

    crate::waiting::tests::released_elsewhere(
        &memory,
        &Tenant::default_tenant(),
        Place::Lock(name("a")),
        "x",
    )
    .await;
    let read = elsewhere(take("r", Claim::Shared)).await;
    assert!(matches!(read, LeaseOutcome::Granted(_)), "{read:?}");
    send.send(Freed::Unknown).unwrap();
    let outcome = tokio::time::timeout(Duration::from_millis(2_500), waiter)
        .await
        .expect("granted within 2.5 s of the hint, not at its own look 5 s on")
        .unwrap();
    let MultiAcquired::Granted { locks, .. } = outcome else {
        panic!("expected the set, got {outcome:?}");
    };
    assert_eq!(locks[0].mode, LockMode::Shared, "{locks:?}");
}

/// The store of [`a_release_while_a_refused_set_looks_wakes_it_at_once`]: the first look that
/// one task makes after its first try of a set reads the store at once, then waits until the
/// test lets its answer go (as a read that is slow to come back).
struct HeldLook {
    store: Arc<crate::waiting::tests::Noting>,
    /// The task whose look is held, and whether it has tried a set yet.
    task: std::sync::Mutex<Option<(tokio::task::Id, bool)>>,
    /// Told once the held look has read.
    read: tokio::sync::Notify,
    /// Lets the held look's answer go.
    open: tokio::sync::Notify,
}

impl HeldLook {
    /// Whether this call, `op`, is the look to hold (and it is held only once).
    fn holds(&self, op: &lock_domain::LeaseOp) -> bool {
        let mut task = self.task.lock().unwrap();
        let Some((id, tried)) = task.as_mut() else {
            return false;
        };
        if tokio::task::try_id() != Some(*id) {
            return false;
        }
        match op {
            lock_domain::LeaseOp::AcquireAll(_) => {
                *tried = true;
                false
            }
            lock_domain::LeaseOp::Look(_) if *tried => {
                *task = None;
                true
            }
            _ => false,
        }
    }
}

#[async_trait::async_trait]
impl lock_domain::LeaseStore for HeldLook {
    async fn apply(
        &self,
        tenant: Tenant,
        op: lock_domain::LeaseOp,
    ) -> Result<lock_domain::LeaseOutcome, lock_domain::RepositoryError> {
        let held = self.holds(&op);
        let outcome = self.store.apply(tenant, op).await;
        if held {
            self.read.notify_one();
            self.open.notified().await;
        }
        outcome
    }
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: lock_domain::LeaseOp,
        then: lock_domain::LeaseOp,
    ) -> (lock_domain::Applied, lock_domain::Applied) {
        self.store.apply_then(tenant, first, then).await
    }
    fn applies_together(&self) -> bool {
        self.store.applies_together()
    }
    async fn list_locks(
        &self,
        tenant: Tenant,
        query: lock_domain::ListQuery,
    ) -> Result<lock_domain::ListPage, lock_domain::RepositoryError> {
        self.store.list_locks(tenant, query).await
    }
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: lock_domain::ListQuery,
    ) -> Result<lock_domain::SemaphorePage, lock_domain::RepositoryError> {
        self.store.list_semaphores(tenant, query).await
    }
}

/// The window between a set's refused try and its sleep: another process frees the lock that
/// refused it after the set's own look has read it held, and says only that it committed
/// something (SQLite's `Freed::Unknown`). The set told its watch what refused it before that
/// look, so the poller's look after the hint reads that lock and wakes the set, which tries at
/// once instead of sleeping on the stale look until its own next one (5 s while hints are live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_while_a_refused_set_looks_wakes_it_at_once() {
    use lock_domain::{Freed, LeaseOp, LeaseOutcome, LeaseStore, Place};

    let memory = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let noting = Arc::new(crate::waiting::tests::Noting::over(Arc::clone(&memory)));
    let store = Arc::new(HeldLook {
        store: Arc::clone(&noting),
        task: std::sync::Mutex::default(),
        read: tokio::sync::Notify::new(),
        open: tokio::sync::Notify::new(),
    });
    let (hints, send) = crate::waiting::tests::SentHints::new();
    let hints = Arc::new(hints);
    let service = crate::waiting::tests::service_over(
        Arc::clone(&store) as _,
        Arc::clone(&memory),
        Some(Arc::clone(&hints) as _),
    );
    // Another process holds `a` for a minute: straight to the store, with no hint.
    let held_elsewhere = LeaseOp::Acquire {
        place: Place::Lock(name("a")),
        claim: lock_domain::Claim::Exclusive,
        terms: request("x", &["a"], 0).set.terms().clone(),
    };
    let taken = memory
        .apply(Tenant::default_tenant(), held_elsewhere)
        .await
        .unwrap();
    assert!(matches!(taken, LeaseOutcome::Granted(_)), "{taken:?}");

    let waiter = {
        let (service, store) = (service.clone(), Arc::clone(&store));
        tokio::spawn(async move {
            *store.task.lock().unwrap() = Some((tokio::task::id(), false));
            service
                .locks()
                .acquire_all(request("o", &["a", "b"], 20_000), || false)
                .await
                .unwrap()
        })
    };
    tokio::time::timeout(Duration::from_secs(10), store.read.notified())
        .await
        .expect("the set was refused and looked at `a`");
    // The set's look has read `a` held. Its wait subscribed to the hints; the poller's look when
    // they went live is over.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !hints.subscribed() {
        assert!(std::time::Instant::now() < deadline, "no subscription");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Now the other process releases `a`.
    let looks = noting.count("look");
    crate::waiting::tests::released_elsewhere(
        &memory,
        &Tenant::default_tenant(),
        Place::Lock(name("a")),
        "x",
    )
    .await;
    send.send(Freed::Unknown).unwrap();
    while noting.count("look") == looks {
        assert!(
            std::time::Instant::now() < deadline,
            "the poller did not look at the lock that refused the set"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The set's look answers what it read: `a` held for another minute.
    store.open.notify_one();
    let outcome = tokio::time::timeout(Duration::from_millis(2_500), waiter)
        .await
        .expect("granted at once, not at its own look 5 s on")
        .unwrap();
    assert!(
        matches!(outcome, MultiAcquired::Granted { .. }),
        "{outcome:?}"
    );
}
