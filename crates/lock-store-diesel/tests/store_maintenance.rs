//! Store behaviour outside the port's contract, on both backends: sweeping expired rows, and
//! (PostgreSQL) one clock for every instance.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_domain::{
    AcquireOutcome, Clock, Owner, ReleaseResult, ResourceName, StoreHealth, Tenant, Ttl,
};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig, SweepPosition};

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).unwrap()
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).unwrap()
}

fn ttl(seconds: i64) -> Ttl {
    Ttl::parse(seconds, 86_400).unwrap()
}

async fn open(
    db: &TestDatabase,
    clock: Arc<dyn Clock>,
    sweep_grace: Duration,
) -> DieselLockRepository {
    let mut config = StoreConfig::new(db.url().clone());
    config.sweep_grace = sweep_grace;
    tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .unwrap()
        .unwrap()
}

async fn token(repo: &DieselLockRepository, resource: &str, who: &str, seconds: i64) -> i64 {
    match repo
        .acquire(
            Tenant::default_tenant(),
            name(resource),
            owner(who),
            ttl(seconds),
            None,
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock.fencing_token.value(),
        AcquireOutcome::Held => panic!("{resource} held"),
    }
}

/// Runs one sweep pass in steps of at most `batch` rows: the rows deleted and the steps taken.
async fn sweep_pass(repo: &DieselLockRepository, batch: u32) -> (usize, usize) {
    let (mut total, mut steps) = (0, 0);
    let mut from = SweepPosition::START;
    loop {
        let step = repo.sweep_expired(batch, from).await.unwrap();
        assert!(
            step.deleted <= batch as usize,
            "a step is bounded: {step:?}"
        );
        total += step.deleted;
        steps += 1;
        match step.next {
            Some(next) => from = next,
            None => return (total, steps),
        }
    }
}

