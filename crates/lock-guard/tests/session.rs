//! The session guard against the in-memory repository (every primitive under one session and
//! all ended on drop; jeopardy raised and cleared by keepalives that fail and succeed; the
//! session lost before it can run out when keepalives keep failing, and at once when a
//! keepalive finds it ended) and against SQLite (keepalives keep the holds past the TTL).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use lock_domain::{
    Capacity, Clock, FencingToken, Hold, LockMode, Owner, RepositoryError, ResourceName, SessionId,
    SessionOp, SessionOutcome, SessionPage, SessionQuery, SessionStore, SystemClock, Tenant, Ttl,
    Weight,
};
use lock_guard::{GuardError, GuardSettings, SessionGuard, SessionSignal};
use lock_service::{LockService, NoEvents, OpenSession, ServicePorts, StorePorts, WaiterLimits};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

fn name(text: &str) -> ResourceName {
    ResourceName::parse(text).unwrap()
}

fn owner(text: &str) -> Owner {
    Owner::parse(text).unwrap()
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

/// The live session `id` and how many holds it has, as the store has it.
fn look(service: &LockService, id: &SessionId) -> Option<usize> {
    block_on(
        service
            .sessions()
            .look(Tenant::default_tenant(), id.clone()),
    )
    .unwrap()
    .map(|(_, holds)| holds.len())
}

/// The label of the exclusive holder of `resource` (`shared` for readers), or `None`.
fn lock_owner(service: &LockService, resource: &str) -> Option<String> {
    block_on(
        service
            .locks()
            .status(Tenant::default_tenant(), name(resource)),
    )
    .unwrap()
    .map(|hold| match hold {
        Hold::Exclusive(lock) => lock.owner.label().to_owned(),
        Hold::Shared(_) => "shared".to_owned(),
    })
}

fn token_of(service: &LockService, resource: &str) -> Option<FencingToken> {
    match block_on(
        service
            .locks()
            .status(Tenant::default_tenant(), name(resource)),
    )
    .unwrap()
    {
        Some(Hold::Exclusive(lock)) => Some(lock.fencing_token),
        _ => None,
    }
}

/// The in-memory repository's sessions, whose keepalives fail (Unavailable) while `failing` is
/// set.
#[derive(Debug, Clone)]
struct FlakySessions {
    inner: InMemoryLockRepository,
    failing: Arc<AtomicBool>,
}

#[async_trait]
impl SessionStore for FlakySessions {
    async fn apply_session(
        &self,
        tenant: Tenant,
        op: SessionOp,
    ) -> Result<SessionOutcome, RepositoryError> {
        if matches!(op, SessionOp::KeepAlive { .. }) && self.failing.load(Ordering::SeqCst) {
            return Err(RepositoryError::unavailable("the database is cut off"));
        }
        self.inner.apply_session(tenant, op).await
    }
    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError> {
        self.inner.list_sessions(tenant, query).await
    }
    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        self.inner.live_sessions(tenant).await
    }
}

/// A service over the in-memory repository on `clock` whose keepalives fail while the returned
/// flag is set; and a service over the same repository that never fails, to look with.
fn flaky_service(clock: Arc<dyn Clock>) -> (LockService, LockService, Arc<AtomicBool>) {
    let failing = Arc::new(AtomicBool::new(false));
    let inner = InMemoryLockRepository::new(clock);
    let sessions = FlakySessions {
        inner: inner.clone(),
        failing: Arc::clone(&failing),
    };
    let repo = Arc::new(inner);
    let service = LockService::new(
        ServicePorts {
            store: StorePorts {
                sessions: Arc::new(sessions),
                ..StorePorts::of(Arc::clone(&repo))
            },
            hints: None,
            clock: Arc::new(SystemClock),
            events: Arc::new(NoEvents),
        },
        WaiterLimits::default(),
    );
    (service, LockService::over(repo), failing)
}

/// Settings for a session of `ttl` that keeps it alive every `every`.
fn keeping_alive_every(ttl: Ttl, every: Duration) -> GuardSettings {
    let mut settings = GuardSettings::for_ttl(ttl);
    settings.renew_every = every;
    settings.retry_every = every;
    settings
}

fn open_session(
    service: LockService,
    label: &str,
    settings: GuardSettings,
    ttl: Ttl,
) -> SessionGuard {
    let request = OpenSession {
        owner: Some(owner(label)),
        ttl,
        lock_delay: lock_domain::LockDelay::NONE,
    };
    SessionGuard::open_with(service, request, settings).unwrap()
}

