//! A raw SQL statement that diesel may keep prepared on its connection.
//!
//! diesel's `sql_query` marks every raw statement as unsafe to cache, so PostgreSQL parses and
//! plans it again on every request. The lock statements are fixed texts with `$n` placeholders,
//! which is exactly what a prepared-statement cache keys on: this type pushes the same text and
//! binds without that mark, and diesel prepares each statement once per connection.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Text, Untyped};
use diesel::{QueryResult, RunQueryDsl};

/// One bound value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Text(&'a str),
    BigInt(i64),
}

/// `sql` with its `$1`, `$2`, … placeholders bound to `params[0]`, `params[1]`, ….
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    sql: &'static str,
    params: Vec<Param<'a>>,
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(sql: &'static str, params: Vec<Param<'a>>) -> Self {
        Self { sql, params }
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

impl QueryFragment<Pg> for Prepared<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut rest = self.sql;
        // Every `$n` becomes a bind of params[n - 1], in the order the placeholders appear;
        // diesel writes the placeholders itself, numbered in that order.
        while let Some(dollar) = rest.find('$') {
            out.push_sql(&rest[..dollar]);
            let digits = rest[dollar + 1..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let index: usize = rest[dollar + 1..dollar + 1 + digits].parse().map_err(|_| {
                diesel::result::Error::QueryBuilderError("a `$` without a parameter number".into())
            })?;
            match self.params.get(index.wrapping_sub(1)) {
                Some(Param::Text(value)) => out.push_bind_param::<Text, str>(value)?,
                Some(Param::BigInt(value)) => out.push_bind_param::<BigInt, i64>(value)?,
                None => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("no value for ${index}").into(),
                    ))
                }
            }
            rest = &rest[dollar + 1 + digits..];
        }
        out.push_sql(rest);
        Ok(())
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
}
