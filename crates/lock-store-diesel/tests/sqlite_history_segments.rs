//! SQLite keeps the records of a transaction in one row and finds a name's rows through segments of
//! 16,384 ids (migrations 12 and 14; packed batches, 16). Enough records to fill several segments,
//! written by concurrent writers so that batches hold many names: every read (a name's pages, a
//! prefix's, `since`, the stream's) sees each record once, in order, across segment and batch
//! boundaries, and pruning takes whole transactions, oldest first, and the segment entries with
//! them.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;
use std::time::Duration;

use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use lock_domain::{
    HistoryEvent, HistoryId, HistoryQuery, HistoryRecord, HistoryRepository, HistorySubject,
    LeaseKind, ListLimit, ResourcePrefix, SystemClock,
};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{every_history_page, open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig};

/// Writers, and acquire + release cycles each: 2 × 10 × 840 = 16,800 records, past one segment.
const WRITERS: usize = 10;
const CYCLES: usize = 840;
/// The ids of a segment (migration 14), and how many segments a page reads at most.
const SEGMENT: i64 = 16_384;
const SEGMENTS_A_PAGE: i64 = 8;

async fn cycles(repo: &Arc<DieselLockRepository>, resource: &str, count: usize) {
    for _ in 0..count {
        repo.acquire(tenant(), name(resource), owner(resource), ttl(30), None)
            .await
            .unwrap();
        repo.release(tenant(), name(resource), owner(resource))
            .await
            .unwrap();
    }
}

fn one(resource: &str) -> HistorySubject {
    HistorySubject::One {
        kind: LeaseKind::Lock,
        name: name(resource),
    }
}

fn ids(records: &[HistoryRecord]) -> Vec<i64> {
    records.iter().map(|r| r.id.value()).collect()
}