/// Expired and released rows are deleted in bounded batches; live locks stay; tokens keep
/// increasing after the rows that carried them are gone.
async fn sweeping_keeps_live_locks_and_token_order(
    db: TestDatabase,
    clock: ManualClock,
    real_time: bool,
) {
    let repo = open(&db, Arc::new(clock.clone()), Duration::ZERO).await;
    let mut highest = 0;
    for i in 0..25 {
        highest = highest.max(token(&repo, &format!("short-{i}"), "w", 1).await);
    }
    let live = token(&repo, "live", "w", 600).await;
    let released = token(&repo, "released", "w", 600).await;
    assert_eq!(
        repo.release(Tenant::default_tenant(), name("released"), owner("w"))
            .await
            .unwrap(),
        ReleaseResult::Released(lock_domain::FencingToken::new(released).unwrap())
    );
    highest = highest.max(live).max(released);
    if real_time {
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    } else {
        clock.advance(Duration::from_millis(1_100));
    }
    let (total, _) = sweep_pass(&repo, 10).await;
    // 25 expired, plus the released row where release only ends the lease (PostgreSQL).
    assert!((25..=26).contains(&total), "swept {total}");
    assert_eq!(sweep_pass(&repo, 10).await.0, 0);
    // The 25 the sweep found run out, each noted once with its TTL; not the released one.
    let noted = repo.take_expired_holds(100).await.unwrap();
    assert_eq!(noted.len(), 25, "{noted:?}");
    assert!(noted
        .iter()
        .all(|hold| hold.kind == lock_domain::LeaseKind::Lock
            && !hold.shared
            && hold.held == Duration::from_secs(1)));
    assert!(
        repo.status(Tenant::default_tenant(), name("live"))
            .await
            .unwrap()
            .is_some(),
        "a live lock is never swept"
    );
    for resource in ["short-3", "released", "fresh"] {
        let next = token(&repo, resource, "w2", 30).await;
        assert!(
            next > highest,
            "{resource}: {next} after sweeping must exceed {highest}"
        );
        highest = next;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sweeping_keeps_live_locks_and_token_order() {
    sweeping_keeps_live_locks_and_token_order(TestDatabase::sqlite(), ManualClock::new(), false)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sweeping_keeps_live_locks_and_token_order() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    sweeping_keeps_live_locks_and_token_order(db, ManualClock::new(), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sweeping_respects_the_grace_period() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let repo = open(&db, Arc::new(clock.clone()), Duration::from_secs(60)).await;
    token(&repo, "r", "w", 1).await;
    clock.advance(Duration::from_secs(30));
    assert_eq!(
        sweep_pass(&repo, 100).await.0,
        0,
        "expired 29 s ago, grace 60 s"
    );
    clock.advance(Duration::from_secs(32));
    assert_eq!(sweep_pass(&repo, 100).await.0, 1);
}

/// PostgreSQL has no index on the lease's end (migration 7): a pass reads the table in ranges of
/// pages. Over a table of many pages, with live locks scattered among the ended ones, one pass
/// deletes every row ended past the grace, keeps every other, and takes a bounded number of
/// steps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sweep_pass_covers_every_page() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Arc::new(ManualClock::new()), Duration::from_secs(60)).await;
    let url = db.url_string();
    let pages = tokio::task::spawn_blocking(move || {
        let mut conn = PgConnection::establish(&url).expect("connect");
        // 20,000 rows, every 100th live for an hour, every 100th (offset 50) ended 30 s ago
        // (inside the grace), the rest ended an hour ago.
        conn.batch_execute(
            "INSERT INTO distributed_locks
                 (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
             SELECT 'default', 'r-' || g, 'w', now_ms - 7200000,
                    CASE WHEN g % 100 = 0 THEN now_ms + 3600000
                         WHEN g % 100 = 50 THEN now_ms - 30000
                         ELSE now_ms - 3600000 END,
                    g
             FROM generate_series(1, 20000) AS g,
                  (SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT AS now_ms) AS n",
        )
        .expect("insert");
        diesel::sql_query(
            "SELECT pg_relation_size('distributed_locks') / 8192 AS count",
        )
        .get_result::<Count>(&mut conn)
        .expect("pages")
        .count
    })
    .await
    .unwrap();
    assert!(pages > 128, "the table spans several steps: {pages} pages");

    let (swept, steps) = sweep_pass(&repo, 1_000).await;
    assert_eq!(swept, 19_600, "every row ended an hour ago, none other");
    let bound = usize::try_from(pages).unwrap() / 128 + 19_600 / 1_000 + 2;
    assert!(steps <= bound, "{steps} steps for {pages} pages");
    let url = db.url_string();
    let left = tokio::task::spawn_blocking(move || {
        let mut conn = PgConnection::establish(&url).expect("connect");
        diesel::sql_query("SELECT count(*) AS count FROM distributed_locks")
            .get_result::<Count>(&mut conn)
            .expect("count")
            .count
    })
    .await
    .unwrap();
    assert_eq!(left, 400, "200 live locks and 200 inside the grace stay");
    assert_eq!(sweep_pass(&repo, 1_000).await.0, 0);
}

/// A sweep never waits on, nor deletes, a row that a concurrent write holds locked (a grant
/// taking over that ended lease may be about to commit): the pass skips it and ends, and a later
/// pass deletes it once the row is free and still ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sweep_skips_a_row_a_writer_holds() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Arc::new(ManualClock::new()), Duration::from_secs(60)).await;
    let url = db.url_string();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let (free_tx, free_rx) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let mut conn = PgConnection::establish(&url).expect("connect");
        conn.batch_execute(
            "INSERT INTO distributed_locks
                 (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
             VALUES ('default', 'held', 'w', 1, 1000, 1), ('default', 'free', 'w', 1, 1000, 2)",
        )
        .expect("insert two rows ended long ago");
        // Apart from the INSERT: in one simple query, BEGIN would take it into the transaction.
        conn.batch_execute(
            "BEGIN; SELECT 1 FROM distributed_locks WHERE resource = 'held' FOR UPDATE;",
        )
        .expect("lock the row");
        locked_tx.send(()).unwrap();
        free_rx.recv().unwrap();
        conn.batch_execute("COMMIT").expect("commit");
    });
    locked_rx.recv().unwrap();
    let pass = tokio::time::timeout(Duration::from_secs(5), sweep_pass(&repo, 1_000))
        .await
        .expect("the sweep waited on a locked row");
    assert_eq!(pass.0, 1, "only the free row goes");
    free_tx.send(()).unwrap();
    writer.join().unwrap();
    assert_eq!(sweep_pass(&repo, 1_000).await.0, 1, "the row, free again");
    assert_eq!(sweep_pass(&repo, 1_000).await.0, 0);
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    count: i64,
}

/// Two instances on one PostgreSQL database whose own clocks are 60 s apart still agree on who
/// holds a lock, because the database server's clock decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_instances_with_skewed_clocks_agree_on_the_holder() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let behind = ManualClock::new();
    let ahead = ManualClock::new();
    ahead.advance(Duration::from_secs(60));
    let a = open(&db, Arc::new(behind), Duration::from_secs(60)).await;
    let b = open(&db, Arc::new(ahead), Duration::from_secs(60)).await;

    let lock = match a
        .acquire(
            Tenant::default_tenant(),
            name("r"),
            owner("alice"),
            ttl(30),
            None,
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock,
        AcquireOutcome::Held => panic!("free resource held"),
    };
    // With its own clock 60 s ahead, b would think alice's 30 s lease long over.
    assert_eq!(
        b.acquire(
            Tenant::default_tenant(),
            name("r"),
            owner("bob"),
            ttl(30),
            None
        )
        .await
        .unwrap(),
        AcquireOutcome::Held
    );
    assert_eq!(
        b.status(Tenant::default_tenant(), name("r")).await.unwrap(),
        Some(lock.clone())
    );
    assert_eq!(
        b.release(Tenant::default_tenant(), name("r"), owner("bob"))
            .await
            .unwrap(),
        ReleaseResult::Forbidden
    );
    let wall = chrono::Utc::now();
    let skew = (lock.acquired_at - wall).num_seconds().abs();
    assert!(
        skew < 5,
        "timestamps come from the server's clock, not a manual one: {lock:?}"
    );

    // And the other way round.
    match b
        .acquire(
            Tenant::default_tenant(),
            name("s"),
            owner("bob"),
            ttl(30),
            None,
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(_) => {}
        AcquireOutcome::Held => panic!("free resource held"),
    }
    assert_eq!(
        a.acquire(
            Tenant::default_tenant(),
            name("s"),
            owner("alice"),
            ttl(30),
            None
        )
        .await
        .unwrap(),
        AcquireOutcome::Held
    );
}

