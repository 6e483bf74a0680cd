//! The hand-over of a grant to a waiter whose client is gone, with two waiters of one owner:
//! the undo of the first grant must never end the second waiter's lease.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::calls::LeaseCalls;
use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    AcquireOutcome, Applied, Freed, FreedHints, FreedLocks, Holding, LeaseOp, LeaseOutcome,
    LeaseStore, ListPage, ListQuery, LockMode, Owner, Place, RepositoryError, ResourceName,
    SemaphorePage, SystemClock, Tenant, Ttl,
};

use super::{WaitOutcome, Waiting};

fn setup() -> (Waiting, Arc<dyn LeaseStore>, Tenant, ResourceName) {
    let repo: Arc<dyn LeaseStore> = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    (
        waiting_over(Arc::clone(&repo)),
        repo,
        Tenant::default_tenant(),
        ResourceName::parse("r").unwrap(),
    )
}

/// Waiting acquires over `repo`, with the default limits and no hints.
fn waiting_over(repo: Arc<dyn LeaseStore>) -> Waiting {
    waiting_with_hints(repo, None)
}

/// Waiting acquires over `repo`, with the default limits, woken by `hints`.
fn waiting_with_hints(repo: Arc<dyn LeaseStore>, hints: Option<Arc<dyn FreedHints>>) -> Waiting {
    // No limits: nothing is counted (a store of its own to count in).
    let usage = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    Waiting::new(
        repo,
        hints,
        Arc::new(SystemClock),
        Arc::new(crate::NoEvents),
        super::WaiterLimits::default(),
        crate::quota::Quotas::new(usage),
    )
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).unwrap()
}

fn ttl() -> Ttl {
    Ttl::parse(60, 3_600).unwrap()
}

