use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};

use super::element;

#[derive(QueryableByName)]
struct Read {
    #[diesel(sql_type = Text)]
    text: String,
}

/// What SQLite's JSON functions read back from field `index` of `json`.
fn field(conn: &mut SqliteConnection, json: &str, index: u8) -> String {
    diesel::sql_query(format!("SELECT CAST(? ->> {index} AS TEXT) AS text"))
        .bind::<Text, _>(json)
        .get_result::<Read>(conn)
        .expect("a JSON array")
        .text
}

#[test]
fn every_text_reads_back_as_it_was_written() {
    let mut conn = SqliteConnection::establish(":memory:").expect("an in-memory database");
    let awkward =
        "quote \" back\\slash tab\t newline\n nul-ish \u{1} del \u{7f} é 漢 🔒 /elections";
    let json = element(
        awkward,
        "lock",
        awkward,
        awkward,
        42,
        "force-released",
        Some(awkward),
        true,
    );
    for index in [0, 2, 3, 6] {
        assert_eq!(
            field(&mut conn, &json, index),
            awkward,
            "field {index} of {json}"
        );
    }
    assert_eq!(field(&mut conn, &json, 1), "lock");
    assert_eq!(field(&mut conn, &json, 4), "42");
    assert_eq!(field(&mut conn, &json, 5), "force-released");
    assert_eq!(field(&mut conn, &json, 7), "1");
}

#[test]
fn a_missing_reason_is_null_and_not_shared_is_zero() {
    let json = element("t", "semaphore", "n", "o", 1, "granted", None, false);
    assert_eq!(json, r#"["t","semaphore","n","o",1,"granted",null,0]"#);
}
