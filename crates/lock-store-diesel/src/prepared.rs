//! A raw SQL statement that diesel may keep prepared on its connection.
//!
//! diesel's `sql_query` marks every raw statement as unsafe to cache, so the database parses and
//! plans it again on every request. The lock statements are fixed texts with numbered
//! placeholders (`$n` on PostgreSQL, `?n` on SQLite), which is exactly what a prepared-statement
//! cache keys on: this type pushes the same text and binds without that mark, and diesel
//! prepares each statement once per connection. PostgreSQL statements may also take arrays
//! (`postgres::writes::WRITE_BATCH`). A statement written once for both backends
//! ([`Prepared::portable`]) uses `$n` on both.
//!
//! diesel finds a statement in its cache by the statement's type when the type says which
//! statement it is, and otherwise by its SQL text, which it then writes out (a walk of the text),
//! hashes and compares on every execution. A statement whose text is a constant is made with
//! [`statement!`] (or [`portable_statement!`]), whose type carries a key computed from that text
//! at compile time ([`key`]): the same text always has the same type, and a text that is not a
//! constant does not compile there. Other statements keep the text as their cache key.

use diesel::backend::Backend;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Binary, Nullable, Text, Untyped};
use diesel::sqlite::Sqlite;
use diesel::{QueryResult, RunQueryDsl};

/// One bound value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Text(&'a str),
    BigInt(i64),
    /// A text that may be NULL.
    NullableText(Option<&'a str>),
    /// SQLite only: a blob.
    Blob(&'a [u8]),
    /// PostgreSQL only: `text[]`.
    TextArray(&'a [&'a str]),
    /// PostgreSQL only: `bigint[]`.
    BigIntArray(&'a [i64]),
    /// PostgreSQL only: `text[]` whose elements may be NULL.
    NullableTextArray(&'a [Option<&'a str>]),
}

/// `sql` with its `$1`, `$2`, … placeholders bound to `params[0]`, `params[1]`, …; `KEY` is
/// the key of its constant text ([`statement!`]), or 0 when diesel keys it by the text.
#[derive(Debug)]
pub(crate) struct Prepared<'a, const KEY: u64 = 0> {
    sql: &'static str,
    params: Vec<Param<'a>>,
    /// Written with `$n` placeholders for both backends, SQLite included.
    portable: bool,
}

impl<'a> Prepared<'a> {
    /// `sql` with `$n` placeholders on PostgreSQL, `?n` on SQLite.
    pub(crate) fn new(sql: &'static str, params: Vec<Param<'a>>) -> Self {
        Self::keyed(sql, params, false)
    }

    /// `sql` written once for both backends, with `$n` placeholders on both.
    pub(crate) fn portable(sql: &'static str, params: Vec<Param<'a>>) -> Self {
        Self::keyed(sql, params, true)
    }
}

impl<'a, const KEY: u64> Prepared<'a, KEY> {
    /// Only through [`statement!`] and [`portable_statement!`] with a `KEY` other than 0, which
    /// compute `KEY` from the same `sql` and `portable`.
    #[doc(hidden)]
    pub(crate) fn keyed(sql: &'static str, params: Vec<Param<'a>>, portable: bool) -> Self {
        #[cfg(debug_assertions)]
        same_text_same_key::check(KEY, sql, portable);
        Self {
            sql,
            params,
            portable,
        }
    }
}

/// The key of constant statement `sql` (`portable`: written with `$n` for both backends): its
/// FNV-1a hash, never 0.
pub(crate) const fn key(sql: &str, portable: bool) -> u64 {
    let bytes = sql.as_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash ^= portable as u64;
    hash = hash.wrapping_mul(0x0100_0000_01b3);
    if hash == 0 {
        1
    } else {
        hash
    }
}

/// Constant statement `$sql` (`$n` placeholders on PostgreSQL, `?n` on SQLite) with `$params`,
/// kept in diesel's cache by its type.
macro_rules! statement {
    ($sql:expr, $params:expr $(,)?) => {
        $crate::prepared::Prepared::<{ $crate::prepared::key($sql, false) }>::keyed(
            $sql, $params, false,
        )
    };
}
pub(crate) use statement;

/// [`statement!`] for a constant statement written with `$n` placeholders for both backends.
macro_rules! portable_statement {
    ($sql:expr, $params:expr $(,)?) => {
        $crate::prepared::Prepared::<{ $crate::prepared::key($sql, true) }>::keyed(
            $sql, $params, true,
        )
    };
}
pub(crate) use portable_statement;

/// The type that keys statement `KEY` in diesel's cache of prepared statements.
pub(crate) struct StatementKey<const KEY: u64>;

