//! PostgreSQL: the first lockd connection on a new timeline (a standby promoted after a failover)
//! moves the fencing tokens forward by [`TOKEN_MARGIN`], once, before any grant is made there
//! (migration 17). A real promotion is in the end-to-end failover test; here the recorded
//! timeline is set back, as if lockd had last written on an earlier one.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_domain::AcquireOutcome;
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::POSTGRES_TIMELINE_TOKEN_MARGIN as TOKEN_MARGIN;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

async fn open(db: &TestDatabase) -> DieselLockRepository {
    let config = StoreConfig::new(db.url().clone());
    let clock = Arc::new(ManualClock::new());
    tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .expect("open task")
        .expect("open the PostgreSQL store")
}

fn raw(db: &TestDatabase) -> PgConnection {
    let DatabaseUrl::Postgres(url) = db.url().clone() else {
        panic!("a PostgreSQL database");
    };
    PgConnection::establish(&url).expect("connect")
}

#[derive(QueryableByName)]
struct Value {
    #[diesel(sql_type = BigInt)]
    value: i64,
}

fn value(conn: &mut PgConnection, query: &str) -> i64 {
    diesel::sql_query(query)
        .get_result::<Value>(conn)
        .expect(query)
        .value
}

async fn grant(repo: &DieselLockRepository, resource: &str) -> i64 {
    match repo
        .acquire(tenant(), name(resource), owner("o"), ttl(60), None)
        .await
        .expect("acquire")
    {
        AcquireOutcome::Granted(lock) => lock.fencing_token.value(),
        AcquireOutcome::Held => panic!("{resource} is free"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_timeline_moves_the_tokens_forward_once_before_any_grant() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let before = open(&db).await;
    let first = grant(&before, "a").await;
    let mut conn = raw(&db);
    let current = value(&mut conn, "SELECT lockd_current_timeline() AS value");
    assert_eq!(
        value(&mut conn, "SELECT timeline AS value FROM lockd_timeline"),
        current,
        "a new schema records the timeline it was made on"
    );

    conn.batch_execute("UPDATE lockd_timeline SET timeline = timeline - 1")
        .expect("set the recorded timeline back");
    let after = open(&db).await;
    let second = grant(&after, "b").await;
    assert!(
        second > first + TOKEN_MARGIN,
        "the first grant on a new timeline is past the margin: {first} then {second}"
    );
    assert_eq!(
        value(&mut conn, "SELECT timeline AS value FROM lockd_timeline"),
        current
    );

    // The same timeline again: no second move, for a new store or the old one's connections.
    let again = open(&db).await;
    let third = grant(&again, "c").await;
    let fourth = grant(&before, "d").await;
    assert!(
        third > second && third < second + 100 && fourth > second && fourth < second + 100,
        "{second}, {third}, {fourth}"
    );
}

#[test]
fn connections_entering_a_new_timeline_together_move_the_tokens_once() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    // The schema, made by a store.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    drop(runtime.block_on(open(&db)));
    let mut conn = raw(&db);
    conn.batch_execute("UPDATE lockd_timeline SET timeline = timeline - 1")
        .expect("set the recorded timeline back");
    let start = value(&mut conn, "SELECT last_value AS value FROM fencing_tokens");
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let entered: Vec<i64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let barrier = Arc::clone(&barrier);
                let db = &db;
                scope.spawn(move || {
                    let mut conn = raw(db);
                    barrier.wait();
                    value(
                        &mut conn,
                        &format!("SELECT lockd_enter_timeline({TOKEN_MARGIN}, 1000) AS value"),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    assert_eq!(
        entered.iter().filter(|&&t| t > 0).count(),
        1,
        "exactly one entered the timeline: {entered:?}"
    );
    assert!(entered.iter().all(|&t| t >= 0), "{entered:?}");
    assert_eq!(
        value(&mut conn, "SELECT last_value AS value FROM fencing_tokens"),
        start + TOKEN_MARGIN
    );
}