#[test]
fn one_session_holds_locks_a_set_permits_and_a_leadership_and_drop_ends_them_all() {
    let repo = Arc::new(InMemoryLockRepository::new(Arc::new(ManualClock::new())));
    let look_with = LockService::over(Arc::clone(&repo));
    let guard = SessionGuard::open(
        LockService::over(Arc::clone(&repo)),
        Some(owner("worker-7")),
        ttl(30),
    )
    .unwrap();
    let id = guard.id().clone();
    assert_eq!(guard.session().owner, owner("worker-7"));
    let wait = Duration::ZERO;
    let exclusive = guard
        .lock(name("report"), LockMode::Exclusive, wait)
        .unwrap();
    let shared = guard.lock(name("config"), LockMode::Shared, wait).unwrap();
    let set = guard
        .locks(
            vec![
                (name("account:1"), LockMode::Exclusive),
                (name("account:2"), LockMode::Exclusive),
            ],
            wait,
        )
        .unwrap();
    assert_eq!(set.len(), 2);
    assert!(
        set[0] > shared && shared > exclusive,
        "one counter, increasing"
    );
    let limit = Capacity::semaphore_limit(3).unwrap();
    let permits = Weight::permits(2, limit).unwrap();
    guard
        .permits(name("exports"), permits, limit, wait)
        .unwrap();
    let term = guard.campaign(name("scheduler"), None, wait).unwrap();
    assert!(term > set[1]);
    assert_eq!(
        look(&look_with, &id),
        Some(6),
        "six holds under one session"
    );
    assert_eq!(
        lock_owner(&look_with, "report").as_deref(),
        Some("worker-7")
    );
    assert!(!guard.is_lost() && !guard.is_in_jeopardy());

    // Held by the session: another holder is refused, all or nothing for a set.
    let other = SessionGuard::open(LockService::over(Arc::clone(&repo)), None, ttl(30)).unwrap();
    let refused = other.locks(
        vec![
            (name("free"), LockMode::Exclusive),
            (name("account:2"), LockMode::Exclusive),
        ],
        wait,
    );
    match refused {
        Err(GuardError::SetHeld(names)) => assert_eq!(names, [name("account:2")]),
        other => panic!("expected SetHeld, got {other:?}"),
    }
    assert_eq!(
        lock_owner(&look_with, "free"),
        None,
        "nothing of the set was taken"
    );
    assert!(matches!(
        other.lock(name("report"), LockMode::Exclusive, wait),
        Err(GuardError::Held(_))
    ));
    assert!(matches!(
        other.permits(name("exports"), permits, limit, wait),
        Err(GuardError::Unavailable { available: 1, .. })
    ));
    assert!(matches!(
        other.campaign(name("scheduler"), None, wait),
        Err(GuardError::NotElected(_))
    ));
    assert!(matches!(other.locks(vec![], wait), Err(GuardError::Set(_))));

    // One hold given up alone; the rest stay.
    assert!(matches!(
        guard.release_lock(name("config")),
        Ok(lock_domain::ReleaseResult::Released(_))
    ));
    assert!(matches!(
        guard.resign(name("scheduler")),
        Ok(lock_domain::ReleaseResult::Released(_))
    ));
    assert_eq!(look(&look_with, &id), Some(4));

    drop(guard);
    assert_eq!(look(&look_with, &id), None, "the session ended on drop");
    for resource in ["report", "account:1", "account:2"] {
        assert_eq!(
            lock_owner(&look_with, resource),
            None,
            "{resource} freed with it"
        );
    }
    // Its places are free at once: the other session takes them.
    other
        .permits(
            name("exports"),
            Weight::permits(3, limit).unwrap(),
            limit,
            wait,
        )
        .unwrap();
    other
        .lock(name("report"), LockMode::Exclusive, wait)
        .unwrap();
    assert!(other.close().unwrap());
}

#[test]
fn the_first_failed_keepalive_raises_jeopardy_and_the_next_success_clears_it() {
    // The store's clock stands still: the session never runs out there, whatever fails.
    let (service, look_with, failing) = flaky_service(Arc::new(ManualClock::new()));
    let settings = keeping_alive_every(ttl(30), Duration::from_millis(50));
    let guard = open_session(service, "flaky", settings, ttl(30));
    guard
        .lock(name("held"), LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    guard.on_signal(move |signal| sink.lock().unwrap().push(signal));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!guard.is_in_jeopardy(), "keepalives succeed");
    assert!(heard.lock().unwrap().is_empty(), "nothing to tell");
    failing.store(true, Ordering::SeqCst);
    assert!(
        eventually(Duration::from_secs(10), || guard.is_in_jeopardy()).is_some(),
        "a failed keepalive raises jeopardy"
    );
    assert!(
        !guard.is_lost(),
        "a failure is no loss while the session can be counted on"
    );
    failing.store(false, Ordering::SeqCst);
    assert!(
        eventually(Duration::from_secs(10), || !guard.is_in_jeopardy()).is_some(),
        "the next successful keepalive clears it"
    );
    assert!(!guard.is_lost());
    assert_eq!(look(&look_with, guard.id()), Some(1));
    // The listener heard each change once, in order.
    assert_eq!(
        *heard.lock().unwrap(),
        [SessionSignal::Jeopardy, SessionSignal::Safe]
    );
}

