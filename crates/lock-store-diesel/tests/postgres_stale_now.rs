//! A PostgreSQL write decides against the row as it is when the statement reaches it, never
//! against a "now" taken before it waited for row locks. A batch statement that waits for one
//! row's lock while another instance releases a second row of the batch must see that release:
//! the released lease is not renewed (revived) and not re-granted with its old fencing token.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::{Array, BigInt, Nullable, Text};
use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_domain::{AcquireOutcome, ReleaseResult};
use lock_store_diesel::statements::POSTGRES_WRITE_BATCH;
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

#[derive(Debug, QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    resource: String,
    #[diesel(sql_type = Text)]
    owner: String,
    #[diesel(sql_type = BigInt)]
    expires_at_ms: i64,
    #[diesel(sql_type = BigInt)]
    fencing_token: i64,
}

fn pg_url(db: &TestDatabase) -> String {
    match db.url() {
        DatabaseUrl::Postgres(url) => url.clone(),
        DatabaseUrl::Sqlite(_) => unreachable!(),
    }
}

async fn open(db: &TestDatabase) -> Arc<DieselLockRepository> {
    let mut config = StoreConfig::new(db.url().clone());
    config.statement_timeout = Duration::from_secs(5);
    config.postgres_batch_connections = 0;
    let clock = Arc::new(ManualClock::new());
    let repo = tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .expect("open task")
        .expect("open the PostgreSQL store");
    Arc::new(repo)
}

/// Runs one batch statement that first waits on row `a` (held FOR UPDATE by another
/// transaction), while `b` (owned by `o`, token returned) is released through the store, then
/// lets it go on. `acquires` and `renews` are (resource, owner) pairs of the batch.
async fn batch_blocked_across_a_release(
    acquires: &'static [(&'static str, &'static str)],
    renews: &'static [(&'static str, &'static str)],
) -> Option<(Vec<Row>, i64, Arc<DieselLockRepository>, TestDatabase)> {
    let db = TestDatabase::postgres()?;
    let repo = open(&db).await;
    let held_a = repo
        .acquire(tenant(), name("a"), owner("y"), ttl(60), None)
        .await;
    assert!(matches!(held_a, Ok(AcquireOutcome::Granted(_))));
    let token_b = match repo
        .acquire(tenant(), name("b"), owner("o"), ttl(60), None)
        .await
    {
        Ok(AcquireOutcome::Granted(lock)) => lock.fencing_token.value(),
        other => panic!("expected a grant of b, got {other:?}"),
    };

    let url = pg_url(&db);
    let mut blocker = PgConnection::establish(&url).expect("connect the blocker");
    blocker
        .batch_execute("BEGIN; SELECT 1 FROM distributed_locks WHERE resource = 'a' FOR UPDATE")
        .expect("lock row a");

    let batch = thread::spawn(move || {
        let mut conn = PgConnection::establish(&url).expect("connect the batch");
        let names =
            |pairs: &[(&str, &str)]| pairs.iter().map(|p| p.0.to_owned()).collect::<Vec<_>>();
        let owners =
            |pairs: &[(&str, &str)]| pairs.iter().map(|p| p.1.to_owned()).collect::<Vec<_>>();
        let tenants = |pairs: &[(&str, &str)]| vec!["default".to_owned(); pairs.len()];
        let ttls = |pairs: &[(&str, &str)]| vec![60_000_i64; pairs.len()];
        let none: Vec<String> = Vec::new();
        diesel::sql_query(POSTGRES_WRITE_BATCH)
            .bind::<Array<Text>, _>(tenants(acquires))
            .bind::<Array<Text>, _>(names(acquires))
            .bind::<Array<Text>, _>(owners(acquires))
            .bind::<Array<BigInt>, _>(ttls(acquires))
            .bind::<Array<Text>, _>(none.clone())
            .bind::<Array<Text>, _>(none.clone())
            .bind::<Array<Text>, _>(none)
            .bind::<Array<Text>, _>(tenants(renews))
            .bind::<Array<Text>, _>(names(renews))
            .bind::<Array<Text>, _>(owners(renews))
            .bind::<Array<BigInt>, _>(ttls(renews))
            .bind::<Array<Nullable<Text>>, _>(vec![None::<String>; acquires.len()])
            .bind::<Array<Nullable<Text>>, _>(vec![None::<String>; renews.len()])
            .bind::<Array<BigInt>, _>(vec![0_i64; acquires.len()])
            // No session: the end a session's hold is written with, and no session per write.
            .bind::<BigInt, _>(i64::MAX)
            .bind::<Array<Nullable<Text>>, _>(vec![None::<String>; acquires.len()])
            .bind::<Array<Nullable<Text>>, _>(vec![None::<String>; acquires.len()])
            .bind::<Array<Nullable<Text>>, _>(vec![None::<String>; acquires.len()])
            .bind::<Array<Nullable<Text>>, _>(Vec::<Option<String>>::new())
            .bind::<Array<Nullable<Text>>, _>(Vec::<Option<String>>::new())
            .load::<Row>(&mut conn)
            .expect("the batch statement")
    });
    // The batch has started (its clock is read) and waits for row a.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!batch.is_finished(), "the batch should wait for row a");
    let released = repo.release(tenant(), name("b"), owner("o")).await;
    assert!(
        matches!(released, Ok(ReleaseResult::Released(_))),
        "{released:?}"
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    blocker.batch_execute("COMMIT").expect("unlock row a");
    let rows = tokio::task::spawn_blocking(move || batch.join().expect("batch thread"))
        .await
        .unwrap();
    Some((rows, token_b, repo, db))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renew_that_waited_in_a_batch_does_not_revive_a_lease_released_meanwhile() {
    let Some((rows, _, repo, _db)) =
        batch_blocked_across_a_release(&[("a", "x")], &[("b", "o")]).await
    else {
        return;
    };
    assert!(
        rows.iter().all(|row| row.resource != "b"),
        "a released lease was renewed: {rows:?}"
    );
    let status = repo.status(tenant(), name("b")).await.unwrap();
    assert!(
        status.is_none(),
        "b is live again after its release: {status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_owner_acquire_that_waited_in_a_batch_gets_a_new_token_after_a_release() {
    let Some((rows, token_b, repo, _db)) =
        batch_blocked_across_a_release(&[("a", "x"), ("b", "o")], &[]).await
    else {
        return;
    };
    let b = rows
        .iter()
        .find(|row| row.resource == "b")
        .unwrap_or_else(|| panic!("b, released, was not granted: {rows:?}"));
    assert_eq!(b.owner, "o");
    assert!(
        b.fencing_token > token_b,
        "a released lease was re-granted with its old token {token_b}: {b:?}"
    );
    let status = repo
        .status(tenant(), name("b"))
        .await
        .unwrap()
        .expect("b is held");
    assert_eq!(status.fencing_token.value(), b.fencing_token);
    assert_eq!(status.expires_at.timestamp_millis(), b.expires_at_ms);
}