impl<const KEY: u64> QueryId for Prepared<'_, KEY> {
    type QueryId = StatementKey<KEY>;
    // Without a key, keyed by its SQL text and bind types instead.
    const HAS_STATIC_QUERY_ID: bool = KEY != 0;
}

impl<const KEY: u64> Query for Prepared<'_, KEY> {
    type SqlType = Untyped;
}

impl<Conn, const KEY: u64> RunQueryDsl<Conn> for Prepared<'_, KEY> {}

/// Tests and debug builds check that no two texts met share a key (a 64-bit hash: never seen,
/// but a shared key would run the wrong statement).
#[cfg(debug_assertions)]
mod same_text_same_key {
    use std::collections::HashMap;
    use std::sync::Mutex;

    static SEEN: Mutex<Option<HashMap<u64, (&'static str, bool)>>> = Mutex::new(None);

    pub(super) fn check(key: u64, sql: &'static str, portable: bool) {
        if key == 0 {
            return;
        }
        assert_eq!(key, super::key(sql, portable), "a key not of its statement");
        let mut seen = SEEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let first = *seen
            .get_or_insert_with(HashMap::new)
            .entry(key)
            .or_insert((sql, portable));
        assert!(
            first == (sql, portable),
            "statement key {key} is shared by two statements"
        );
    }
}

impl<'a, const KEY: u64> Prepared<'a, KEY> {
    /// Walks the text, turning every `{marker}n` into a bind of params[n - 1] (through `bind`),
    /// in the order the placeholders appear; diesel writes the placeholders itself, numbered in
    /// that order.
    fn walk<'b, DB, B>(
        &'b self,
        marker: char,
        mut out: AstPass<'_, 'b, DB>,
        bind: B,
    ) -> QueryResult<()>
    where
        DB: Backend,
        B: Fn(&'b Param<'a>, &mut AstPass<'_, 'b, DB>) -> QueryResult<()>,
    {
        let mut rest = self.sql;
        while let Some(at) = rest.find(marker) {
            out.push_sql(&rest[..at]);
            let digits = rest[at + 1..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let index: usize = rest[at + 1..at + 1 + digits].parse().map_err(|_| {
                diesel::result::Error::QueryBuilderError("a placeholder without a number".into())
            })?;
            match self.params.get(index.wrapping_sub(1)) {
                Some(param) => bind(param, &mut out)?,
                None => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("no value for placeholder {index}").into(),
                    ))
                }
            }
            rest = &rest[at + 1 + digits..];
        }
        out.push_sql(rest);
        Ok(())
    }
}

impl<const KEY: u64> QueryFragment<Pg> for Prepared<'_, KEY> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.walk('$', out, |param, out| match param {
            Param::Text(value) => out.push_bind_param::<Text, str>(value),
            Param::BigInt(value) => out.push_bind_param::<BigInt, i64>(value),
            Param::NullableText(value) => {
                out.push_bind_param::<Nullable<Text>, Option<&str>>(value)
            }
            Param::TextArray(values) => out.push_bind_param::<Array<Text>, [&str]>(values),
            Param::BigIntArray(values) => out.push_bind_param::<Array<BigInt>, [i64]>(values),
            Param::NullableTextArray(values) => {
                out.push_bind_param::<Array<Nullable<Text>>, [Option<&str>]>(values)
            }
            Param::Blob(_) => Err(diesel::result::Error::QueryBuilderError(
                "blobs are bound on SQLite only".into(),
            )),
        })
    }
}