/// A semaphore row that ended long ago, re-granted by a writer while the sweeper is about to
/// delete it: the sweeper waits for the writer's row lock, then must see the new, live lease and
/// leave it (deleting it would free permits that a holder was told it has).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_permit_sweep_leaves_a_row_regranted_meanwhile() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Arc::new(ManualClock::new()), Duration::from_secs(60)).await;
    let url = db.url_string();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let (commit_tx, commit_rx) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let mut conn = PgConnection::establish(&url).expect("connect");
        conn.batch_execute(
            "INSERT INTO semaphore_holders (tenant, name, owner, permits, semaphore_limit,
                 acquired_at_ms, expires_at_ms, fencing_token)
             VALUES ('default', 's', 'w', 1, 2, 1, 1000, 1)",
        )
        .expect("insert a row ended long ago");
        // The re-grant of a new grant's upsert: the row, locked, gets a lease far in the future.
        conn.batch_execute(
            "BEGIN; UPDATE semaphore_holders SET acquired_at_ms = 2, expires_at_ms = 9000000000000
             WHERE tenant = 'default' AND name = 's' AND owner = 'w';",
        )
        .expect("re-grant the row");
        locked_tx.send(()).unwrap();
        commit_rx.recv().unwrap();
        conn.batch_execute("COMMIT").expect("commit");
    });
    locked_rx.recv().unwrap();
    let sweeper = {
        let repo = repo.clone();
        tokio::spawn(async move { repo.sweep_ended_permits(1_000).await })
    };
    // Let the sweep select the row (ended in its snapshot) and wait for its lock.
    tokio::time::sleep(Duration::from_millis(300)).await;
    commit_tx.send(()).unwrap();
    writer.join().unwrap();
    let swept = tokio::time::timeout(Duration::from_secs(5), sweeper)
        .await
        .expect("the sweep ends")
        .unwrap()
        .expect("the sweep answers");
    assert_eq!(swept, 0, "the re-granted row is live");
    let mut conn = PgConnection::establish(&db.url_string()).expect("connect");
    let left: Count = diesel::sql_query(
        "SELECT COUNT(*) AS count FROM semaphore_holders WHERE owner = 'w' AND expires_at_ms > 1000",
    )
    .get_result(&mut conn)
    .expect("count");
    assert_eq!(left.count, 1, "the live lease is still there");
}

