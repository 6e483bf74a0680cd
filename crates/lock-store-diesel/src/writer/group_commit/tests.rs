//! The history a job's statements recorded, and the session notes it wrote, live and die with the
//! job's savepoint and with the batch's transaction; the undo of a grant nobody heard of is a
//! hint to the process's own waiters.

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
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

/// A writer recording history over a new database in `dir`, and the database's path.
fn writer_in(dir: &tempfile::TempDir) -> (GroupCommitWriter, String) {
    let path = dir.path().join("locks.db");
    let path = path.to_str().unwrap().to_owned();
    let mut db = DbConnection::Sqlite(SqliteConnection::establish(&path).unwrap());
    crate::migrations::run(&mut db, Duration::from_secs(5)).unwrap();
    let DbConnection::Sqlite(conn) = db else {
        unreachable!()
    };
    let writer = GroupCommitWriter::spawn(conn, Arc::new(SystemClock), 64, true, None).unwrap();
    (writer, path)
}

/// The rows `sql` reads from the database at `path`, through a connection of its own.
fn read_back<R>(path: &str, sql: &str) -> Vec<R>
where
    R: QueryableByName<diesel::sqlite::Sqlite> + 'static,
{
    let mut reader = SqliteConnection::establish(path).unwrap();
    diesel::sql_query(sql).load::<R>(&mut reader).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_rolled_back_takes_its_records_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = writer_in(&dir);

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

    let written: Vec<String> = read_back::<Records>(
        &path,
        "SELECT records FROM history_batches ORDER BY first_id",
    )
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
    let (writer, _) = writer_in(&dir);

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

#[derive(QueryableByName)]
struct Resource {
    #[diesel(sql_type = diesel::sql_types::Text)]
    resource: String,
}

/// A job whose savepoint cannot be rolled back (`writer::savepoint`) fails its whole batch: the
/// other jobs of the batch are answered with the batch's failure and none of them is committed;
/// the next batch runs as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_savepoint_that_cannot_be_undone_fails_its_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = writer_in(&dir);
    let writer = Arc::new(writer);
    let (started, writer_busy) = std::sync::mpsc::channel();
    let (go, wait_for_go) = std::sync::mpsc::channel::<()>();
    let first = tokio::spawn({
        let writer = Arc::clone(&writer);
        async move {
            writer
                .submit(move |c, now_ms| {
                    started.send(()).unwrap();
                    wait_for_go.recv().unwrap();
                    insert(c, "first", now_ms)
                })
                .await
        }
    });
    tokio::task::spawn_blocking(move || writer_busy.recv().unwrap())
        .await
        .unwrap();

    // Both are queued while the writer runs the first batch, so they share the next one.
    let spoiling = writer.submit(|c, now_ms| -> Result<(), RepositoryError> {
        insert(c, "spoiling", now_ms)?;
        c.batch_execute("RELEASE lockd_job")
            .map_err(crate::error::from_query)?;
        Err(RepositoryError::internal("fails with its savepoint gone"))
    });
    let bystander = writer.submit(|c, now_ms| insert(c, "bystander", now_ms));
    let (spoiling, bystander, ()) = tokio::join!(spoiling, bystander, async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        go.send(()).unwrap();
    });
    first.await.unwrap().unwrap();
    assert!(spoiling.is_err());
    let failure = format!("{:?}", bystander.expect_err("the whole batch failed"));
    assert!(failure.contains("no such savepoint"), "{failure}");
    writer
        .submit(|c, now_ms| insert(c, "after", now_ms))
        .await
        .unwrap();

    let committed: Vec<String> = read_back::<Resource>(
        &path,
        "SELECT resource FROM distributed_locks ORDER BY resource",
    )
    .into_iter()
    .map(|row| row.resource)
    .collect();
    assert_eq!(committed, vec!["after".to_owned(), "first".to_owned()]);
}

/// A grant whose caller went away while its batch ran is undone right after the batch, and the
/// undo is a hint to this process's own subscription (no request of it reports that lease's
/// end): a waiter here looks at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undo_of_a_grant_nobody_heard_of_is_a_hint_here() {
    use lock_domain::{Freed, FreedLocks};

    let dir = tempfile::tempdir().unwrap();
    let (writer, _path) = writer_in(&dir);
    let mut hints = writer.subscribe_foreign().expect("the writer is there");
    hints.wanted(true);
    // The first answer after hints are wanted is a hint in itself.
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), hints.next()).await,
        Ok(Some(Freed::Unknown))
    );

    let (undone_tx, undone_rx) = std::sync::mpsc::channel();
    // The caller gives up while its job runs: the job commits, nobody hears of it, it is undone.
    let gone = tokio::time::timeout(
        Duration::from_millis(50),
        writer.submit_undoable(
            |conn, now_ms| {
                std::thread::sleep(Duration::from_millis(300));
                insert(conn, "r", now_ms)
            },
            move |_, _, ()| {
                undone_tx.send(()).unwrap();
                true
            },
        ),
    )
    .await;
    assert!(gone.is_err(), "the caller gave up before its batch ended");
    undone_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the unheard grant was undone");
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), hints.next()).await,
        Ok(Some(Freed::Unknown)),
        "the undo is a hint to this process"
    );
}
