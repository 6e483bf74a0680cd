//! PostgreSQL keeps a prepared statement's generic plan for the life of a connection. lockd's
//! batch statement must look rows up by primary key even when its plan was made on an empty
//! table, or it would scan the whole table on every batch once the table has grown (173 ms per
//! request at 1M rows, measured). This EXPLAINs the generic plan made on an empty table, with and
//! without lockd's session settings.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sql_types::Text;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_store_diesel::statements::{POSTGRES_SESSION, POSTGRES_WRITE_BATCH};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

#[derive(QueryableByName)]
struct PlanRow {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    line: String,
}

/// The generic plan of the batch statement on this (empty) database, after `settings`.
fn generic_plan(url: &str, settings: &str) -> String {
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(&format!(
        "{settings}; SET plan_cache_mode = force_generic_plan; \
         PREPARE batch (text[], text[], text[], bigint[], text[], text[], text[], text[], \
         text[], text[], bigint[], text[], text[]) AS {POSTGRES_WRITE_BATCH}"
    ))
    .expect("prepare the batch statement");
    let arrays = "'{t}', '{r}', '{o}', '{1000}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', \
                  '{NULL}', '{}'";
    diesel::sql_query(format!("EXPLAIN EXECUTE batch ({arrays})"))
        .load::<PlanRow>(&mut conn)
        .expect("explain")
        .into_iter()
        .map(|row| row.line)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_batch_statement_uses_the_primary_key_even_when_planned_on_an_empty_table() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    // The schema, as lockd opens it; no lock is ever written.
    let config = StoreConfig::new(db.url().clone());
    let store = tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, std::sync::Arc::new(ManualClock::new()))
    })
    .await
    .expect("the opening thread")
    .expect("open the store");
    drop(store);
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!("a PostgreSQL database")
    };

    let plain = generic_plan(url, "SELECT 1");
    assert!(
        plain.contains("Seq Scan on distributed_locks"),
        "the planner's own choice on an empty table is a scan (else this test proves nothing):\n{plain}"
    );
    let lockd = generic_plan(url, POSTGRES_SESSION);
    assert!(
        !lockd.contains("Seq Scan on distributed_locks"),
        "with lockd's settings:\n{lockd}"
    );
    assert!(
        lockd.contains("Index Scan using distributed_locks_pkey"),
        "with lockd's settings:\n{lockd}"
    );
}