/// The sweeper ends a session that ran out, and notes each of its holds (a lock, a reader, a
/// permit) as run out at the session's end, once: the rows of a session's holds say "while the
/// session lives", so no trigger can.
async fn sweeping_a_run_out_session_notes_each_of_its_holds(
    db: TestDatabase,
    clock: ManualClock,
    real_time: bool,
) {
    use lock_domain::{
        Capacity, Claim, LeaseKind, LeaseOp, LeaseStore, LeaseTerms, LockDelay, Place, SessionId,
        SessionOp, SessionStore, Weight,
    };
    let repo = open(&db, Arc::new(clock.clone()), Duration::ZERO).await;
    let tenant = Tenant::default_tenant();
    let mut random = [7u8; 16];
    random[..8].copy_from_slice(&(clock.now().timestamp_micros() as u64).to_be_bytes());
    let open_op = SessionOp::Open {
        id: SessionId::from_random(random),
        owner: None,
        ttl: ttl(1),
        lock_delay: LockDelay::parse(0).unwrap(),
    };
    let session = repo
        .apply_session(tenant.clone(), open_op)
        .await
        .unwrap()
        .opened()
        .unwrap();
    let limit = Capacity::semaphore_limit(2).unwrap();
    let claims = [
        (Place::Lock(name("s-lock")), Claim::Exclusive),
        (Place::Lock(name("s-read")), Claim::Shared),
        (
            Place::Semaphore(name("s-pool")),
            Claim::Permits {
                permits: Weight::permits(1, limit).unwrap(),
                limit,
            },
        ),
    ];
    let mut held = Vec::new();
    for (place, claim) in claims {
        let op = LeaseOp::Acquire {
            place,
            claim,
            terms: LeaseTerms::new(Owner::of_session(&session.id), ttl(3_600), None),
        };
        let grant = match repo.apply(tenant.clone(), op).await.unwrap().acquired() {
            Ok(Ok(grant)) => grant,
            other => panic!("expected a grant, got {other:?}"),
        };
        held.push(
            (session.expires_at - grant.lease.acquired_at)
                .to_std()
                .unwrap(),
        );
    }
    assert_eq!(repo.take_expired_holds(100).await.unwrap(), vec![]);
    if real_time {
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    } else {
        clock.advance(Duration::from_millis(1_100));
    }
    assert_eq!(repo.sweep_run_out_sessions(10).await.unwrap(), 1);
    let mut noted = repo.take_expired_holds(100).await.unwrap();
    noted.sort_by_key(|hold| (hold.kind.as_str(), hold.shared));
    let expected = [
        (LeaseKind::Lock, false, held[0]),
        (LeaseKind::Lock, true, held[1]),
        (LeaseKind::Semaphore, false, held[2]),
    ]
    .map(|(kind, shared, held)| lock_domain::ExpiredHold { kind, shared, held });
    assert_eq!(
        noted,
        expected.to_vec(),
        "each hold, held to the session's end"
    );
    assert_eq!(repo.sweep_run_out_sessions(10).await.unwrap(), 0);
    assert_eq!(repo.take_expired_holds(100).await.unwrap(), vec![], "once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sweeping_a_run_out_session_notes_each_of_its_holds() {
    sweeping_a_run_out_session_notes_each_of_its_holds(
        TestDatabase::sqlite(),
        ManualClock::new(),
        false,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sweeping_a_run_out_session_notes_each_of_its_holds() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    sweeping_a_run_out_session_notes_each_of_its_holds(db, ManualClock::new(), true).await;
}
