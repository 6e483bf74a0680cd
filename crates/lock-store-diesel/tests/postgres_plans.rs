//! PostgreSQL keeps a prepared statement's generic plan for the life of a connection. lockd's
//! batch statement must look rows up by primary key even when its plan was made on an empty
//! table, or it would scan the whole table on every batch once the table has grown (173 ms per
//! request at 1M rows, measured). This EXPLAINs the generic plan made on an empty table, with and
//! without lockd's session settings, of the batch statement and of each of its variants; and a statement that can only scan (the live-lock count),
//! which must not be compiled by JIT for the penalty the disabled scan adds to its cost.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sql_types::Text;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_store_diesel::statements::{
    POSTGRES_COUNT_LIVE, POSTGRES_SESSION, POSTGRES_WRITE_BATCH, POSTGRES_WRITE_BATCHES,
};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DatabaseUrl, StoreConfig};

#[derive(QueryableByName)]
struct PlanRow {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    line: String,
}

/// The generic plan of `batch` (the batch statement or a variant) on this (empty) database,
/// after `settings`.
fn generic_plan(url: &str, settings: &str, batch: &str) -> String {
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(&format!(
        "{settings}; SET plan_cache_mode = force_generic_plan; \
         PREPARE batch (text[], text[], text[], bigint[], text[], text[], text[], text[], \
         text[], text[], bigint[], text[], text[], bigint[], bigint, text[], text[], text[], \
         text[], text[]) AS {batch}"
    ))
    .expect("prepare the batch statement");
    let arrays = "'{t}', '{r}', '{o}', '{1000}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', \
                  '{NULL}', '{}', '{0}', 4000000000000000, '{NULL}', '{NULL}', '{NULL}', \
                  '{}', '{}'";
    diesel::sql_query(format!("EXPLAIN EXECUTE batch ({arrays})"))
        .load::<PlanRow>(&mut conn)
        .expect("explain")
        .into_iter()
        .map(|row| row.line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plan of `sql` after `settings`.
fn plan(url: &str, settings: &str, sql: &str) -> String {
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(settings).expect("settings");
    diesel::sql_query(format!("EXPLAIN {sql}"))
        .load::<PlanRow>(&mut conn)
        .expect("explain")
        .into_iter()
        .map(|row| row.line)
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(QueryableByName)]
struct Available {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    available: bool,
}

#[tokio::test]
async fn the_batch_statement_uses_the_primary_key_even_when_planned_on_an_empty_table() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    // The schema, as lockd opens it; no lock is ever written.
    let config = StoreConfig::new(db.url().clone());
    drop(open_store(config, std::sync::Arc::new(ManualClock::new())).await);
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!("a PostgreSQL database")
    };

    let plain = generic_plan(url, "SELECT 1", POSTGRES_WRITE_BATCH);
    assert!(
        plain.contains("Seq Scan on distributed_locks"),
        "the planner's own choice on an empty table is a scan (else this test proves nothing):\n{plain}"
    );
    assert_eq!(POSTGRES_WRITE_BATCHES[0], POSTGRES_WRITE_BATCH);
    for batch in POSTGRES_WRITE_BATCHES {
        let lockd = generic_plan(url, POSTGRES_SESSION, batch);
        assert!(
            !lockd.contains("Seq Scan"),
            "with lockd's settings:\n{lockd}"
        );
        assert!(
            lockd.contains("Index Scan using distributed_locks_pkey"),
            "with lockd's settings:\n{lockd}"
        );
    }

    // The live count has no index to use: it still scans, and is not JIT-compiled for the
    // disabled scan's penalty.
    let count = plan(url, POSTGRES_SESSION, POSTGRES_COUNT_LIVE);
    assert!(count.contains("Seq Scan on distributed_locks"), "{count}");
    assert!(!count.contains("JIT"), "with lockd's settings:\n{count}");
    let mut conn = PgConnection::establish(url).expect("connect");
    let jit = diesel::sql_query("SELECT pg_jit_available() AS available")
        .get_result::<Available>(&mut conn)
        .expect("pg_jit_available");
    if jit.available {
        let compiled = plan(url, "SET enable_seqscan = off", POSTGRES_COUNT_LIVE);
        assert!(
            compiled.contains("JIT"),
            "without jit = off the penalty compiles it (else this half proves nothing):\n{compiled}"
        );
    }
}
