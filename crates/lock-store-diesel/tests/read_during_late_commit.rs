//! A read must not answer "free" for a lease that a write in flight has already extended.
//!
//! The history: a renew decides while the lease is live, but its COMMIT lands after the lease's
//! old end. In between, the committed row says the lease has ended. A status or list that
//! answered from that row would say "free", and a read after the commit would show the same
//! token live again: no single order of the operations explains both answers. lockd's reads wait
//! for such a writer and answer with what it wrote.
//!
//! On PostgreSQL the late COMMIT is a deferred constraint trigger that sleeps at commit time, in
//! this test's own database only. On SQLite it is another process's renew, an open IMMEDIATE
//! transaction on the same file (the same thing happens inside one process while the writer's
//! fsync runs).

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, SqliteConnection};
use lock_domain::{AcquireOutcome, ListLimit, ListQuery, Lock, RenewResult, SystemClock};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

async fn open(config: StoreConfig) -> Arc<DieselLockRepository> {
    open_store(config, Arc::new(SystemClock)).await
}

async fn grant(repo: &DieselLockRepository, ttl_seconds: i64) -> Lock {
    match repo
        .acquire(
            tenant(),
            name("slow"),
            owner("late"),
            ttl(ttl_seconds),
            None,
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock,
        other => panic!("expected a grant, got {other:?}"),
    }
}

/// Sleeps until `ms` past the end of `lock`'s lease.
async fn sleep_past_end(lock: &Lock, ms: i64) {
    let wait = (lock.expires_at - Utc::now()).num_milliseconds() + ms;
    tokio::time::sleep(Duration::from_millis(wait.max(0) as u64)).await;
}

/// Status and a listing, both started after the old lease's end while the renew's commit is
/// still to come, must both show the renewed lease.
async fn reads_show(repo: &Arc<DieselLockRepository>) -> (Option<Lock>, Vec<Lock>) {
    let status = {
        let repo = Arc::clone(repo);
        tokio::spawn(async move { repo.status(tenant(), name("slow")).await })
    };
    // The waiting queues' poller reads many locks at once: the same answer.
    let statuses = {
        let repo = Arc::clone(repo);
        tokio::spawn(async move {
            repo.statuses(vec![(tenant(), name("slow")), (tenant(), name("other"))])
                .await
        })
    };
    let list = {
        let repo = Arc::clone(repo);
        tokio::spawn(async move {
            let query = ListQuery {
                limit: ListLimit::parse(10).unwrap(),
                ..ListQuery::default()
            };
            repo.list(tenant(), query).await
        })
    };
    let status = status.await.unwrap().expect("status");
    let statuses = statuses.await.unwrap().expect("statuses");
    assert_eq!(
        statuses,
        vec![status.clone(), None],
        "statuses and status disagree"
    );
    let list = list.await.unwrap().expect("list");
    let listed: Vec<Lock> = list.locks.into_iter().map(|l| l.lock).collect();
    (status, listed)
}

fn assert_shows_renewed(read: (Option<Lock>, Vec<Lock>), renewed: &Lock) {
    let (status, listed) = read;
    assert_eq!(
        status.as_ref(),
        Some(renewed),
        "status answered from the row before the renew's commit"
    );
    assert_eq!(
        listed,
        vec![renewed.clone()],
        "the listing answered from the row before the renew's commit"
    );
}

async fn postgres_reads_wait_for_a_renew_committing_late(batch_connections: u32) {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let mut config = StoreConfig::new(db.url().clone());
    config.statement_timeout = Duration::from_secs(10);
    config.postgres_batch_connections = batch_connections;
    let repo = open(config).await;
    let granted = grant(&repo, 1).await;

    // Every renew of `slow` by `late` now sleeps 2 s in its COMMIT.
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!()
    };
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(
        "CREATE FUNCTION stall_commit() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$;
         CREATE CONSTRAINT TRIGGER stall_commit AFTER UPDATE ON distributed_locks
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
         WHEN (NEW.owner = 'late' AND NEW.acquired_at_ms = OLD.acquired_at_ms
               AND NEW.expires_at_ms > OLD.expires_at_ms)
         EXECUTE FUNCTION stall_commit();",
    )
    .expect("create the stalling trigger");

    let renew = {
        let repo = Arc::clone(&repo);
        tokio::spawn(async move {
            repo.renew(tenant(), name("slow"), owner("late"), ttl(60), None)
                .await
        })
    };
    // The renew decides at once, while the lease is live, and commits about 2 s later.
    sleep_past_end(&granted, 300).await;
    assert!(!renew.is_finished(), "the renew should still be committing");
    let read = reads_show(&repo).await;
    let renewed = match renew.await.unwrap().expect("renew") {
        RenewResult::Renewed(lock) => lock,
        other => panic!("the renew decided while the lease was live: {other:?}"),
    };
    assert_eq!(renewed.fencing_token, granted.fencing_token);
    assert!(renewed.expires_at > granted.expires_at);
    assert_shows_renewed(read, &renewed);

    // Without a writer in flight, an ended lease reads as free at once.
    conn.batch_execute("DROP TRIGGER stall_commit ON distributed_locks")
        .expect("drop the trigger");
    let short = repo
        .acquire(tenant(), name("short"), owner("late"), ttl(1), None)
        .await
        .unwrap();
    let AcquireOutcome::Granted(short) = short else {
        panic!("{short:?}")
    };
    sleep_past_end(&short, 50).await;
    assert_eq!(repo.status(tenant(), name("short")).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batched_reads_wait_for_a_renew_committing_late() {
    postgres_reads_wait_for_a_renew_committing_late(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_unbatched_reads_wait_for_a_renew_committing_late() {
    postgres_reads_wait_for_a_renew_committing_late(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_reads_wait_for_another_process_s_renew_committing_late() {
    let db = TestDatabase::sqlite();
    let repo = open(StoreConfig::new(db.url().clone())).await;
    let granted = grant(&repo, 1).await;
    let DatabaseUrl::Sqlite(path) = db.url() else {
        unreachable!()
    };
    // Another process renews while the lease is live and has not committed yet.
    let mut other = SqliteConnection::establish(&path.to_string_lossy()).expect("open");
    let renewed_until = Utc::now().timestamp_millis() + 60_000;
    other
        .batch_execute(&format!(
            "PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE;
             UPDATE distributed_locks SET expires_at_ms = {renewed_until}
             WHERE resource = 'slow' AND owner = 'late'"
        ))
        .expect("renew in an open transaction");
    sleep_past_end(&granted, 300).await;
    let reads = {
        let repo = Arc::clone(&repo);
        tokio::spawn(async move { reads_show(&repo).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !reads.is_finished(),
        "the reads answered before the other process's renew committed"
    );
    other.batch_execute("COMMIT").expect("commit the renew");
    let renewed = Lock {
        expires_at: chrono::DateTime::from_timestamp_millis(renewed_until).unwrap(),
        ..granted.clone()
    };
    assert_shows_renewed(reads.await.unwrap(), &renewed);

    // Without a writer in flight, an ended lease reads as free.
    let short = repo
        .acquire(tenant(), name("short"), owner("late"), ttl(1), None)
        .await
        .unwrap();
    let AcquireOutcome::Granted(short) = short else {
        panic!("{short:?}")
    };
    sleep_past_end(&short, 50).await;
    assert_eq!(repo.status(tenant(), name("short")).await.unwrap(), None);
}
