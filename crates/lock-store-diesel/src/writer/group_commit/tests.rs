//! The history a job's statements recorded, and the session notes it wrote, live and die with the
//! job's savepoint and with the batch's transaction.

use std::sync::Arc;
use std::time::Duration;

use diesel::sqlite::SqliteConnection;
use diesel::{Connection, QueryableByName, RunQueryDsl};
use lock_domain::{RepositoryError, SystemClock};

use super::GroupCommitWriter;
use crate::db_connection::DbConnection;

#[derive(QueryableByName)]
struct Records {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    records: Vec<u8>,
}

fn insert(conn: &mut SqliteConnection, resource: &str, now_ms: i64) -> Result<(), RepositoryError> {
    diesel::sql_query(format!(
        "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, \
         fencing_token) VALUES ('t', '{resource}', 'o', {now_ms}, {}, \
         (SELECT last_token + 1 FROM fencing_counter))",
        now_ms + 60_000
    ))
    .execute(conn)
    .map(drop)
    .map_err(crate::error::from_query)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_rolled_back_takes_its_records_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locks.db");
    let path = path.to_str().unwrap().to_owned();
    let mut db = DbConnection::Sqlite(SqliteConnection::establish(&path).unwrap());
    crate::migrations::run(&mut db, Duration::from_secs(5)).unwrap();
    let DbConnection::Sqlite(conn) = db else {
        unreachable!()
    };
    let writer = GroupCommitWriter::spawn(conn, Arc::new(SystemClock), 64, true, None).unwrap();

    writer
        .submit(|c, now_ms| insert(c, "kept", now_ms))
        .await
        .unwrap();
    let failed = writer
        .submit(|c, now_ms| -> Result<(), RepositoryError> {
            insert(c, "rolled-back", now_ms)?;
            Err(RepositoryError::internal("fails after its write"))
        })
        .await;
    assert!(failed.is_err());
    writer
        .submit(|c, now_ms| insert(c, "kept-too", now_ms))
        .await
        .unwrap();

    let mut reader = SqliteConnection::establish(&path).unwrap();
    let written: Vec<String> =
        diesel::sql_query("SELECT records FROM history_batches ORDER BY first_id")
            .load::<Records>(&mut reader)
            .unwrap()
            .into_iter()
            .map(|row| crate::history::unpack(&row.records).expect("a packed batch"))
            .collect();
    assert_eq!(
        written,
        vec![
            r#"[["t","lock","kept","o",1,"granted",null,0]]"#.to_owned(),
            r#"[["t","lock","kept-too","o",2,"granted",null,0]]"#.to_owned(),
        ]
    );
}

/// The writer keeps a session's note only once a transaction that wrote it committed: the note
/// of a job rolled back to its savepoint is written again by the next job
/// (`writer::noted_holds`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_of_a_job_rolled_back_is_written_again() {
    use crate::writer::noted_holds::needs_note;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locks.db");
    let mut db = DbConnection::Sqlite(SqliteConnection::establish(path.to_str().unwrap()).unwrap());
    crate::migrations::run(&mut db, Duration::from_secs(5)).unwrap();
    let DbConnection::Sqlite(conn) = db else {
        unreachable!()
    };
    let writer = GroupCommitWriter::spawn(conn, Arc::new(SystemClock), 64, true, None).unwrap();

    let failed = writer
        .submit(|_, _| -> Result<(), RepositoryError> {
            assert!(needs_note("t", "s", "lock", "a"), "never noted");
            Err(RepositoryError::internal("fails after its note"))
        })
        .await;
    assert!(failed.is_err());
    let again = writer
        .submit(|_, _| Ok(needs_note("t", "s", "lock", "a")))
        .await
        .unwrap();
    assert!(again, "the rolled-back job's note is not taken as written");
    let after_commit = writer
        .submit(|_, _| Ok(needs_note("t", "s", "lock", "a")))
        .await
        .unwrap();
    assert!(!after_commit, "a committed note is not written again");
}
