//! PostgreSQL's history batches (migrations 15 and 16): the batch statement records its own
//! changes, except an acquire that took over a row committed after the statement began, whose
//! records only the triggers can write; and pages read the batches not indexed yet as surely as
//! the indexed ones.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};
use lock_domain::{
    AcquireOutcome, HistoryEvent, HistoryRecord, HistorySubject, LeaseKind, ResourcePrefix,
    SystemClock,
};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{every_history_page, open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig};

async fn open(db: &TestDatabase) -> Arc<DieselLockRepository> {
    open_store(StoreConfig::new(db.url().clone()), Arc::new(SystemClock)).await
}

async fn page(repo: &DieselLockRepository, subject: HistorySubject) -> Vec<HistoryRecord> {
    every_history_page(repo, subject, None, 100).await
}

fn one(resource: &str) -> HistorySubject {
    HistorySubject::One {
        kind: LeaseKind::Lock,
        name: name(resource),
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

fn count(conn: &mut PgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .unwrap()
        .count
}

#[tokio::test]
async fn an_acquire_over_a_row_committed_after_it_began_is_recorded_by_the_triggers() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db).await;
    let mut other = PgConnection::establish(&db.url_string()).unwrap();
    // Another writer's lease, long run out, inserted but not committed yet: the acquire's
    // statement does not see it when it locks its rows, then waits for it at the insert.
    other
        .batch_execute(
            "BEGIN; INSERT INTO distributed_locks
                 (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
             VALUES ('default', 'raced', 'w', 1, 2, nextval('fencing_tokens'))",
        )
        .unwrap();
    let acquiring = {
        let repo = Arc::clone(&repo);
        tokio::spawn(async move {
            repo.acquire(tenant(), name("raced"), owner("alice"), ttl(30), None)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    other.batch_execute("COMMIT").unwrap();
    let outcome = acquiring.await.unwrap().unwrap();
    assert!(matches!(outcome, AcquireOutcome::Granted(_)), "{outcome:?}");
    let story: Vec<(HistoryEvent, String)> = page(&repo, one("raced"))
        .await
        .iter()
        .rev()
        .map(|r| (r.event, r.owner.as_str().to_owned()))
        .collect();
    assert_eq!(
        story,
        vec![
            (HistoryEvent::Granted, "w".to_owned()),
            (HistoryEvent::Expired, "w".to_owned()),
            (HistoryEvent::Granted, "alice".to_owned()),
        ]
    );
}

#[tokio::test]
async fn pages_read_batches_not_indexed_yet_and_indexing_changes_no_page() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db).await;
    repo.acquire(tenant(), name("rare"), owner("r"), ttl(30), None)
        .await
        .unwrap();
    // A statement a batch, over three segments: the batch numbers jump a segment (1024 of
    // them, migration 16) twice, as numbers that were drawn and never written would.
    let mut conn = PgConnection::establish(&db.url_string()).unwrap();
    for round in 0..120 {
        if round % 40 == 39 {
            conn.batch_execute(
                "SELECT setval('history_batch_numbers', \
                 (SELECT last_value FROM history_batch_numbers) + 1024)",
            )
            .unwrap();
        }
        repo.acquire(tenant(), name("busy"), owner("b"), ttl(30), None)
            .await
            .unwrap();
        repo.release(tenant(), name("busy"), owner("b"))
            .await
            .unwrap();
    }
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS count FROM history_names"),
        0
    );
    let subjects = [
        one("rare"),
        one("busy"),
        HistorySubject::Prefix(ResourcePrefix::default()),
        HistorySubject::Prefix(ResourcePrefix::parse("ra").unwrap()),
    ];
    let mut before = vec![];
    for subject in &subjects {
        before.push(page(&repo, subject.clone()).await);
    }
    assert_eq!(before[0].len(), 1);
    assert_eq!(before[1].len(), 240);
    assert_eq!(before[2].len(), 241);
    assert_eq!(before[3].len(), 1);
    // The indexer goes as far as the ids are final (a watermark settles on a later read), 100
    // batches a step.
    let last = count(
        &mut conn,
        "SELECT MAX(last_id) AS count FROM history_batches",
    );
    for _ in 0..50 {
        if count(&mut conn, "SELECT through AS count FROM history_indexed") >= last {
            break;
        }
        repo.index_history(100).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let through = count(&mut conn, "SELECT through AS count FROM history_indexed");
    assert!(through >= last, "indexed through {through}, last id {last}");
    assert!(
        count(
            &mut conn,
            "SELECT count(DISTINCT segment) AS count FROM history_names WHERE name = 'busy'"
        ) >= 3
    );
    for (subject, was) in subjects.iter().zip(&before) {
        let now = page(&repo, subject.clone()).await;
        let ids = |records: &[HistoryRecord]| records.iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(&now), ids(was), "{subject:?}");
    }
}

#[tokio::test]
async fn a_backlog_is_indexed_in_steps_of_bounded_records_and_none_is_skipped() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db).await;
    let mut conn = PgConnection::establish(&db.url_string()).unwrap();
    // A bulk load that the triggers record as one batch of 5,000 grants, then small batches of
    // the batch statement's.
    conn.batch_execute(
        "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
         SELECT 'default', 'bulk-' || n, 'loader', 1, 9999999999999, nextval('fencing_tokens')
         FROM generate_series(1, 5000) AS n",
    )
    .unwrap();
    for round in 0..30 {
        let resource = name(&format!("small-{round}"));
        repo.acquire(tenant(), resource.clone(), owner("s"), ttl(30), None)
            .await
            .unwrap();
        repo.release(tenant(), resource, owner("s")).await.unwrap();
    }
    let last = count(
        &mut conn,
        "SELECT MAX(first_id) AS count FROM history_batches",
    );
    let through =
        |conn: &mut PgConnection| count(conn, "SELECT through AS count FROM history_indexed");
    // The large batch alone, whatever the bound; then the small ones, 20 records a step at most
    // (each holds a record or two), until a step says it read them all.
    let mut steps = vec![];
    for _ in 0..100 {
        let read = repo.index_history(20).await.unwrap().unwrap();
        steps.push(read);
        if read < 20 && through(&mut conn) >= last {
            break;
        }
        // The batch statement's ids become final a moment after they are written.
        if read < 20 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Steps that read nothing waited for the ids to become final, or found the end.
    let read: Vec<usize> = steps.iter().copied().filter(|&read| read > 0).collect();
    assert_eq!(
        read[0], 5_000,
        "the first step reads the large batch alone: {steps:?}"
    );
    assert!(
        read[1..].iter().all(|&records| records <= 21),
        "a step read past its bound: {steps:?}"
    );
    assert_eq!(read[1..].iter().sum::<usize>(), 60, "{steps:?}");
    assert!(
        read.len() >= 4,
        "the 60 small records took one step: {steps:?}"
    );
    assert!(
        through(&mut conn) >= last,
        "indexed through {}, last batch {last}",
        through(&mut conn)
    );
    // Nothing skipped: every name has its segment entry.
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(DISTINCT name) AS count FROM history_names WHERE name LIKE 'bulk-%'"
        ),
        5_000
    );
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(DISTINCT name) AS count FROM history_names WHERE name LIKE 'small-%'"
        ),
        30
    );
}
