//! SQLite: keeping the WAL file's size bounded.
//!
//! A checkpoint copies the WAL's pages into the database file, but only those that no reader
//! still needs: while another process holds one read transaction open (a backup, the `sqlite3`
//! shell), every commit after it stays in the WAL, which grows for as long as it lasts. SQLite
//! then reuses the file from its start instead of shrinking it, so a WAL that grew to 2 GB once
//! stayed 2 GB. Three things bound it again once the reader has gone:
//! - `PRAGMA journal_size_limit` on every connection (`connection.rs`): when the writer starts
//!   the WAL over after a complete checkpoint, it truncates the file to the limit;
//! - the writer thread ([`WalLimit::keep`], at most once a [`CHECK_EVERY`], even when idle):
//!   when the file is over the limit, a PASSIVE checkpoint (which never waits) tells whether
//!   every page is in the database file, that is whether the reader has gone; if so, a TRUNCATE
//!   checkpoint empties the file, waiting at most [`TRUNCATE_WAIT`] for the short reads of the
//!   pool;
//! - the same TRUNCATE when the writer stops ([`WalLimit::finish`]), so a stopped lockd leaves
//!   an empty WAL behind.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::sql_types::Integer;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};

/// How often the writer looks at the WAL's size.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);
/// How long a TRUNCATE checkpoint waits for the readers in the WAL (and holds up the writes
/// meanwhile) before it gives up until the next check.
const TRUNCATE_WAIT: Duration = Duration::from_millis(100);

/// What `PRAGMA wal_checkpoint` answers.
#[derive(Debug, QueryableByName)]
struct Checkpoint {
    /// 1 when the checkpoint could not finish because another connection held a lock.
    #[diesel(sql_type = Integer)]
    busy: i32,
    /// Frames in the WAL.
    #[diesel(sql_type = Integer)]
    log: i32,
    /// Frames of it now in the database file.
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

/// The writer's watch over the WAL of its database.
pub(crate) struct WalLimit {
    /// The database's WAL file (its path and `-wal`).
    wal: PathBuf,
    /// Bytes the file may keep (`journal_size_limit`).
    limit: u64,
    /// The busy timeout of the writer's connection, set back after a TRUNCATE.
    busy_timeout: Duration,
    next_check: Instant,
}

impl WalLimit {
    /// Watches the WAL of the database at `database`, keeping it to `limit` bytes.
    pub(crate) fn new(database: &std::path::Path, limit: u64, busy_timeout: Duration) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        Self {
            wal: PathBuf::from(wal),
            limit,
            busy_timeout,
            next_check: Instant::now(),
        }
    }

    /// When the writer should look again, whether jobs come or not.
    pub(crate) fn next_check(&self) -> Instant {
        self.next_check
    }

    /// Between two transactions of the writer: empties the WAL when it is over the limit and
    /// nothing needs what it holds any more. Does nothing before [`Self::next_check`].
    pub(crate) fn keep(&mut self, conn: &mut SqliteConnection) {
        let now = Instant::now();
        if now < self.next_check {
            return;
        }
        self.next_check = now + CHECK_EVERY;
        let size = self.size();
        if size <= self.limit {
            return;
        }
        match checkpoint(conn, "PASSIVE") {
            Ok(done) if done.busy == 0 && done.log == done.checkpointed => {
                match self.truncate(conn) {
                    Ok(true) => tracing::info!(
                        wal_bytes_before = size,
                        wal_bytes = self.size(),
                        "the SQLite WAL grew past its limit while a reader held it; emptied"
                    ),
                    Ok(false) => {}
                    Err(error) => tracing::warn!(%error, "cannot checkpoint the SQLite WAL"),
                }
            }
            Ok(_) => tracing::debug!(
                wal_bytes = size,
                "the SQLite WAL is over its limit, and a reader still needs it"
            ),
            Err(error) => tracing::warn!(%error, "cannot checkpoint the SQLite WAL"),
        }
    }

    /// The writer stops: empties the WAL if no reader needs it.
    pub(crate) fn finish(&mut self, conn: &mut SqliteConnection) {
        if let Err(error) = self.truncate(conn) {
            tracing::warn!(%error, "cannot checkpoint the SQLite WAL on the way out");
        }
    }

    fn size(&self) -> u64 {
        std::fs::metadata(&self.wal).map_or(0, |m| m.len())
    }

    /// A TRUNCATE checkpoint that waits for the readers no longer than [`TRUNCATE_WAIT`]:
    /// whether it emptied the WAL.
    fn truncate(&self, conn: &mut SqliteConnection) -> QueryResult<bool> {
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}",
            TRUNCATE_WAIT.as_millis()
        ))?;
        let done = checkpoint(conn, "TRUNCATE");
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}",
            self.busy_timeout.as_millis()
        ))?;
        Ok(done?.busy == 0)
    }
}

fn checkpoint(conn: &mut SqliteConnection, mode: &str) -> QueryResult<Checkpoint> {
    diesel::sql_query(format!("PRAGMA wal_checkpoint({mode})")).get_result(conn)
}
