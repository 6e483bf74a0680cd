//! The guard against the in-memory repository with a manual clock (lease loss, failed
//! renewals, release on drop) and against SQLite (renewal keeps the lock past its TTL).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lock_domain::testing::calls::LeaseCalls;
use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use lock_domain::{
    AcquireOutcome, Capacity, LeaseOp, LeaseOutcome, LeaseStore, ListPage, ListQuery, Lock, Owner,
    PermitReleaseResult, ReleaseResult, RepositoryError, ResourceName, SemaphorePage, SystemClock,
    Tenant, Ttl, Weight,
};
use lock_guard::{GuardError, GuardSettings, LockGuard};
use lock_service::{LockService, NoEvents, ServicePorts, WaiterLimits};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

fn resource(name: &str) -> ResourceName {
    ResourceName::parse(name).unwrap()
}

fn owner(name: &str) -> Owner {
    Owner::parse(name).unwrap()
}

fn ttl(seconds: i64) -> Ttl {
    Ttl::parse(seconds, 86_400).unwrap()
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn status(repo: &dyn LeaseStore, name: &str) -> Option<Lock> {
    block_on(repo.status(Tenant::default_tenant(), resource(name))).unwrap()
}

/// Polls `condition` every 10 ms for up to `within`; returns how long it took.
fn eventually(within: Duration, condition: impl Fn() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < within {
        if condition() {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// The in-memory repository, whose renewals fail (Unavailable) while `failing` is set.
#[derive(Debug, Clone)]
struct Flaky {
    inner: InMemoryLockRepository,
    failing: Arc<AtomicBool>,
}

#[async_trait]
impl LeaseStore for Flaky {
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        if matches!(op, LeaseOp::Renew { .. }) && self.failing.load(Ordering::SeqCst) {
            return Err(RepositoryError::unavailable("the database is cut off"));
        }
        self.inner.apply(tenant, op).await
    }
    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        self.inner.list_locks(tenant, query).await
    }
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.inner.list_semaphores(tenant, query).await
    }
}

#[test]
fn the_guard_holds_the_lock_with_its_token_and_drop_releases_it() {
    let repo: Arc<InMemoryLockRepository> =
        Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new())));
    let guard = LockGuard::acquire(
        LockService::over(Arc::clone(&repo)),
        resource("export"),
        owner("job"),
        ttl(30),
    )
    .unwrap();
    let lock = status(repo.as_ref(), "export").expect("held");
    assert_eq!(lock.owner, owner("job"));
    assert_eq!(guard.fencing_token(), lock.fencing_token);
    assert!(guard.is_safe());
    assert!(!guard.is_lost());

    // Held by the guard: another owner is refused.
    let other = LockGuard::acquire(
        LockService::over(Arc::clone(&repo)),
        resource("export"),
        owner("other"),
        ttl(30),
    );
    assert!(matches!(other, Err(GuardError::Held(_))), "{other:?}");

    drop(guard);
    assert_eq!(status(repo.as_ref(), "export"), None, "released on drop");

    // An explicit release reports its outcome.
    let guard = LockGuard::acquire(
        LockService::over(Arc::clone(&repo)),
        resource("export"),
        owner("job"),
        ttl(30),
    )
    .unwrap();
    let token = guard.fencing_token();
    assert_eq!(guard.release().unwrap(), ReleaseResult::Released(token));
}

#[test]
fn a_lost_lease_flips_is_safe_and_drop_leaves_the_new_holder_alone() {
    let clock = ManualClock::new();
    let repo: Arc<InMemoryLockRepository> =
        Arc::new(InMemoryLockRepository::new(Arc::new(clock.clone())));
    let mut settings = GuardSettings::for_ttl(ttl(30));
    settings.renew_every = Duration::from_millis(50);
    let guard = LockGuard::acquire_with(
        LockService::over(Arc::clone(&repo)),
        resource("export"),
        owner("job"),
        ttl(30),
        settings,
    )
    .unwrap();
    // The database's time passes the lease (the job was paused, say) and another owner takes
    // the lock: the next renewal is Forbidden.
    clock.advance(Duration::from_secs(31));
    let thief = block_on(repo.acquire(
        Tenant::default_tenant(),
        resource("export"),
        owner("thief"),
        ttl(30),
        None,
    ))
    .unwrap();
    let AcquireOutcome::Granted(thief) = thief else {
        panic!("{thief:?}")
    };
    assert!(eventually(Duration::from_secs(5), || guard.is_lost()).is_some());
    assert!(!guard.is_safe());
    assert!(thief.fencing_token > guard.fencing_token());
    drop(guard);
    assert_eq!(
        status(repo.as_ref(), "export").map(|l| l.owner),
        Some(owner("thief"))
    );
}

