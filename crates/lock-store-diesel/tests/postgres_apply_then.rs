//! PostgreSQL: `apply_then` makes a lock's release and the grant to the next in line in one
//! transaction (one commit), with batching and without; each keeps its own outcome.

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, RunQueryDsl};
use lock_domain::testing::calls::LeaseCalls;
use lock_domain::{
    AcquireOutcome, Claim, LeaseOp, LeaseOutcome, LeaseStore, LeaseTerms, Place, SystemClock,
};
use lock_store_diesel::testing::values::{acquire_by, name, owner, release_by, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig};

/// Returns once a connection to the database of `url` waits for a lock (within 30 s).
async fn waits_for_a_lock(url: &str) {
    #[derive(diesel::QueryableByName)]
    struct Waiting {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        waiting: i64,
    }
    let mut watcher = PgConnection::establish(url).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let Waiting { waiting } = diesel::sql_query(
            "SELECT count(*) AS waiting FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .get_result(&mut watcher)
        .unwrap();
        if waiting > 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pair never waited for the row lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A store on a new database with `batch_connections` batching connections (0: none), and a
/// connection of the test's own to it; `None` without PostgreSQL.
async fn store(
    batch_connections: u32,
) -> Option<(TestDatabase, Arc<DieselLockRepository>, PgConnection)> {
    let db = TestDatabase::postgres()?;
    let mut config = StoreConfig::new(db.url().clone());
    config.postgres_batch_connections = batch_connections;
    let repo = open_store(config, Arc::new(SystemClock)).await;
    let conn = PgConnection::establish(&db.url_string()).unwrap();
    Some((db, repo, conn))
}

async fn a_release_then_the_next_grant_commit_together(batch_connections: u32) {
    let Some((db, repo, mut conn)) = store(batch_connections).await else {
        return;
    };
    assert!(repo.applies_together());
    let first = repo
        .acquire(tenant(), name("r"), owner("a"), ttl(3600), None)
        .await
        .unwrap();
    let AcquireOutcome::Granted(first) = first else {
        panic!("{first:?}")
    };

    let (released, granted) = repo
        .apply_then(tenant(), release_by("a"), acquire_by("b"))
        .await;
    assert!(
        matches!(&released, Ok(LeaseOutcome::Released(ended)) if ended.fencing_token == first.fencing_token),
        "{released:?}"
    );
    let Ok(LeaseOutcome::Granted(grant)) = granted else {
        panic!("the next in line is granted: {granted:?}")
    };
    assert!(grant.lease.fencing_token > first.fencing_token);
    let held = repo.status(tenant(), name("r")).await.unwrap().unwrap();
    assert_eq!(held.owner, owner("b"));

    // Each keeps its own outcome: a refused release does not stop the grant after it, which
    // is decided as if alone (a re-grant of b's lease here).
    let (refused, regranted) = repo
        .apply_then(tenant(), release_by("a"), acquire_by("b"))
        .await;
    assert!(
        matches!(refused, Ok(LeaseOutcome::Forbidden)),
        "{refused:?}"
    );
    assert!(
        matches!(&regranted, Ok(LeaseOutcome::Granted(g)) if g.lease.fencing_token == grant.lease.fencing_token),
        "{regranted:?}"
    );

    // While the second waits (for another transaction's lock on its row), the first has not
    // taken effect: both commit at once.
    repo.acquire(tenant(), name("q"), owner("x"), ttl(3600), None)
        .await
        .unwrap();
    conn.batch_execute("BEGIN; SELECT 1 FROM distributed_locks WHERE resource = 'q' FOR UPDATE")
        .unwrap();
    let pair = {
        let repo = Arc::clone(&repo);
        let acquire_q = LeaseOp::Acquire {
            place: Place::Lock(name("q")),
            claim: Claim::Exclusive,
            terms: LeaseTerms::new(owner("b"), ttl(3600), None),
        };
        tokio::spawn(async move { repo.apply_then(tenant(), release_by("b"), acquire_q).await })
    };
    // Once the pair waits for the row lock (its release made, uncommitted), not before.
    waits_for_a_lock(&db.url_string()).await;
    let meanwhile = repo.status(tenant(), name("r")).await.unwrap();
    conn.batch_execute("COMMIT").unwrap();
    assert_eq!(
        meanwhile.map(|row| row.owner),
        Some(owner("b")),
        "the release is not seen before the acquire after it commits"
    );
    let (released, refused) = pair.await.unwrap();
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert!(
        matches!(refused, Ok(LeaseOutcome::Refused(_))),
        "held by x: {refused:?}"
    );
    assert_eq!(repo.status(tenant(), name("r")).await.unwrap(), None);

    // Anything but a lock's releases and acquires goes one after the other.
    let look = LeaseOp::Look(Place::Lock(name("r")));
    let (looked, released) = repo.apply_then(tenant(), look, release_by("b")).await;
    assert!(matches!(looked, Ok(LeaseOutcome::Looked(_))), "{looked:?}");
    assert!(
        matches!(released, Ok(LeaseOutcome::NotFound)),
        "{released:?}"
    );
}

#[tokio::test]
async fn a_release_then_the_next_grant_commit_together_in_batches() {
    a_release_then_the_next_grant_commit_together(2).await;
}

#[tokio::test]
async fn a_release_then_the_next_grant_commit_together_without_batches() {
    a_release_then_the_next_grant_commit_together(0).await;
}

/// When one operation of a pair fails, nothing of the pair's transaction is kept, and the other
/// is made again alone: its outcome is its own, as if the failing one had not been asked.
async fn one_failing_operation_of_a_pair_leaves_the_other_made_alone(batch_connections: u32) {
    let Some((_db, repo, mut conn)) = store(batch_connections).await else {
        return;
    };
    // The database refuses any grant to `doomed`, and the release of a lease of `stuck`.
    conn.batch_execute(
        "CREATE FUNCTION refused_by_the_test() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
             IF NEW.owner = 'doomed' THEN
                 RAISE EXCEPTION 'no grant to doomed';
             END IF;
             IF TG_OP = 'UPDATE' AND OLD.owner = 'stuck'
                AND NEW.acquired_at_ms = NEW.expires_at_ms THEN
                 RAISE EXCEPTION 'no release by stuck';
             END IF;
             RETURN NEW;
         END $$;
         CREATE TRIGGER refused_by_the_test BEFORE INSERT OR UPDATE ON distributed_locks
             FOR EACH ROW EXECUTE FUNCTION refused_by_the_test();",
    )
    .unwrap();

    // The grant after the release fails: the release is made alone.
    repo.acquire(tenant(), name("r"), owner("a"), ttl(3600), None)
        .await
        .unwrap();
    let (released, failed) = repo
        .apply_then(tenant(), release_by("a"), acquire_by("doomed"))
        .await;
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(repo.status(tenant(), name("r")).await.unwrap(), None);

    // The release fails: the acquire after it is made alone, and finds the lock still held.
    let stuck = repo
        .acquire(tenant(), name("r"), owner("stuck"), ttl(3600), None)
        .await
        .unwrap();
    let AcquireOutcome::Granted(stuck) = stuck else {
        panic!("{stuck:?}")
    };
    let (failed, refused) = repo
        .apply_then(tenant(), release_by("stuck"), acquire_by("b"))
        .await;
    assert!(failed.is_err(), "{failed:?}");
    assert!(
        matches!(refused, Ok(LeaseOutcome::Refused(_))),
        "held by stuck: {refused:?}"
    );
    let held = repo.status(tenant(), name("r")).await.unwrap().unwrap();
    assert_eq!(held.owner, owner("stuck"));
    assert_eq!(held.fencing_token, stuck.fencing_token);
}

#[tokio::test]
async fn one_failing_operation_of_a_pair_leaves_the_other_made_alone_in_batches() {
    one_failing_operation_of_a_pair_leaves_the_other_made_alone(2).await;
}

#[tokio::test]
async fn one_failing_operation_of_a_pair_leaves_the_other_made_alone_without_batches() {
    one_failing_operation_of_a_pair_leaves_the_other_made_alone(0).await;
}