#[test]
fn keepalives_that_keep_failing_lose_the_session_before_it_can_run_out() {
    // The store keeps real time: the session runs out 3 s after the last keepalive it handled.
    let (service, look_with, failing) = flaky_service(Arc::new(SystemClock));
    let session_ttl = ttl(3);
    let mut settings = keeping_alive_every(session_ttl, Duration::from_millis(300));
    // A wide margin, so that the check below has time to look while the session still lives.
    settings.safety_margin = Duration::from_millis(1_500);
    let guard = open_session(service, "cut-off", settings, session_ttl);
    guard
        .lock(name("fragile"), LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    let id = guard.id().clone();
    let lost_heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&lost_heard);
    guard.on_signal(move |signal| sink.lock().unwrap().push((signal, Instant::now())));
    std::thread::sleep(Duration::from_millis(700));
    // Counted on until then at least: no keepalive sent before the cut can move it back.
    let safe_before_cut = guard.safe_until();
    failing.store(true, Ordering::SeqCst);
    let cut = Instant::now();
    assert!(eventually(Duration::from_secs(10), || guard.is_lost()).is_some());
    let lost_at = Instant::now();
    // Lost while the store still has the session (and its hold) live: before it can run out.
    assert_eq!(
        look(&look_with, &id),
        Some(1),
        "the session still lives when the guard says lost"
    );
    eprintln!("lost {:?} after keepalives began to fail", lost_at - cut);
    // Not before the last successful keepalive's send time + ttl - margin.
    assert!(guard.safe_until() >= safe_before_cut);
    assert!(lost_at >= guard.safe_until());
    assert!(guard.is_in_jeopardy());
    // The listener hears of the loss too, at the deadline (the keepalive task wakes for it),
    // never before it: jeopardy first, then the loss, once.
    let told_lost = || {
        let heard = lost_heard.lock().unwrap();
        heard
            .iter()
            .find(|(s, _)| *s == SessionSignal::Lost)
            .map(|(_, at)| *at)
    };
    assert!(
        eventually(Duration::from_secs(10), || told_lost().is_some()).is_some(),
        "the listener is told of the loss"
    );
    assert!(told_lost().expect("told") >= guard.safe_until());
    let signals: Vec<SessionSignal> = lost_heard.lock().unwrap().iter().map(|(s, _)| *s).collect();
    assert_eq!(signals, [SessionSignal::Jeopardy, SessionSignal::Lost]);
    // Lost for good: keepalives succeed again, but the guard takes nothing more.
    failing.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(400));
    assert!(guard.is_lost());
    assert!(matches!(
        guard.lock(name("more"), LockMode::Exclusive, Duration::ZERO),
        Err(GuardError::SessionLost)
    ));
    // Dropping it still ends the session, which has not run out yet.
    drop(guard);
    assert_eq!(look(&look_with, &id), None);
    assert_eq!(lock_owner(&look_with, "fragile"), None);
}

#[test]
fn a_keepalive_that_finds_the_session_ended_loses_it_at_once() {
    let (service, look_with, _failing) = flaky_service(Arc::new(ManualClock::new()));
    let settings = keeping_alive_every(ttl(60), Duration::from_millis(50));
    let guard = open_session(service, "ended", settings, ttl(60));
    guard
        .lock(name("gone"), LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    // Ended behind the guard's back (an admin's force, another process with the id).
    let ended = block_on(look_with.sessions().end(
        Tenant::default_tenant(),
        guard.id().clone(),
        None,
    ))
    .unwrap();
    assert!(ended.is_some());
    assert!(
        eventually(Duration::from_secs(10), || guard.is_lost()).is_some(),
        "the next keepalive's answer loses it, long before its 60 s"
    );
    assert!(
        !guard.is_in_jeopardy(),
        "no keepalive failed: it was answered"
    );
    assert!(guard.safe_until() > Instant::now());
    assert!(matches!(
        guard.lock(name("gone"), LockMode::Exclusive, Duration::ZERO),
        Err(GuardError::SessionLost)
    ));
    assert!(!guard.close().unwrap(), "it had ended already");
}

#[test]
fn keepalives_keep_every_hold_past_the_ttl_on_sqlite() {
    let db = TestDatabase::sqlite();
    let store =
        DieselLockRepository::open(&StoreConfig::new(db.url().clone()), Arc::new(SystemClock))
            .unwrap();
    let repo = Arc::new(store);
    let look_with = LockService::over(Arc::clone(&repo));
    let guard = SessionGuard::open(
        LockService::over(Arc::clone(&repo)),
        Some(owner("sqlite job")),
        ttl(1),
    )
    .unwrap();
    let token = guard
        .lock(name("sqlite lock"), LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    let limit = Capacity::semaphore_limit(2).unwrap();
    guard
        .permits(
            name("sqlite sem"),
            Weight::permits(1, limit).unwrap(),
            limit,
            Duration::ZERO,
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(2_500));
    assert!(!guard.is_lost());
    assert_eq!(
        look(&look_with, guard.id()),
        Some(2),
        "both held 2.5 ttl later"
    );
    assert_eq!(token_of(&look_with, "sqlite lock"), Some(token));
    let id = guard.id().clone();
    assert!(guard.close().unwrap());
    assert_eq!(look(&look_with, &id), None);
    assert_eq!(
        lock_owner(&look_with, "sqlite lock"),
        None,
        "ended with the session"
    );
}