#[test]
fn failed_renewals_make_the_lease_unsafe_after_ttl_minus_margin_and_a_success_restores_it() {
    let failing = Arc::new(AtomicBool::new(false));
    let repo: Arc<dyn LeaseStore> = Arc::new(Flaky {
        inner: InMemoryLockRepository::new(Arc::new(ManualClock::new())),
        failing: Arc::clone(&failing),
    });
    // ttl 1 s: renewals every 333 ms, a 100 ms margin: unsafe 900 ms after the last success.
    let started = Instant::now();
    // Only the renewals fail; the history and the count of leases are a store of their own.
    let service = LockService::new(
        ServicePorts {
            store: lock_service::StorePorts {
                leases: Arc::clone(&repo),
                sessions: Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new()))),
                history: Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new()))),
                usage: Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new()))),
            },
            hints: None,
            clock: Arc::new(SystemClock),
            events: Arc::new(NoEvents),
        },
        WaiterLimits::default(),
    );
    let guard = LockGuard::acquire(service, resource("r"), owner("job"), ttl(1)).unwrap();
    failing.store(true, Ordering::SeqCst);
    let unsafe_after = eventually(Duration::from_secs(5), || !guard.is_safe())
        .map(|_| started.elapsed())
        .expect("unsafe");
    eprintln!("unsafe {unsafe_after:?} after the acquire");
    assert!(
        unsafe_after >= Duration::from_millis(850) && unsafe_after < Duration::from_millis(1_300),
        "{unsafe_after:?}"
    );
    assert!(!guard.is_lost(), "failures are not a loss");
    failing.store(false, Ordering::SeqCst);
    // The manual clock did not move, so the lock is still ours: the next retry renews it.
    assert!(eventually(Duration::from_secs(2), || guard.is_safe()).is_some());
}

#[test]
fn renewal_keeps_the_lock_alive_past_its_ttl_on_sqlite() {
    let db = TestDatabase::sqlite();
    let store =
        DieselLockRepository::open(&StoreConfig::new(db.url().clone()), Arc::new(SystemClock))
            .unwrap();
    let repo = Arc::new(store);
    let guard = LockGuard::acquire(
        LockService::over(Arc::clone(&repo)),
        resource("sqlite job"),
        owner("job"),
        ttl(1),
    )
    .unwrap();
    let token = guard.fencing_token();
    std::thread::sleep(Duration::from_millis(2_500));
    let lock = status(repo.as_ref(), "sqlite job").expect("still held, 2.5 ttl later");
    assert_eq!((lock.owner, lock.fencing_token), (owner("job"), token));
    assert!(guard.is_safe());
    drop(guard);
    assert_eq!(
        status(repo.as_ref(), "sqlite job"),
        None,
        "released on drop"
    );
}

fn holders(repo: &dyn LeaseStore, name: &str) -> Vec<String> {
    block_on(repo.semaphore(Tenant::default_tenant(), resource(name)))
        .unwrap()
        .map(|state| {
            state
                .holders
                .iter()
                .map(|lease| lease.owner.as_str().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn permit_guards_share_a_limit_and_release_on_drop() {
    let repo = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let limit = Capacity::semaphore_limit(3).unwrap();
    let guard = |who: &str, permits: i64| {
        LockGuard::acquire_permits(
            LockService::over(Arc::clone(&repo)),
            resource("exports"),
            owner(who),
            Weight::permits(permits, limit).unwrap(),
            limit,
            ttl(30),
        )
    };
    let a = guard("a", 2).unwrap();
    let b = guard("b", 1).unwrap();
    assert!(b.fencing_token() > a.fencing_token());
    assert_eq!(a.resource(), &resource("exports"));
    match guard("c", 1) {
        Err(GuardError::Unavailable { available: 0, .. }) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
    match LockGuard::acquire_permits(
        LockService::over(Arc::clone(&repo)),
        resource("exports"),
        owner("c"),
        Weight::permits(1, Capacity::semaphore_limit(4).unwrap()).unwrap(),
        Capacity::semaphore_limit(4).unwrap(),
        ttl(30),
    ) {
        Err(GuardError::Conflict { .. }) => {}
        other => panic!("expected a limit conflict, got {other:?}"),
    }
    assert_eq!(holders(repo.as_ref(), "exports"), ["a", "b"]);
    drop(a);
    assert_eq!(holders(repo.as_ref(), "exports"), ["b"]);
    let c = guard("c", 2).unwrap();
    assert!(c.fencing_token() > b.fencing_token());
    assert!(matches!(b.release(), Ok(ReleaseResult::Released(_))));
    assert_eq!(holders(repo.as_ref(), "exports"), ["c"]);
}

#[test]
fn a_permit_guard_renews_past_its_ttl_and_notices_a_lost_grant() {
    let db = TestDatabase::sqlite();
    let store =
        DieselLockRepository::open(&StoreConfig::new(db.url().clone()), Arc::new(SystemClock))
            .unwrap();
    let repo = Arc::new(store);
    let limit = Capacity::semaphore_limit(2).unwrap();
    let guard = LockGuard::acquire_permits(
        LockService::over(Arc::clone(&repo)),
        resource("sqlite sem"),
        owner("job"),
        Weight::permits(1, limit).unwrap(),
        limit,
        ttl(1),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(2_500));
    assert_eq!(
        holders(repo.as_ref(), "sqlite sem"),
        ["job"],
        "renewed past 2.5 ttl"
    );
    assert!(guard.is_safe());
    // Released behind the guard's back: the next renewal finds no grant.
    let released = block_on(repo.release_permits(
        Tenant::default_tenant(),
        resource("sqlite sem"),
        owner("job"),
    ))
    .unwrap();
    assert!(matches!(released, PermitReleaseResult::Released(_)));
    assert!(eventually(Duration::from_secs(3), || guard.is_lost()).is_some());
    assert!(!guard.is_safe());
}
