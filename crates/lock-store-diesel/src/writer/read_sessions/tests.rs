use diesel::{Connection, RunQueryDsl};

use super::*;

fn row(expires_at_ms: i64) -> SessionRow {
    SessionRow {
        id: "s".into(),
        owner: "worker".into(),
        ttl_ms: 10_000,
        lock_delay_ms: 0,
        created_at_ms: 1,
        expires_at_ms,
    }
}

/// Two connections to one new database file: the writer's, and another.
fn connections() -> (tempfile::TempDir, SqliteConnection, SqliteConnection) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = dir.path().join("db.sqlite").display().to_string();
    let mut writer = SqliteConnection::establish(&url).expect("the writer's connection");
    // As lockd opens its files.
    run(&mut writer, "PRAGMA journal_mode = WAL");
    run(&mut writer, "CREATE TABLE t (x INTEGER)");
    let other = SqliteConnection::establish(&url).expect("another connection");
    (dir, writer, other)
}

/// Begins the writer's transaction as the writer does: the write lock first.
fn start(writer: &mut SqliteConnection) {
    run(writer, "BEGIN IMMEDIATE");
    begin(writer);
}

fn commit(writer: &mut SqliteConnection) {
    run(writer, "COMMIT");
    committed();
}

/// The transaction does not commit (as when its COMMIT fails).
fn roll_back(writer: &mut SqliteConnection) {
    run(writer, "ROLLBACK");
}

fn run(conn: &mut SqliteConnection, sql: &str) {
    diesel::sql_query(sql).execute(conn).expect(sql);
}

fn on_a_writer_thread(test: impl FnOnce() + Send + 'static) {
    crate::writer::on_a_writer_thread(install, test);
}

fn expires(tenant: &str, id: &str) -> Option<i64> {
    get(tenant, id).map(|row| row.expires_at_ms)
}

#[test]
fn a_row_read_by_a_committed_transaction_is_kept_until_another_connection_commits() {
    on_a_writer_thread(|| {
        let (_dir, mut writer, mut other) = connections();
        start(&mut writer);
        read("t", "s", &row(5));
        assert_eq!(
            expires("t", "s"),
            Some(5),
            "read by the transaction under way"
        );
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), Some(5));
        assert_eq!(expires("t", "s2"), None, "another session");
        assert_eq!(expires("u", "s"), None, "another tenant");
        // The writer's own commits change nothing.
        run(&mut writer, "INSERT INTO t VALUES (1)");
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), Some(5));
        commit(&mut writer);
        run(&mut other, "INSERT INTO t VALUES (2)");
        start(&mut writer);
        assert_eq!(expires("t", "s"), None, "another connection committed");
        commit(&mut writer);
    });
}

#[test]
fn rows_of_a_transaction_that_did_not_commit_are_forgotten() {
    on_a_writer_thread(|| {
        let (_dir, mut writer, _other) = connections();
        start(&mut writer);
        read("t", "s", &row(5));
        roll_back(&mut writer);
        start(&mut writer);
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), None);
    });
}

#[test]
fn rows_read_before_a_job_was_rolled_back_are_forgotten() {
    on_a_writer_thread(|| {
        let (_dir, mut writer, _other) = connections();
        start(&mut writer);
        read("t", "s", &row(5));
        rewind();
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), None);
    });
}

#[test]
fn a_row_the_writer_writes_is_forgotten_even_when_committed() {
    on_a_writer_thread(|| {
        let (_dir, mut writer, _other) = connections();
        start(&mut writer);
        read("t", "s", &row(5));
        read("t", "other", &row(6));
        commit(&mut writer);
        start(&mut writer);
        forget("t", "s");
        assert_eq!(expires("t", "s"), None, "forgotten at once");
        // A transaction that does not commit does not bring it back.
        roll_back(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), None);
        assert_eq!(expires("t", "other"), Some(6));
        // Read, then written, in one transaction: nothing is kept.
        read("t", "s", &row(7));
        forget("t", "s");
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), None, "written after it was read");
    });
}

#[test]
fn keys_do_not_run_into_each_other() {
    on_a_writer_thread(|| {
        let (_dir, mut writer, _other) = connections();
        start(&mut writer);
        read("t1", "s", &row(5));
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "1s"), None);
    });
}

#[test]
fn a_thread_without_the_rows_reads_every_time() {
    std::thread::spawn(|| {
        let (_dir, mut writer, _other) = connections();
        start(&mut writer);
        read("t", "s", &row(5));
        commit(&mut writer);
        start(&mut writer);
        assert_eq!(expires("t", "s"), None);
    })
    .join()
    .expect("the test thread");
}
