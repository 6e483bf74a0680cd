use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};

use super::element::{key, unescape};

#[derive(QueryableByName)]
struct Element {
    #[diesel(sql_type = Text)]
    element: String,
}

/// The element SQLite's `json_array` writes for a record of `tenant`, `kind` and `name`.
fn element(conn: &mut SqliteConnection, tenant: &str, kind: &str, name: &str) -> String {
    diesel::sql_query("SELECT json_array(?, ?, ?, 'owner', 7, 'granted', NULL, 0) AS element")
        .bind::<Text, _>(tenant)
        .bind::<Text, _>(kind)
        .bind::<Text, _>(name)
        .get_result::<Element>(conn)
        .expect("json_array")
        .element
}

#[test]
fn the_key_reads_back_every_text_sqlite_escaped() {
    let mut conn = SqliteConnection::establish(":memory:").expect("an in-memory database");
    let awkward = [
        "plain",
        "",
        "quote \" back\\slash / slash",
        "tab\t newline\n return\r nul-ish \u{1} \u{1f} del \u{7f}",
        "é 漢 🔒 \u{2028}",
        "\\\"",
        "ends with a backslash \\",
    ];
    for text in awkward {
        let json = element(&mut conn, text, "lock", text);
        let found = key(&json).unwrap_or_else(|| panic!("a key in {json}"));
        assert_eq!(
            unescape(found.tenant).as_deref(),
            Some(text),
            "tenant of {json}"
        );
        assert_eq!(found.kind, "lock");
        assert_eq!(
            unescape(found.name).as_deref(),
            Some(text),
            "name of {json}"
        );
    }
}

#[test]
fn different_texts_have_different_keys_and_equal_texts_equal_ones() {
    let mut conn = SqliteConnection::establish(":memory:").expect("an in-memory database");
    let a = element(&mut conn, "t", "lock", "a\"b");
    let b = element(&mut conn, "t", "lock", "a\\\"b");
    let again = element(&mut conn, "t", "lock", "a\"b");
    assert_ne!(key(&a), key(&b));
    assert_eq!(key(&a), key(&again));
}

#[test]
fn what_is_not_an_element_has_no_key() {
    for broken in [
        "",
        "[",
        "[\"t\"",
        "[\"t\",\"lock\",\"n\"]",
        "{\"t\":1}",
        "[\"unterminated",
    ] {
        assert_eq!(key(broken), None, "{broken}");
    }
    assert_eq!(unescape("bad \\x escape"), None);
    assert_eq!(unescape("\\ud83d\\udd12").as_deref(), Some("🔒"));
}
