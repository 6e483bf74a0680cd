//! A page of a listing reads the page from the `(tenant, resource)` index, never the table: the
//! query plans of the listing statements, EXPLAINed over 10,000 locks on both backends.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_domain::{Clock, ListLimit, ListQuery, ResourcePrefix, StoreHealth, Tenant};
use lock_store_diesel::statements::{POSTGRES_LIST, SQLITE_LIST, SQLITE_LIST_ENDED};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

const ROWS: i64 = 10_000;

async fn open(db: &TestDatabase, clock: Arc<dyn Clock>) -> DieselLockRepository {
    let config = StoreConfig::new(db.url().clone());
    tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
        .await
        .unwrap()
        .unwrap()
}

/// 10,000 live locks `item:00000`..`item:09999` of the default tenant, and as many of another
/// tenant and as many expired ones, so that a scan of anything but the page would show.
fn fill(db: &TestDatabase, now_ms: i64) {
    let insert = |tenant: &str, prefix: &str, expires: i64| {
        format!(
            "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token) \
             SELECT '{tenant}', '{prefix}' || substr('0000' || i, -5, 5), 'filler', {now_ms}, {expires}, i + 1 FROM series;"
        )
    };
    let sql = [
        insert("default", "item:", now_ms + 600_000),
        insert("other", "item:", now_ms + 600_000),
        insert("default", "old:", now_ms - 1_000),
    ]
    .concat();
    match db.url() {
        DatabaseUrl::Sqlite(path) => {
            let mut conn = SqliteConnection::establish(&path.display().to_string()).unwrap();
            conn.batch_execute(&format!(
                "CREATE TEMP TABLE series AS WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {}) SELECT i FROM s; {sql} ANALYZE;",
                ROWS - 1
            ))
            .unwrap();
        }
        DatabaseUrl::Postgres(url) => {
            let mut conn = PgConnection::establish(url).unwrap();
            // PostgreSQL's substr has no negative start: pad with lpad instead.
            let sql = sql.replace("substr('0000' || i, -5, 5)", "lpad(i::text, 5, '0')");
            conn.batch_execute(&format!(
                "CREATE TEMP TABLE series AS SELECT generate_series(0, {}) AS i; {sql} ANALYZE distributed_locks;",
                ROWS - 1
            ))
            .unwrap();
        }
    }
}

#[derive(QueryableByName)]
struct SqlitePlanRow {
    #[diesel(sql_type = Text)]
    detail: String,
}

#[derive(QueryableByName)]
struct PgPlanRow {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    line: String,
}

/// The page the plans are checked for: prefix `item:05`, after `item:05000`, 10 rows.
async fn page_is_right(repo: &DieselLockRepository) {
    let page = repo
        .list(
            Tenant::default_tenant(),
            ListQuery {
                prefix: ResourcePrefix::parse("item:05").unwrap(),
                after: Some(lock_domain::ResourceName::parse("item:05000").unwrap()),
                limit: ListLimit::parse(10).unwrap(),
            },
        )
        .await
        .unwrap();
    let names: Vec<String> = page
        .locks
        .iter()
        .map(|l| l.lock.resource.as_str().to_owned())
        .collect();
    let expected: Vec<String> = (5001..=5010).map(|i| format!("item:{i:05}")).collect();
    assert_eq!(names, expected);
    assert!(page.has_more);
    assert_eq!(repo.count_live().await.unwrap(), 2 * ROWS as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_listing_searches_the_primary_key_without_sorting() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let repo = open(&db, Arc::new(clock.clone())).await;
    let now_ms = clock.now().timestamp_millis();
    fill(&db, now_ms);
    page_is_right(&repo).await;

    let DatabaseUrl::Sqlite(path) = db.url() else {
        unreachable!()
    };
    let mut conn = SqliteConnection::establish(&path.display().to_string()).unwrap();
    // `?n` placeholders are numbered: bind them in their numbers' order.
    let plan: Vec<String> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {SQLITE_LIST}"))
        .bind::<Text, _>("default")
        .bind::<Text, _>("item:05")
        .bind::<Text, _>("item:06")
        .bind::<Text, _>("item:05000")
        .bind::<BigInt, _>(now_ms)
        .bind::<BigInt, _>(11)
        .load::<SqlitePlanRow>(&mut conn)
        .unwrap()
        .into_iter()
        .map(|row| row.detail)
        .collect();
    let text = plan.join("\n");
    assert!(
        text.contains(
            "SEARCH distributed_locks USING PRIMARY KEY (tenant=? AND resource>? AND resource<?)"
        ),
        "the listing must range-search the primary key:\n{text}"
    );
    assert!(!text.contains("SCAN"), "no table scan:\n{text}");
    assert!(
        !text.contains("TEMP B-TREE"),
        "no sort: the key is the order:\n{text}"
    );

    // The check for ended rows in the page's range reads that range only.
    let plan: Vec<String> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {SQLITE_LIST_ENDED}"))
        .bind::<Text, _>("default")
        .bind::<Text, _>("item:05")
        .bind::<Text, _>("item:05010")
        .bind::<Text, _>("item:05000")
        .bind::<BigInt, _>(now_ms)
        .load::<SqlitePlanRow>(&mut conn)
        .unwrap()
        .into_iter()
        .map(|row| row.detail)
        .collect();
    let text = plan.join("\n");
    assert!(
        text.contains(
            "SEARCH distributed_locks USING PRIMARY KEY (tenant=? AND resource>? AND resource<?)"
        ),
        "the check must range-search the primary key:\n{text}"
    );
    assert!(
        !text.contains("SCAN distributed_locks"),
        "no table scan:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_listing_reads_only_the_page_from_the_primary_key() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let repo = open(&db, Arc::new(lock_domain::SystemClock)).await;
    let now_ms = chrono::Utc::now().timestamp_millis();
    fill(&db, now_ms);
    page_is_right(&repo).await;

    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!()
    };
    let mut conn = PgConnection::establish(url).unwrap();
    // lockd keeps the statement prepared, and PostgreSQL may switch a prepared statement to a
    // generic plan (planned without the values) after a few runs: check both kinds.
    for mode in ["force_custom_plan", "force_generic_plan"] {
        conn.batch_execute(&format!("SET plan_cache_mode = {mode}"))
            .unwrap();
        assert_plan_reads_only_the_page(&mut conn, mode);
    }
}

fn assert_plan_reads_only_the_page(conn: &mut PgConnection, mode: &str) {
    let plan: Vec<String> = diesel::sql_query(format!(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {POSTGRES_LIST}"
    ))
    .bind::<Text, _>("default")
    .bind::<Text, _>("item:05")
    .bind::<Text, _>("item:06")
    .bind::<Text, _>("item:05000")
    .bind::<BigInt, _>(11)
    .load::<PgPlanRow>(conn)
    .unwrap()
    .into_iter()
    .map(|row| row.line)
    .collect();
    let text = format!("{mode}:\n{}", plan.join("\n"));
    assert!(
        text.contains("Index Scan using distributed_locks_pkey on distributed_locks"),
        "the listing must scan the primary-key index:\n{text}"
    );
    assert!(!text.contains("Seq Scan"), "no table scan:\n{text}");
    assert!(
        !text.contains("Sort"),
        "no sort: the index is the order:\n{text}"
    );
    let index_line = plan
        .iter()
        .find(|line| line.contains("Index Scan"))
        .unwrap();
    assert!(
        index_line.contains("(actual rows=11 loops=1)"),
        "the index scan stops after the page and one more row:\n{text}"
    );
}
