//! SQLite: where the records committed since a time start, found through the primary key alone.
//!
//! A batch's `at_ms` never decreases with its ids (the writer clamps it to the last batch's,
//! migration 15), so the batches committed at or after a time are those from one first id on,
//! and a binary search over the ids finds it: about one lookup of the primary key per bit of
//! the number of ids kept, where an index on `at_ms` would cost a page written with every
//! commit.

use diesel::sql_types::BigInt;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};

use super::{Backend, LAST_ID, OLDEST};
use crate::prepared::{portable_statement, Param};

/// The batch holding id `$1` (ids are dense: the last batch starting at or below it).
const BATCH_AT: &str = "\
SELECT first_id, last_id, at_ms FROM history_batches WHERE first_id <= $1
ORDER BY first_id DESC LIMIT 1";

#[derive(QueryableByName)]
struct BatchSpan {
    #[diesel(sql_type = BigInt)]
    first_id: i64,
    #[diesel(sql_type = BigInt)]
    last_id: i64,
    #[diesel(sql_type = BigInt)]
    at_ms: i64,
}

/// The first id of the oldest batch committed at or after `since_ms`, or the next id to be
/// drawn when there is none. Outside a transaction a prune may delete the oldest batches
/// meanwhile: an id it finds no batch for counts as before `since_ms`.
pub(super) fn first_since(conn: &mut SqliteConnection, since_ms: i64) -> QueryResult<i64> {
    let next = Backend::Sqlite(&mut *conn).scalar(LAST_ID, vec![])? + 1;
    let mut low = Backend::Sqlite(&mut *conn).scalar(OLDEST, vec![])?;
    // The answer is in [low, high]; `high` is `next` until a batch is found late enough.
    let mut high = next;
    while low < high {
        let middle = low + (high - low) / 2;
        let batch = portable_statement!(BATCH_AT, vec![Param::BigInt(middle)])
            .load::<BatchSpan>(conn)?
            .pop();
        match batch {
            Some(batch) if batch.at_ms >= since_ms => high = batch.first_id.min(middle),
            Some(batch) => low = batch.last_id.max(middle) + 1,
            None => low = middle + 1,
        }
    }
    Ok(low)
}
