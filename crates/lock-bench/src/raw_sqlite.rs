//! The raw SQLite ceiling: what a careful program without group commit gets from SQLite. It is a
//! load generator, not lockd: this benchmark's own minimal compare-and-set statements, of the same
//! shape as lockd's (one statement per acquire and per release on lockd's table
//! `distributed_locks`, as lockd's migrations create it, with its index and triggers; the acquire
//! draws the fencing token from lockd's `fencing_counter` in the same statement), sent in-process
//! through diesel to one WAL-mode connection, each in its own transaction: one commit, so one
//! fsync with `synchronous = FULL`, per statement. lockd's own statements stay private to its
//! store; these are simpler (no re-grant that keeps the token, no undo mark) and answer only
//! "done" or "not done", which is all the workloads ask.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};

use crate::workload::{LockClient, LockSystem};

/// Takes the lock when it is free, when its lease has ended, or when it is the caller's own, with
/// the next fencing token (lockd's triggers move the counter). No row when another owner's lease
/// is live. Binds: tenant, resource, owner, now (epoch ms), expiry (epoch ms).
const ACQUIRE: &str = "\
INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
VALUES (?1, ?2, ?3, ?4, ?5, (SELECT last_token + 1 FROM fencing_counter WHERE id = 1))
ON CONFLICT (tenant, resource) DO UPDATE SET
    owner = excluded.owner,
    acquired_at_ms = excluded.acquired_at_ms,
    expires_at_ms = excluded.expires_at_ms,
    fencing_token = excluded.fencing_token
WHERE distributed_locks.expires_at_ms <= excluded.acquired_at_ms
   OR distributed_locks.owner = excluded.owner
RETURNING fencing_token";

/// Deletes the caller's live lock. Binds: tenant, resource, owner, now (epoch ms).
const RELEASE: &str = "\
DELETE FROM distributed_locks
WHERE tenant = ?1 AND resource = ?2 AND owner = ?3 AND expires_at_ms > ?4
RETURNING fencing_token";

pub struct RawSqliteSystem {
    conn: Arc<Mutex<SqliteConnection>>,
}

impl RawSqliteSystem {
    /// Opens `path`, which lockd has already created and migrated, with `synchronous`
    /// (`FULL` or `NORMAL`).
    pub fn open(path: &Path, synchronous: &str) -> io::Result<Self> {
        let mut conn =
            SqliteConnection::establish(&path.to_string_lossy()).map_err(io::Error::other)?;
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous};"
        ))
        .map_err(io::Error::other)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }
}

pub struct RawSqliteClient {
    conn: Arc<Mutex<SqliteConnection>>,
    owner: String,
}

impl LockSystem for RawSqliteSystem {
    type Client = RawSqliteClient;

    async fn connect(&self, client: usize) -> io::Result<RawSqliteClient> {
        Ok(RawSqliteClient {
            conn: Arc::clone(&self.conn),
            owner: format!("bench-{client}"),
        })
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl RawSqliteClient {
    async fn run(&self, sql: &'static str, resource: &str, acquire: bool) -> io::Result<bool> {
        let (conn, resource, owner) = (
            Arc::clone(&self.conn),
            resource.to_owned(),
            self.owner.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().map_err(|_| io::Error::other("poisoned"))?;
            let now = now_ms();
            let query = diesel::sql_query(sql)
                .bind::<Text, _>("default")
                .bind::<Text, _>(resource)
                .bind::<Text, _>(owner)
                .bind::<BigInt, _>(now);
            let changed = if acquire {
                query.bind::<BigInt, _>(now + 30_000).execute(&mut *conn)
            } else {
                query.execute(&mut *conn)
            };
            changed.map(|rows| rows == 1).map_err(io::Error::other)
        })
        .await
        .map_err(io::Error::other)?
    }
}

impl LockClient for RawSqliteClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        self.run(ACQUIRE, resource, true).await
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        self.run(RELEASE, resource, false).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockd_schema::migrations;

    /// On lockd's schema, the statements take a free lock, refuse another owner's, release only
    /// the owner's, and draw a new fencing token from lockd's counter for each grant.
    #[test]
    fn the_statements_are_a_compare_and_set_on_lockds_schema() {
        let file =
            std::env::temp_dir().join(format!("lock-bench-raw-sqlite-{}.db", std::process::id()));
        let mut conn = SqliteConnection::establish(&file.to_string_lossy()).expect("open");
        for script in migrations("sqlite") {
            conn.batch_execute(&script).expect("migrate");
        }
        let system = RawSqliteSystem::open(&file, "FULL").expect("open");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let mut alice = system.connect(0).await.expect("connect");
            let mut bob = system.connect(1).await.expect("connect");
            assert!(alice.acquire("r").await.expect("acquire"));
            assert!(!bob.acquire("r").await.expect("acquire"), "alice holds it");
            assert!(!bob.release("r").await.expect("release"), "not bob's lock");
            assert!(alice.release("r").await.expect("release"));
            assert!(!alice.release("r").await.expect("release"), "released");
            assert!(bob.acquire("r").await.expect("acquire"));
        });
        #[derive(diesel::QueryableByName)]
        struct Counter {
            #[diesel(sql_type = BigInt)]
            last_token: i64,
        }
        let counter: Counter = diesel::sql_query("SELECT last_token FROM fencing_counter")
            .get_result(&mut conn)
            .expect("read the counter");
        assert_eq!(counter.last_token, 2, "one token per grant");
        drop((conn, system));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
    }
}