impl<const KEY: u64> QueryFragment<Sqlite> for Prepared<'_, KEY> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        let marker = if self.portable { '$' } else { '?' };
        self.walk(marker, out, |param, out| match param {
            Param::Text(value) => out.push_bind_param::<Text, str>(value),
            Param::BigInt(value) => out.push_bind_param::<BigInt, i64>(value),
            Param::NullableText(value) => {
                out.push_bind_param::<Nullable<Text>, Option<&str>>(value)
            }
            Param::Blob(value) => out.push_bind_param::<Binary, [u8]>(value),
            Param::TextArray(_) | Param::BigIntArray(_) | Param::NullableTextArray(_) => Err(
                diesel::result::Error::QueryBuilderError("SQLite has no array parameters".into()),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_in_order_with_their_values() {
        let query = Prepared::new(
            "UPDATE t SET e = n + $4 WHERE a = $1 AND b = $2 AND c = $3",
            vec![
                Param::Text("ten"),
                Param::Text("res"),
                Param::Text("own"),
                Param::BigInt(30_000),
            ],
        );
        let shown = diesel::debug_query::<Pg, _>(&query).to_string();
        assert_eq!(
            shown,
            r#"UPDATE t SET e = n + $1 WHERE a = $2 AND b = $3 AND c = $4 -- binds: [30000, "ten", "res", "own"]"#
        );
    }

    #[test]
    fn a_missing_value_is_an_error_not_a_panic() {
        let query = Prepared::new("SELECT $2", vec![Param::Text("only one")]);
        let mut builder = diesel::pg::PgQueryBuilder::default();
        let built = QueryFragment::<Pg>::to_sql(&query, &mut builder, &Pg);
        assert!(built.is_err());
    }

    #[test]
    fn arrays_bind_on_postgresql_and_are_refused_on_sqlite() {
        let resources = ["a", "b"];
        let ttls = [1_000, 2_000];
        let query = Prepared::new(
            "SELECT * FROM unnest($1::text[], $2::bigint[])",
            vec![Param::TextArray(&resources), Param::BigIntArray(&ttls)],
        );
        let shown = diesel::debug_query::<Pg, _>(&query).to_string();
        assert_eq!(
            shown,
            r#"SELECT * FROM unnest($1::text[], $2::bigint[]) -- binds: [["a", "b"], [1000, 2000]]"#
        );
        let query = Prepared::new("SELECT ?1", vec![Param::TextArray(&resources)]);
        let mut builder = diesel::sqlite::SqliteQueryBuilder::new();
        assert!(QueryFragment::<Sqlite>::to_sql(&query, &mut builder, &Sqlite).is_err());
    }

    #[test]
    fn portable_statements_use_dollar_placeholders_on_both_backends() {
        let params = || vec![Param::Text("n"), Param::NullableText(None)];
        let sql = "UPDATE t SET v = COALESCE($2, v) WHERE n = $1";
        let on_sqlite =
            diesel::debug_query::<Sqlite, _>(&Prepared::portable(sql, params())).to_string();
        assert_eq!(
            on_sqlite,
            r#"UPDATE t SET v = COALESCE(?, v) WHERE n = ? -- binds: [None, "n"]"#
        );
        let on_postgres =
            diesel::debug_query::<Pg, _>(&Prepared::portable(sql, params())).to_string();
        assert_eq!(
            on_postgres,
            r#"UPDATE t SET v = COALESCE($1, v) WHERE n = $2 -- binds: [None, "n"]"#
        );
    }

    const KEYED: &str = "UPDATE t SET e = $2 WHERE a = $1";

    #[test]
    fn a_constant_statement_is_keyed_by_its_type_and_written_the_same() {
        let params = || vec![Param::Text("a"), Param::BigInt(7)];
        let keyed = portable_statement!(KEYED, params());
        assert_eq!(
            <Prepared<'_, { key(KEYED, true) }> as QueryId>::query_id(),
            Some(std::any::TypeId::of::<StatementKey<{ key(KEYED, true) }>>())
        );
        assert_eq!(<Prepared<'_> as QueryId>::query_id(), None, "keyed by text");
        for (shown, unkeyed) in [
            (
                diesel::debug_query::<Sqlite, _>(&keyed).to_string(),
                diesel::debug_query::<Sqlite, _>(&Prepared::portable(KEYED, params())).to_string(),
            ),
            (
                diesel::debug_query::<Pg, _>(&keyed).to_string(),
                diesel::debug_query::<Pg, _>(&Prepared::portable(KEYED, params())).to_string(),
            ),
        ] {
            assert_eq!(shown, unkeyed);
        }
        let _ = statement!(KEYED, params());
        assert_ne!(
            key(KEYED, true),
            key(KEYED, false),
            "written for other placeholders"
        );
        assert_ne!(
            key(KEYED, true),
            key("UPDATE t SET e = $2 WHERE a = $3", true)
        );
        assert_ne!(key("", false), 0);
    }

    #[test]
    #[should_panic(expected = "not of its statement")]
    fn a_key_made_for_another_text_is_caught() {
        let _ = Prepared::<{ key(KEYED, true) }>::keyed("SELECT 1", vec![], true);
    }

    #[test]
    fn sqlite_placeholders_work_the_same_way() {
        let query = Prepared::new(
            "UPDATE t SET e = ?4 WHERE a = ?1 AND b = ?2",
            vec![
                Param::Text("ten"),
                Param::Text("res"),
                Param::Text("own"),
                Param::BigInt(5),
            ],
        );
        let shown = diesel::debug_query::<Sqlite, _>(&query).to_string();
        assert_eq!(
            shown,
            r#"UPDATE t SET e = ? WHERE a = ? AND b = ? -- binds: [5, "ten", "res"]"#
        );
    }
}
