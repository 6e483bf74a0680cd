//! A raw SQL statement that diesel may keep prepared on its connection.
//!
//! diesel's `sql_query` marks every raw statement as unsafe to cache, so the database parses and
//! plans it again on every request. The lock statements are fixed texts with numbered
//! placeholders (`$n` on PostgreSQL, `?n` on SQLite), which is exactly what a prepared-statement
//! cache keys on: this type pushes the same text and binds without that mark, and diesel
//! prepares each statement once per connection. PostgreSQL statements may also take arrays
//! (`postgres::writes::WRITE_BATCH`). A statement written once for both backends
//! ([`Prepared::portable`]) uses `$n` on both.

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

/// `sql` with its `$1`, `$2`, … placeholders bound to `params[0]`, `params[1]`, ….
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    sql: &'static str,
    params: Vec<Param<'a>>,
    /// Written with `$n` placeholders for both backends, SQLite included.
    portable: bool,
}

impl<'a> Prepared<'a> {
    /// `sql` with `$n` placeholders on PostgreSQL, `?n` on SQLite.
    pub(crate) fn new(sql: &'static str, params: Vec<Param<'a>>) -> Self {
        Self {
            sql,
            params,
            portable: false,
        }
    }

    /// `sql` written once for both backends, with `$n` placeholders on both.
    pub(crate) fn portable(sql: &'static str, params: Vec<Param<'a>>) -> Self {
        Self {
            sql,
            params,
            portable: true,
        }
    }
}

impl QueryId for Prepared<'_> {
    type QueryId = ();
    // Keyed by its SQL text and bind types instead.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Prepared<'_> {
    type SqlType = Untyped;
}

impl<Conn> RunQueryDsl<Conn> for Prepared<'_> {}

impl<'a> Prepared<'a> {
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

impl QueryFragment<Pg> for Prepared<'_> {
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

impl QueryFragment<Sqlite> for Prepared<'_> {
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