fn newest_first(records: &[HistoryRecord]) -> bool {
    records.windows(2).all(|w| w[0].id > w[1].id)
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

fn count(db: &TestDatabase, sql: &str) -> i64 {
    let path = db.url_string();
    let path = path.trim_start_matches("sqlite://");
    let mut conn = SqliteConnection::establish(path).unwrap();
    diesel::sql_query(sql)
        .get_result::<Count>(&mut conn)
        .unwrap()
        .n
}

/// A store on `db` that records history.
async fn recording(db: &TestDatabase) -> Arc<DieselLockRepository> {
    let mut config = StoreConfig::new(db.url().clone());
    config.record_history = true;
    open_store(config, Arc::new(SystemClock)).await
}

/// Runs `sql` on `db` from a connection of its own.
fn execute(db: &TestDatabase, sql: &str) {
    let path = db.url_string();
    let mut conn = SqliteConnection::establish(path.trim_start_matches("sqlite://")).unwrap();
    diesel::connection::SimpleConnection::batch_execute(&mut conn, sql).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_cross_segments_and_batches_and_pruning_takes_whole_transactions() {
    let db = TestDatabase::sqlite();
    let mut config = StoreConfig::new(db.url().clone());
    config.sweep_grace = Duration::ZERO;
    config.record_history = true;
    let repo = open_store(config, Arc::new(SystemClock)).await;

    // A rare name before and after the busy ones: its records lie segments apart.
    cycles(&repo, "rare", 2).await;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let repo = Arc::clone(&repo);
            tokio::spawn(async move { cycles(&repo, &format!("busy-{writer}"), CYCLES).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    // Records carry their transaction's millisecond: `late` is one nothing before was written in.
    let late = chrono::Utc::now() + chrono::TimeDelta::milliseconds(2);
    tokio::time::sleep(Duration::from_millis(10)).await;
    cycles(&repo, "rare", 2).await;

    let total = (2 * (4 + WRITERS * CYCLES)) as i64;
    let last = repo.last_history_id().await.unwrap().unwrap().value();
    assert_eq!(last, total, "ids are dense from 1");
    assert!(
        count(&db, "SELECT COUNT(*) AS n FROM history_batches") < total,
        "concurrent writes share transactions"
    );
    assert!(
        count(
            &db,
            "SELECT COUNT(DISTINCT segment) AS n FROM history_names"
        ) >= 2
    );

    // One busy name, every page: its 2 × CYCLES records, newest first, alternating.
    let busy = every_history_page(&repo, one("busy-3"), None, 37).await;
    assert_eq!(busy.len(), 2 * CYCLES);
    assert!(newest_first(&busy));
    assert!(busy.iter().all(|r| r.name.as_str() == "busy-3"));
    for (at, record) in busy.iter().rev().enumerate() {
        let expected = if at % 2 == 0 {
            HistoryEvent::Granted
        } else {
            HistoryEvent::Released
        };
        assert_eq!(record.event, expected, "record {at} of busy-3");
    }

    // The rare name: two early, two late, pages skipping the segments between.
    let rare = every_history_page(&repo, one("rare"), None, 3).await;
    assert_eq!(
        ids(&rare),
        vec![total, total - 1, total - 2, total - 3, 4, 3, 2, 1]
    );

    // A prefix, every page, and the whole tenant: each record once, newest first.
    let prefix = HistorySubject::Prefix(ResourcePrefix::parse("busy-").unwrap());
    let busy_all = every_history_page(&repo, prefix, None, 500).await;
    assert_eq!(busy_all.len(), 2 * WRITERS * CYCLES);
    assert!(newest_first(&busy_all));
    let everything = HistorySubject::Prefix(ResourcePrefix::parse("").unwrap());
    let all = every_history_page(&repo, everything.clone(), None, 1000).await;
    assert_eq!(ids(&all), (1..=total).rev().collect::<Vec<_>>());

    // `since` keeps the late ones only.
    let since = every_history_page(&repo, everything, Some(late), 2).await;
    assert_eq!(ids(&since), vec![total, total - 1, total - 2, total - 3]);

    // The stream's read, 700 at a time: every id once, oldest first.
    let mut streamed = Vec::new();
    let mut after = None;
    loop {
        let next = repo.history_after(after, 700).await.unwrap();
        let Some(last) = next.last() else { break };
        after = Some(last.id);
        streamed.extend(ids(&next));
    }
    assert_eq!(streamed, (1..=total).collect::<Vec<_>>());

    // Pruning everything, 1000 at a time: whole transactions, each at most once, and the
    // segment entries go with them; ids go on from the last one drawn.
    let future = chrono::Utc::now() + chrono::TimeDelta::seconds(1);
    let mut pruned = 0;
    loop {
        let deleted = repo.prune_history(future, 1000).await.unwrap();
        if deleted == 0 {
            break;
        }
        pruned += deleted;
    }
    assert_eq!(pruned as i64, total);
    assert!(repo.history_after(None, 10).await.unwrap().is_empty());
    // Only the segment of the next id may keep entries.
    let next_segment = (total + 1) / SEGMENT;
    for table in ["history_names", "history_tenants"] {
        let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE segment < {next_segment}");
        assert_eq!(count(&db, &sql), 0, "{table}");
    }
    cycles(&repo, "rare", 1).await;
    let fresh = repo.history_after(None, 10).await.unwrap();
    assert_eq!(ids(&fresh), vec![total + 1, total + 2]);
    assert_eq!(
        ids(&every_history_page(&repo, one("rare"), None, 10).await),
        vec![total + 2, total + 1]
    );
}

/// A page reads at most 8 segments: a prefix that only an old record has is answered in
/// pages that may be empty, each with a cursor, until the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reads_a_bounded_number_of_segments_and_says_where_to_go_on() {
    let db = TestDatabase::sqlite();
    let repo = recording(&db).await;
    // 40 segments' worth of records of other names, written as the writer would, and the one
    // record the prefix matches in the oldest segment.
    {
        let mut sql = String::from("BEGIN;");
        for segment in 0..40_i64 {
            let first = segment * SEGMENT + 1;
            let name = if segment == 0 { "match-1" } else { "other" };
            sql.push_str(&format!(
                "INSERT INTO history_batches VALUES ({first}, {first}, 1764720000000, \
                 '[[\"default\",\"lock\",\"{name}\",\"o\",{first},\"granted\",null,0]]');
                 INSERT INTO history_tenants VALUES ('default', {segment});
                 INSERT INTO history_names VALUES ('default', 'lock', '{name}', {segment});"
            ));
        }
        sql.push_str(&format!(
            "UPDATE history_context SET last_id = 39 * {SEGMENT} + 1; COMMIT;"
        ));
        execute(&db, &sql);
    }
    let prefix = HistorySubject::Prefix(ResourcePrefix::parse("match-").unwrap());
    let first = repo
        .history(
            tenant(),
            HistoryQuery {
                subject: prefix.clone(),
                since: None,
                before: None,
                limit: ListLimit::parse(10).unwrap(),
            },
        )
        .await
        .unwrap();
    assert!(first.records.is_empty(), "{first:?}");
    assert_eq!(
        first.next.map(HistoryId::value),
        Some((40 - SEGMENTS_A_PAGE) * SEGMENT)
    );
    let all = every_history_page(&repo, prefix, None, 10).await;
    assert_eq!(ids(&all), vec![1]);
    // A name's pages are bounded the same way.
    assert_eq!(
        ids(&every_history_page(&repo, one("other"), None, 1000).await).len(),
        39
    );
}

/// Batches written before migration 16 (JSON text) and after it (packed) are read alike, in one
/// page and in the stream.
#[tokio::test]
async fn batches_of_json_text_and_packed_ones_read_alike() {
    let db = TestDatabase::sqlite();
    let repo = recording(&db).await;
    execute(
        &db,
        "BEGIN;
             INSERT INTO history_batches VALUES (1, 2, 1764720000000,
                 '[[\"default\",\"lock\",\"old\",\"o\",1,\"granted\",null,0],
                   [\"default\",\"lock\",\"old\",\"o\",1,\"released\",null,0]]');
             INSERT INTO history_tenants VALUES ('default', 0);
             INSERT INTO history_names VALUES ('default', 'lock', 'old', 0);
             UPDATE history_context SET last_id = 2;
             COMMIT;",
    );
    cycles(&repo, "old", 1).await;
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) AS n FROM history_batches WHERE typeof(records) = 'blob'"
        ),
        2
    );
    let page = every_history_page(&repo, one("old"), None, 10).await;
    assert_eq!(ids(&page), vec![4, 3, 2, 1]);
    let events: Vec<HistoryEvent> = page.iter().rev().map(|r| r.event).collect();
    assert_eq!(
        events,
        [
            HistoryEvent::Granted,
            HistoryEvent::Released,
            HistoryEvent::Granted,
            HistoryEvent::Released
        ]
    );
    let streamed = repo.history_after(None, 10).await.unwrap();
    assert_eq!(ids(&streamed), vec![1, 2, 3, 4]);
}
