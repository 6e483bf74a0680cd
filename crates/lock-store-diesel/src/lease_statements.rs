//! What every table of leases beside the locks' rows (semaphore holders, shared holders) runs
//! the same way: drawing a fencing token from the one counter of every grant, reading
//! PostgreSQL's clock, and deleting ended leases for the sweeper.

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};

use crate::prepared::{portable_statement, Param, Prepared};
use crate::row::CountRow;

/// SQLite: the one counter of every fencing token, moved inside the writer's transaction.
const SQLITE_NEXT_TOKEN: &str =
    "UPDATE fencing_counter SET last_token = last_token + 1 WHERE id = 1 RETURNING last_token AS count";

/// PostgreSQL: the sequence every lock grant draws from too.
const POSTGRES_NEXT_TOKEN: &str = "SELECT nextval('fencing_tokens') AS count";

/// PostgreSQL: the server's clock, read when the statement runs (after the locks taken before),
/// kept for the rest of the transaction in `lockd.now`: the clock the history's triggers decide
/// with whether a lease a later statement deletes had ended (migration 13).
const POSTGRES_NOW: &str = concat!(
    "SELECT set_config('lockd.now', (",
    clock_ms!(),
    ")::text, true)::BIGINT AS count"
);

/// PostgreSQL: keeps `$1` as the transaction's clock for the history's triggers (see
/// [`POSTGRES_NOW`]).
const POSTGRES_KEEP_NOW: &str = "SELECT set_config('lockd.now', $1, true)::BIGINT AS count";

/// The one count a statement returns.
pub(crate) fn one(rows: Vec<CountRow>) -> QueryResult<i64> {
    rows.first()
        .map(|row| row.count)
        .ok_or(diesel::result::Error::NotFound)
}

/// SQLite: a fencing token larger than every one issued before.
pub(crate) fn next_token_sqlite(conn: &mut SqliteConnection) -> QueryResult<i64> {
    one(portable_statement!(SQLITE_NEXT_TOKEN, vec![]).load(conn)?)
}

/// PostgreSQL: a fencing token larger than every one issued before.
pub(crate) fn next_token_postgres(conn: &mut PgConnection) -> QueryResult<i64> {
    one(portable_statement!(POSTGRES_NEXT_TOKEN, vec![]).load(conn)?)
}

/// PostgreSQL: the server's clock now, in Unix milliseconds.
pub(crate) fn now_postgres(conn: &mut PgConnection) -> QueryResult<i64> {
    one(portable_statement!(POSTGRES_NOW, vec![]).load(conn)?)
}

/// PostgreSQL: keeps `now_ms`, read by a statement of this transaction, as its clock for the
/// history's triggers.
pub(crate) fn keep_now_postgres(conn: &mut PgConnection, now_ms: i64) -> QueryResult<()> {
    let now = now_ms.to_string();
    one(portable_statement!(POSTGRES_KEEP_NOW, vec![Param::Text(&now)]).load(conn)?).map(drop)
}

/// Runs the sweep statement `sweep` (`$1`: the cutoff, `$2`: the batch) on SQLite: deletes up to
/// `batch` leases that ended at or before `cutoff_ms`.
pub(crate) fn sweep_sqlite(
    conn: &mut SqliteConnection,
    sweep: &'static str,
    cutoff_ms: i64,
    batch: i64,
) -> QueryResult<usize> {
    Prepared::portable(sweep, vec![Param::BigInt(cutoff_ms), Param::BigInt(batch)]).execute(conn)
}

/// [`sweep_sqlite`] on PostgreSQL, against the server's clock less `grace_ms`.
pub(crate) fn sweep_postgres(
    conn: &mut PgConnection,
    sweep: &'static str,
    grace_ms: i64,
    batch: i64,
) -> QueryResult<usize> {
    let cutoff_ms = now_postgres(conn)? - grace_ms;
    Prepared::portable(sweep, vec![Param::BigInt(cutoff_ms), Param::BigInt(batch)]).execute(conn)
}
