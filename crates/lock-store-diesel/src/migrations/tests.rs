//! SQLite's migration 16 down unpacks the packed history batches for the code before it, and up
//! again reads both.

use diesel::sql_types::{Binary, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use diesel_migrations::MigrationHarness;

use super::SQLITE;
use crate::history::{pack, register_sqlite_functions};

#[derive(QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    json: String,
}

const JSON: &str = r#"[["t","lock","n","o",1,"granted",null,0]]"#;

#[test]
fn migration_16_down_unpacks_the_batches_and_up_keeps_them_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lockd.db");
    let mut conn = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    register_sqlite_functions(&mut conn).unwrap();
    conn.run_pending_migrations(SQLITE).unwrap();
    diesel::sql_query("INSERT INTO history_batches VALUES (1, 1, 0, ?)")
        .bind::<Binary, _>(pack(JSON))
        .execute(&mut conn)
        .unwrap();
    let read = |conn: &mut SqliteConnection| {
        diesel::sql_query(
            "SELECT typeof(records) AS kind, \
             CASE WHEN typeof(records) = 'text' THEN records ELSE '' END AS json \
             FROM history_batches",
        )
        .get_result::<Stored>(conn)
        .unwrap()
    };
    assert_eq!(read(&mut conn).kind, "blob");

    // Migrations 19 (expired holds), 18 (sessions) and 17 (readers ended at a takeover) first,
    // then 16.
    let reverted = conn.revert_last_migration(SQLITE).unwrap();
    assert_eq!(reverted.to_string(), "20261206000019");
    let reverted = conn.revert_last_migration(SQLITE).unwrap();
    assert_eq!(reverted.to_string(), "20261205000018");
    let reverted = conn.revert_last_migration(SQLITE).unwrap();
    assert_eq!(reverted.to_string(), "20261203000017");
    let reverted = conn.revert_last_migration(SQLITE).unwrap();
    assert_eq!(reverted.to_string(), "20261203000016");
    let stored = read(&mut conn);
    assert_eq!(stored.kind, "text");
    assert_eq!(stored.json, JSON);

    conn.run_pending_migrations(SQLITE).unwrap();
    // A text batch stays text, read as it is.
    let stored = read(&mut conn);
    assert_eq!((stored.kind.as_str(), stored.json.as_str()), ("text", JSON));
}
