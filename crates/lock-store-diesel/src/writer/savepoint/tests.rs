//! A job's savepoint keeps what a job did or undoes it alone; a savepoint that cannot be undone
//! stops the transaction's later jobs and is reported for the whole transaction.

use std::cell::Cell;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::result::Error;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};

use super::{begin, in_savepoint, take_spoiled};

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    x: i64,
}

fn connection() -> SqliteConnection {
    let mut conn = SqliteConnection::establish(":memory:").unwrap();
    conn.batch_execute("CREATE TABLE t (x INTEGER NOT NULL)")
        .unwrap();
    conn
}

/// Begins a transaction as the writer does: diesel counts it.
fn begin_transaction(conn: &mut SqliteConnection) {
    begin();
    AnsiTransactionManager::begin_transaction_sql(conn, "BEGIN IMMEDIATE").unwrap();
}

fn insert(conn: &mut SqliteConnection, x: i64) -> Result<(), Error> {
    diesel::sql_query(format!("INSERT INTO t (x) VALUES ({x})"))
        .execute(conn)
        .map(drop)
}

fn rows(conn: &mut SqliteConnection) -> Vec<i64> {
    diesel::sql_query("SELECT x FROM t ORDER BY x")
        .load::<Row>(conn)
        .unwrap()
        .into_iter()
        .map(|row| row.x)
        .collect()
}

#[test]
fn a_job_that_fails_is_undone_alone() {
    let mut conn = connection();
    begin_transaction(&mut conn);
    in_savepoint(&mut conn, |c| insert(c, 1)).unwrap();
    let failed = in_savepoint(&mut conn, |c| {
        insert(c, 2)?;
        Err::<(), _>(Error::RollbackTransaction)
    });
    assert!(
        matches!(failed, Err(Error::RollbackTransaction)),
        "the job's own error"
    );
    in_savepoint(&mut conn, |c| insert(c, 3)).unwrap();
    assert!(take_spoiled().is_none());
    AnsiTransactionManager::commit_transaction(&mut conn).unwrap();
    assert_eq!(rows(&mut conn), vec![1, 3]);
}

#[test]
fn a_savepoint_that_cannot_be_undone_stops_the_transaction() {
    let mut conn = connection();
    begin_transaction(&mut conn);
    in_savepoint(&mut conn, |c| insert(c, 1)).unwrap();
    // The job's savepoint is gone when the job fails: it cannot be rolled back to.
    let failed = in_savepoint(&mut conn, |c| {
        insert(c, 2)?;
        c.batch_execute("RELEASE lockd_job")?;
        Err::<(), _>(Error::RollbackTransaction)
    });
    assert!(failed.is_err());
    let ran = Cell::new(false);
    let later = in_savepoint(&mut conn, |c| {
        ran.set(true);
        insert(c, 3)
    });
    assert!(matches!(later, Err(Error::BrokenTransactionManager)));
    assert!(!ran.get(), "no job runs in a spoiled transaction");
    let spoiled = take_spoiled().expect("spoiled");
    assert!(
        spoiled.to_string().contains("no such savepoint"),
        "{spoiled}"
    );
    AnsiTransactionManager::rollback_transaction(&mut conn).unwrap();

    // The next transaction starts clean.
    begin_transaction(&mut conn);
    in_savepoint(&mut conn, |c| insert(c, 4)).unwrap();
    assert!(take_spoiled().is_none());
    AnsiTransactionManager::commit_transaction(&mut conn).unwrap();
    assert_eq!(rows(&mut conn), vec![4]);
}

#[test]
fn a_job_that_leaves_a_transaction_of_its_own_open_spoils_the_transaction() {
    let mut conn = connection();
    begin_transaction(&mut conn);
    // A nested transaction begun and never ended: diesel would take the batch's COMMIT for its
    // end.
    in_savepoint(&mut conn, |c| {
        AnsiTransactionManager::begin_transaction(c)?;
        insert(c, 1)
    })
    .unwrap();
    let later = in_savepoint(&mut conn, |c| insert(c, 2));
    assert!(matches!(later, Err(Error::BrokenTransactionManager)));
    assert!(take_spoiled().is_some());
}