/// Holder H holds `r`; two waiters of owner O queue behind it; H releases.
async fn two_waiters_of_one_owner() -> (Waiting, Arc<dyn LeaseStore>, super::Ticket, super::Ticket)
{
    let (waiting, repo, tenant, resource) = setup();
    let held = repo
        .acquire(tenant.clone(), resource.clone(), owner("h"), ttl(), None)
        .await
        .unwrap();
    assert!(matches!(held, AcquireOutcome::Granted(_)));
    let first = waiting
        .enqueue(
            tenant.clone(),
            resource.clone(),
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("o"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter");
    let second = waiting
        .enqueue(
            tenant.clone(),
            resource.clone(),
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("o"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter");
    tokio::time::sleep(Duration::from_millis(20)).await;
    repo.release(tenant.clone(), resource.clone(), owner("h"))
        .await
        .unwrap();
    waiting.freed(&tenant, &resource);
    (waiting, repo, first, second)
}

async fn assert_second_waiter_holds(repo: &Arc<dyn LeaseStore>, second: super::Ticket) {
    let WaitOutcome::Granted(lock) = second.wait(Duration::from_secs(5), || false).await else {
        panic!("the second waiter was not granted");
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let status = repo
        .status(Tenant::default_tenant(), ResourceName::parse("r").unwrap())
        .await
        .unwrap();
    assert_eq!(
        status.as_ref(),
        Some(&lock),
        "the second waiter was answered a lease that is gone"
    );
    let third = repo
        .acquire(
            Tenant::default_tenant(),
            ResourceName::parse("r").unwrap(),
            owner("third"),
            ttl(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(third, AcquireOutcome::Held, "a third owner got the lock");
}

/// The in-memory store, with acquires (`.1`) and looks (`.2`) that take a while (a slow
/// database).
struct SlowAcquires(InMemoryLockRepository, Duration, Duration);

#[async_trait::async_trait]
impl LeaseStore for SlowAcquires {
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        match op {
            LeaseOp::Acquire { .. } => tokio::time::sleep(self.1).await,
            LeaseOp::Look(_) => tokio::time::sleep(self.2).await,
            _ => {}
        }
        self.0.apply(tenant, op).await
    }
    async fn look_many(
        &self,
        places: Vec<(Tenant, Place)>,
    ) -> Result<Vec<Holding>, RepositoryError> {
        tokio::time::sleep(self.2).await;
        self.0.look_many(places).await
    }
    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        self.0.list_locks(tenant, query).await
    }
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.0.list_semaphores(tenant, query).await
    }
}

/// A wait that ends while the acquire attempt made for it is still running must not answer
/// "not acquired" when that attempt grants: the lease would exist with no request to explain
/// it (others are refused), until its undo.
#[tokio::test]
async fn a_wait_that_ends_during_its_attempt_answers_with_that_attempt_s_grant() {
    let repo: Arc<dyn LeaseStore> = Arc::new(SlowAcquires(
        InMemoryLockRepository::new(Arc::new(SystemClock)),
        Duration::from_millis(300),
        Duration::ZERO,
    ));
    let waiting = waiting_over(Arc::clone(&repo));
    let ticket = waiting
        .enqueue(
            Tenant::default_tenant(),
            ResourceName::parse("r").unwrap(),
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("o"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter");
    let outcome = ticket.wait(Duration::from_millis(100), || false).await;
    let WaitOutcome::Granted(lock) = outcome else {
        panic!("the attempt in flight granted the lock, but the waiter was told otherwise");
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let status = repo
        .status(Tenant::default_tenant(), ResourceName::parse("r").unwrap())
        .await
        .unwrap();
    assert_eq!(status, Some(lock));
}

/// A wait that ends before the queue could read who holds the lock (the store is slow to answer,
/// as during an outage) cannot say "held by another owner": the holder itself may be the one
/// waiting. It answers that the store is unavailable.
#[tokio::test]
async fn a_wait_that_ends_before_the_queue_saw_the_lock_answers_unavailable() {
    let memory = InMemoryLockRepository::new(Arc::new(SystemClock));
    let (tenant, resource) = (Tenant::default_tenant(), ResourceName::parse("r").unwrap());
    memory
        .acquire(tenant.clone(), resource.clone(), owner("me"), ttl(), None)
        .await
        .unwrap();
    let repo: Arc<dyn LeaseStore> = Arc::new(SlowAcquires(
        memory,
        Duration::ZERO,
        Duration::from_millis(500),
    ));
    let waiting = waiting_over(Arc::clone(&repo));
    let ticket = waiting
        .enqueue(
            tenant,
            resource,
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("me"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter");
    let outcome = ticket.wait(Duration::from_millis(100), || false).await;
    assert!(
        matches!(
            outcome,
            WaitOutcome::Failed(RepositoryError::Unavailable(_))
        ),
        "the waiter was not told the store is unavailable"
    );
}

#[tokio::test]
async fn a_hung_up_waiter_s_undo_never_ends_the_next_same_owner_waiter_s_lease() {
    let (_waiting, repo, first, second) = two_waiters_of_one_owner().await;
    // The first waiter's client has hung up by the time its grant arrives.
    let outcome = first.wait(Duration::from_secs(5), || true).await;
    assert!(matches!(outcome, WaitOutcome::HungUp));
    assert_second_waiter_holds(&repo, second).await;
}

#[tokio::test]
async fn a_dropped_waiter_s_undo_never_ends_the_next_same_owner_waiter_s_lease() {
    let (_waiting, repo, first, second) = two_waiters_of_one_owner().await;
    // The grant is in the first waiter's channel when its request is dropped.
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(first);
    assert_second_waiter_holds(&repo, second).await;
}

/// `r` held by owner `elsewhere` (straight on the store, as another process would), and a
/// waiter of owner `here` in line for it.
async fn held_elsewhere_and_waited_for(
    waiting: &Waiting,
    repo: &Arc<dyn LeaseStore>,
) -> super::Ticket {
    let (tenant, resource) = (Tenant::default_tenant(), ResourceName::parse("r").unwrap());
    let held = repo
        .acquire(
            tenant.clone(),
            resource.clone(),
            owner("elsewhere"),
            ttl(),
            None,
        )
        .await
        .unwrap();
    assert!(matches!(held, AcquireOutcome::Granted(_)));
    waiting
        .enqueue(
            tenant,
            resource,
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("here"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter")
}

/// Another process releases (straight on the store, so this process hears nothing of it and the
/// store gives no hints): the poller sees the lock free and the waiter is granted, within a few
/// poll periods; and with nothing changing, the poller wakes no queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_poller_finds_a_release_made_elsewhere() {
    let (waiting, repo, tenant, resource) = setup();
    let ticket = held_elsewhere_and_waited_for(&waiting, &repo).await;
    tokio::time::sleep(super::POLL_PERIOD * 2).await;
    repo.release(tenant.clone(), resource.clone(), owner("elsewhere"))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let WaitOutcome::Granted(lock) = ticket.wait(Duration::from_secs(5), || false).await else {
        panic!("the waiter was not granted after a release elsewhere");
    };
    assert_eq!(lock.owner, owner("here"));
    assert!(
        started.elapsed() < super::POLL_PERIOD * 5,
        "granted only after {:?}",
        started.elapsed()
    );
}

/// A service over an in-memory store whose lease calls are noted, with live hints that come
/// only when the test sends them.
pub(crate) struct Hinted {
    pub(crate) service: crate::LockService,
    /// The store itself: what is done to it directly, as by another process, no hint tells.
    pub(crate) memory: Arc<InMemoryLockRepository>,
    pub(crate) noting: Arc<Noting>,
    pub(crate) send: tokio::sync::mpsc::UnboundedSender<Freed>,
}

impl Hinted {
    pub(crate) fn new() -> Self {
        let memory = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
        let noting = Arc::new(Noting::over(Arc::clone(&memory)));
        let (hints, send) = SentHints::new();
        let service = service_over(
            Arc::clone(&noting) as _,
            Arc::clone(&memory),
            Some(Arc::new(hints)),
        );
        Self {
            service,
            memory,
            noting,
            send,
        }
    }
}

/// What another process sharing `memory` does, straight to the store (so no hint tells of it):
/// `owner` releases its lease of `tenant`'s `place`, which it held.
pub(crate) async fn released_elsewhere(
    memory: &InMemoryLockRepository,
    tenant: &Tenant,
    place: Place,
    owner: &str,
) {
    let released = memory
        .apply(
            tenant.clone(),
            LeaseOp::Release {
                place,
                owner: Owner::parse(owner).unwrap(),
            },
        )
        .await
        .unwrap();
    assert!(
        matches!(released, LeaseOutcome::Released(_)),
        "{released:?}"
    );
}

/// The service over `leases` (which may note its calls) and the rest of `memory`, woken by
/// `hints`.
pub(crate) fn service_over(
    leases: Arc<dyn LeaseStore>,
    memory: Arc<InMemoryLockRepository>,
    hints: Option<Arc<dyn FreedHints>>,
) -> crate::LockService {
    crate::LockService::new(
        crate::ServicePorts {
            store: crate::StorePorts {
                leases,
                sessions: Arc::clone(&memory) as _,
                history: Arc::clone(&memory) as _,
                usage: memory as _,
            },
            hints,
            clock: Arc::new(SystemClock),
            events: Arc::new(crate::NoEvents),
        },
        super::WaiterLimits::default(),
    )
}

/// Hints handed over by the test: the store's subscription (once) yields what is sent.
pub(crate) struct SentHints(std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Freed>>>);

impl SentHints {
    /// Hints, and where the test sends them.
    pub(crate) fn new() -> (Self, tokio::sync::mpsc::UnboundedSender<Freed>) {
        let (send, hints) = tokio::sync::mpsc::unbounded_channel();
        (Self(std::sync::Mutex::new(Some(hints))), send)
    }

    /// Whether the store's subscription has been taken (hints are live from then on).
    pub(crate) fn subscribed(&self) -> bool {
        self.0.lock().unwrap().is_none()
    }
}

struct SentHintsSubscription(tokio::sync::mpsc::UnboundedReceiver<Freed>);

#[async_trait::async_trait]
impl FreedLocks for SentHintsSubscription {
    async fn next(&mut self) -> Option<Freed> {
        self.0.recv().await
    }
}

#[async_trait::async_trait]
impl FreedHints for SentHints {
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        let taken = self.0.lock().unwrap().take();
        Ok(taken.map(|hints| Box::new(SentHintsSubscription(hints)) as Box<dyn FreedLocks>))
    }
}

/// Another process releases, and the store can only say that something changed (SQLite's
/// hint, `Freed::Unknown`): the poller looks at once, and the waiter is granted long before the
/// poller's next look of its own (every `SAFETY_PERIOD` while hints are live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hint_that_anything_may_be_free_makes_the_poller_look_at_once() {
    let (_, repo, tenant, resource) = setup();
    let (hints, send) = SentHints::new();
    let waiting = waiting_with_hints(Arc::clone(&repo), Some(Arc::new(hints)));
    let ticket = held_elsewhere_and_waited_for(&waiting, &repo).await;
    // The subscription is live and its first looks are over: the queue knows the lock is held
    // for another minute, and the poller would not look again for `SAFETY_PERIOD`.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(waiting.poll_period(), super::SAFETY_PERIOD);
    repo.release(tenant.clone(), resource.clone(), owner("elsewhere"))
        .await
        .unwrap();
    send.send(Freed::Unknown).unwrap();
    let within = super::SAFETY_PERIOD * 4 / 5;
    let WaitOutcome::Granted(lock) = ticket.wait(within, || false).await else {
        panic!("the waiter was not granted within {within:?} of the hint");
    };
    assert_eq!(lock.owner, owner("here"));
}

/// A subscription that shows whether hints are wanted (1) or not (0), and never gives one.
struct CountedHints(Arc<std::sync::atomic::AtomicUsize>);

struct CountedSubscription(Arc<std::sync::atomic::AtomicUsize>);

#[async_trait::async_trait]
impl FreedLocks for CountedSubscription {
    async fn next(&mut self) -> Option<Freed> {
        std::future::pending().await
    }

    fn wanted(&mut self, wanted: bool) {
        self.0
            .store(usize::from(wanted), std::sync::atomic::Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl FreedHints for CountedHints {
    async fn subscribe_freed(&self) -> Result<Option<Box<dyn FreedLocks>>, RepositoryError> {
        Ok(Some(Box::new(CountedSubscription(Arc::clone(&self.0)))))
    }
}

/// Waits (up to 10 s) until `wanted` is `expected`.
async fn until_wanted(wanted: &std::sync::atomic::AtomicUsize, expected: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while wanted.load(std::sync::atomic::Ordering::SeqCst) != expected {
        assert!(
            std::time::Instant::now() < deadline,
            "hints wanted: {}, not {expected}",
            wanted.load(std::sync::atomic::Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Hints are wanted only while a request waits here: SQLite's writer looks for other
/// processes' commits only while they are, so a server that once had a waiter must not keep
/// it looking for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_are_wanted_only_while_a_request_waits() {
    let (_, repo, _, _) = setup();
    let wanted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let waiting = waiting_with_hints(
        Arc::clone(&repo),
        Some(Arc::new(CountedHints(Arc::clone(&wanted)))),
    );
    for round in 0..2 {
        let ticket = held_elsewhere_and_waited_for(&waiting, &repo).await;
        until_wanted(&wanted, 1).await;
        drop(ticket);
        until_wanted(&wanted, 0).await;
        assert_eq!(waiting.live_waiters(), 0, "round {round}");
    }
}

/// The in-memory store, noting each call: `apply` as the op's kind, `apply_then` as both kinds
/// joined by `+`.
pub(crate) struct Noting(
    Arc<InMemoryLockRepository>,
    std::sync::Mutex<Vec<String>>,
    Duration,
);

impl Noting {
    /// Noting the calls to `store`, each made at once.
    pub(crate) fn over(store: Arc<InMemoryLockRepository>) -> Self {
        Self(store, std::sync::Mutex::default(), Duration::ZERO)
    }

    fn kind(op: &LeaseOp) -> &'static str {
        match op {
            LeaseOp::Acquire { .. } => "acquire",
            LeaseOp::AcquireAll(_) => "acquire-all",
            LeaseOp::Release { .. } => "release",
            LeaseOp::Look(_) => "look",
            _ => "other",
        }
    }

    fn calls(&self) -> Vec<String> {
        self.1.lock().unwrap().clone()
    }

    /// How many calls of `kind` were made so far.
    pub(crate) fn count(&self, kind: &str) -> usize {
        self.1
            .lock()
            .unwrap()
            .iter()
            .filter(|call| *call == kind)
            .count()
    }
}

#[async_trait::async_trait]
impl LeaseStore for Noting {
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        self.1.lock().unwrap().push(Self::kind(&op).to_owned());
        if matches!(op, LeaseOp::Acquire { .. }) {
            tokio::time::sleep(self.2).await;
        }
        self.0.apply(tenant, op).await
    }
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        let call = format!("{}+{}", Self::kind(&first), Self::kind(&then));
        self.1.lock().unwrap().push(call);
        self.0.apply_then(tenant, first, then).await
    }
    /// As SQLite's store (the in-memory one applies them one after the other).
    fn applies_together(&self) -> bool {
        true
    }
    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        self.0.list_locks(tenant, query).await
    }
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.0.list_semaphores(tenant, query).await
    }
}

/// Holder `h` holds `r` (for a minute); owner `o` waits for it, in line, its queue asleep until
/// the lease ends.
async fn held_and_waited_for() -> (Waiting, Arc<Noting>, super::Ticket, Tenant, ResourceName) {
    held_and_waited_for_with(Duration::ZERO).await
}

/// [`held_and_waited_for`], with acquires made alone taking `slow`.
async fn held_and_waited_for_with(
    slow: Duration,
) -> (Waiting, Arc<Noting>, super::Ticket, Tenant, ResourceName) {
    held_and_waited_for_under(slow, "").await
}

/// [`held_and_waited_for_with`], under the quotas of the limits file `limits` (counted in the
/// same store).
async fn held_and_waited_for_under(
    slow: Duration,
    limits: &str,
) -> (Waiting, Arc<Noting>, super::Ticket, Tenant, ResourceName) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    let noting = Arc::new(Noting(
        Arc::clone(&store),
        std::sync::Mutex::default(),
        slow,
    ));
    let quotas = crate::quota::Quotas::new(store);
    quotas.replace(crate::LimitsTable::parse(limits).expect("a limits file"));
    let waiting = Waiting::new(
        Arc::clone(&noting) as Arc<dyn LeaseStore>,
        None,
        Arc::new(SystemClock),
        Arc::new(crate::NoEvents),
        super::WaiterLimits::default(),
        quotas,
    );
    let (tenant, resource) = (Tenant::default_tenant(), ResourceName::parse("r").unwrap());
    let held = noting
        .0
        .acquire(tenant.clone(), resource.clone(), owner("h"), ttl(), None)
        .await
        .unwrap();
    assert!(matches!(held, AcquireOutcome::Granted(_)));
    let ticket = waiting
        .enqueue(
            tenant.clone(),
            resource.clone(),
            LockMode::Exclusive,
            lock_domain::LeaseTerms::new(owner("o"), ttl(), None)
                .with_lock_delay(lock_domain::LockDelay::NONE),
        )
        .expect("room for a waiter");
    // The queue's first look finds the lock held.
    tokio::time::sleep(Duration::from_millis(50)).await;
    (waiting, noting, ticket, tenant, resource)
}

fn release_by(who: &str) -> LeaseOp {
    LeaseOp::Release {
        place: Place::Lock(ResourceName::parse("r").unwrap()),
        owner: owner(who),
    }
}

async fn made(
    waiting: &Waiting,
    tenant: &Tenant,
    resource: &ResourceName,
    who: &str,
) -> LeaseOutcome {
    let Ok(handed) = waiting.hand_off(tenant, resource, release_by(who)) else {
        panic!("requests wait for the lock: its queue takes the release");
    };
    match tokio::time::timeout(Duration::from_secs(10), handed).await {
        Ok(Ok(super::Handed::Made(outcome))) => outcome.expect("the store answers"),
        Ok(Ok(super::Handed::Declined(_))) => panic!("the queue gave the release back"),
        Ok(Err(_)) => panic!("the queue dropped the release"),
        Err(_) => panic!("the release was not made within 10 s"),
    }
}

/// Hands holder `h`'s release to the queue, and checks it is made and that waiter `o` (whose
/// `ticket` it is) is granted the lock.
async fn released_to_the_waiter(
    waiting: &Waiting,
    tenant: &Tenant,
    resource: &ResourceName,
    ticket: super::Ticket,
) {
    let released = made(waiting, tenant, resource, "h").await;
    assert!(
        matches!(released, LeaseOutcome::Released(_)),
        "{released:?}"
    );
    let WaitOutcome::Granted(lock) = ticket.wait(Duration::from_secs(5), || false).await else {
        panic!("the head waiter was not granted");
    };
    assert_eq!(lock.owner, owner("o"));
}

/// A release handed to the lock's queue is made with the head waiter's attempt, in one call
/// (`apply_then`): the waiter is granted with no attempt of its own after the release.
#[tokio::test]
async fn a_release_handed_to_the_queue_goes_with_the_head_waiters_attempt() {
    let (waiting, noting, ticket, tenant, resource) = held_and_waited_for().await;
    let before = noting.calls().len();

    released_to_the_waiter(&waiting, &tenant, &resource, ticket).await;
    assert_eq!(
        noting.calls()[before..],
        ["release+acquire".to_owned()],
        "one call made the release and the waiter's grant"
    );
}

/// A release that the store refuses (not the holder's) changes nothing, and the waiter's
/// attempt made with it is refused: the waiter waits on, and is granted at the holder's release.
#[tokio::test]
async fn a_refused_release_handed_to_the_queue_leaves_the_waiter_waiting() {
    let (waiting, noting, ticket, tenant, resource) = held_and_waited_for().await;

    let refused = made(&waiting, &tenant, &resource, "x").await;
    assert!(matches!(refused, LeaseOutcome::Forbidden), "{refused:?}");
    let holder = noting
        .status(tenant.clone(), resource.clone())
        .await
        .unwrap();
    assert_eq!(holder.map(|lock| lock.owner), Some(owner("h")));

    let released = made(&waiting, &tenant, &resource, "h").await;
    assert!(
        matches!(released, LeaseOutcome::Released(_)),
        "{released:?}"
    );
    let WaitOutcome::Granted(lock) = ticket.wait(Duration::from_secs(5), || false).await else {
        panic!("the waiter was not granted after the holder's release");
    };
    assert_eq!(lock.owner, owner("o"));
}

/// A release handed to a queue whose last waiter has gone is given back unmade (the queue
/// ends), never dropped and never made twice: the caller makes it.
#[tokio::test]
async fn a_release_handed_to_a_queue_nobody_waits_in_any_more_is_given_back() {
    let (waiting, noting, ticket, tenant, resource) = held_and_waited_for().await;
    // Someone else waits in this process (for permits), so releases are handed over at all.
    let _elsewhere = waiting.seat(&tenant).expect("room for a wait");
    // The waiter's request goes; on this one-thread runtime the queue's task cannot run before
    // the release is handed to it.
    drop(ticket);
    let Ok(handed) = waiting.hand_off(&tenant, &resource, release_by("h")) else {
        panic!("the queue is still there until its task runs");
    };
    let answer = tokio::time::timeout(Duration::from_secs(10), handed)
        .await
        .expect("answered within 10 s");
    let Ok(super::Handed::Declined(op)) = answer else {
        panic!("the release should come back unmade");
    };
    assert_eq!(Noting::kind(&op), "release");
    let holder = noting
        .status(tenant.clone(), resource.clone())
        .await
        .unwrap();
    assert_eq!(
        holder.map(|lock| lock.owner),
        Some(owner("h")),
        "nothing was released"
    );
    assert!(
        waiting
            .hand_off(&tenant, &resource, release_by("h"))
            .is_err(),
        "the queue is gone: the next release is the caller's own"
    );
}

/// A release of a lock whose queue is busy (an attempt in flight) is not handed to it: it goes
/// to the store at once, beside the attempt, so that the releases of a busy lock are not made
/// one by one behind its queue.
#[tokio::test]
async fn a_release_of_a_lock_whose_queue_is_busy_is_made_by_its_caller() {
    let (waiting, noting, ticket, tenant, resource) =
        held_and_waited_for_with(Duration::from_secs(2)).await;
    // The queue's attempt (refused: h holds the lock) takes 2 s.
    waiting.freed(&tenant, &resource);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        waiting
            .hand_off(&tenant, &resource, release_by("h"))
            .is_err(),
        "the queue is attempting: the release is its caller's"
    );
    // Once the attempt is over, the queue is idle again and takes the next release.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let handed = loop {
        match waiting.hand_off(&tenant, &resource, release_by("h")) {
            Ok(handed) => break handed,
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(_) => panic!("the queue never took a release again"),
        }
    };
    let Ok(Ok(super::Handed::Made(Ok(released)))) =
        tokio::time::timeout(Duration::from_secs(10), handed).await
    else {
        panic!("the handed release was not made");
    };
    assert!(
        matches!(released, LeaseOutcome::Released(_)),
        "{released:?}"
    );
    let WaitOutcome::Granted(lock) = ticket.wait(Duration::from_secs(5), || false).await else {
        panic!("the waiter was not granted");
    };
    assert_eq!(lock.owner, owner("o"));
    assert!(noting.calls().contains(&"release+acquire".to_owned()));
}

/// A release handed to a queue whose head the quota holds back (the lock's holder's lease is
/// the tenant's only one allowed) goes alone, and the head is granted at its next look: the
/// queue counts the ended lease out of the quota itself, rather than waiting for its caller's
/// notice or the quota's recheck (`QUOTA_RECHECK`, 250 ms). Time is paused: only the queue's
/// own sleeps move it, whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn a_release_handed_to_a_queue_held_back_by_a_quota_lets_the_head_in_at_once() {
    let (waiting, noting, ticket, tenant, resource) =
        held_and_waited_for_under(Duration::ZERO, "default max_live_leases=1\n").await;
    let started = tokio::time::Instant::now();

    released_to_the_waiter(&waiting, &tenant, &resource, ticket).await;
    assert!(
        started.elapsed() < crate::quota::QUOTA_RECHECK,
        "granted after {:?}: the head waited for the quota's recheck",
        started.elapsed()
    );
    let calls = noting.calls();
    assert!(
        calls.ends_with(&["release".to_owned(), "acquire".to_owned()]),
        "the release went alone, then the head's attempt: {calls:?}"
    );
}
