//! The anchor for lockd on SQLite: the same acquire and release statements, sent in-process
//! through diesel to one WAL-mode connection, each in its own transaction (one commit, so one
//! fsync with `synchronous = FULL`, per statement) — what a careful program without group commit
//! gets from SQLite.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use lock_store_diesel::statements::{SQLITE_ACQUIRE, SQLITE_RELEASE};

use crate::workload::{LockClient, LockSystem};

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
        self.run(SQLITE_ACQUIRE, resource, true).await
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        self.run(SQLITE_RELEASE, resource, false).await
    }
}
