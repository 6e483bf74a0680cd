//! The sessions' rows that the SQLite writer read in transactions that committed, kept while no
//! other connection has written the database since, so that an acquire under a session (a
//! worker's lock, taken once a job) does not read the same session's row again each time.
//!
//! Why a kept row is never out of date:
//! - Every transaction of the writer begins by taking the write lock and then reading SQLite's
//!   `PRAGMA data_version`, which changes when any other connection (of this process or another
//!   on the same file) has committed since the last read ([`begin`]). When it changed, nothing
//!   kept is kept any more. While the writer holds the lock, nobody else commits.
//! - Every write of a session's row by the writer itself (open, keepalive, close, force, sweep)
//!   forgets that row first ([`forget`]), whether or not the write then holds.
//! - Only a commit keeps a row: a row read by a transaction that did not commit may show what
//!   that transaction wrote, so it is forgotten with it, and so are the rows read by a job that
//!   was rolled back to its savepoint ([`rewind`]).
//!
//! The writer thread owns the rows ([`install`]); on any other thread nothing is kept and every
//! read goes to the database.

use std::cell::RefCell;
use std::collections::HashMap;

use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use crate::sessions::SessionRow;

/// The most rows kept; past it the set starts again empty.
const MAX_KEPT: usize = 65_536;

thread_local! {
    static READ: RefCell<Option<ReadSessions>> = const { RefCell::new(None) };
}

#[derive(Default)]
struct ReadSessions {
    /// `PRAGMA data_version` when the rows were checked last; `None` before the first check or
    /// after a failed one.
    data_version: Option<i64>,
    /// Rows read by transactions that committed, by [`key`].
    committed: HashMap<String, SessionRow>,
    /// Rows read by the transaction under way.
    pending: HashMap<String, SessionRow>,
}

#[derive(QueryableByName)]
struct DataVersion {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    data_version: i64,
}

/// Makes the calling thread (the writer's) keep the rows its committed transactions read.
pub(crate) fn install() {
    READ.with(|read| *read.borrow_mut() = Some(ReadSessions::default()));
}

/// A transaction began on `conn`, holding the write lock: nothing of an earlier one that did
/// not commit is kept, and nothing at all when another connection committed since the last
/// check (or the check fails).
pub(crate) fn begin(conn: &mut SqliteConnection) {
    with_installed(|read| {
        read.pending.clear();
        let now = diesel::sql_query("PRAGMA data_version")
            .get_result::<DataVersion>(conn)
            .ok()
            .map(|row| row.data_version);
        if now.is_none() || now != read.data_version {
            read.committed.clear();
        }
        read.data_version = now;
    });
}

/// The row of session `id` (of `tenant`, as stored) as committed, if kept.
pub(crate) fn get(tenant: &str, id: &str) -> Option<SessionRow> {
    with_kept(tenant, id, SessionRow::clone)
}

/// Whether session `id` (of `tenant`, as stored) is live at `now_ms` by its row as committed,
/// if that row is kept: what a statement reading the row in this transaction would find.
pub(crate) fn lives(tenant: &str, id: &str, now_ms: i64) -> Option<bool> {
    with_kept(tenant, id, |row| row.lives_at(now_ms))
}

/// `f` of session `id`'s row as kept (the transaction's own reads first), if it is.
fn with_kept<T>(tenant: &str, id: &str, f: impl FnOnce(&SessionRow) -> T) -> Option<T> {
    READ.with(|read| {
        let read = read.borrow();
        let read = read.as_ref()?;
        let key = key(tenant, id);
        read.pending
            .get(&key)
            .or_else(|| read.committed.get(&key))
            .map(f)
    })
}

/// The transaction under way read `row` as session `id`'s row.
pub(crate) fn read(tenant: &str, id: &str, row: &SessionRow) {
    with_installed(|read| {
        read.pending.insert(key(tenant, id), row.clone());
    });
}

/// The transaction under way writes session `id`'s row: no copy of it is kept.
pub(crate) fn forget(tenant: &str, id: &str) {
    with_installed(|read| {
        let key = key(tenant, id);
        read.pending.remove(&key);
        read.committed.remove(&key);
    });
}

/// A job was rolled back to its savepoint: what the transaction read is forgotten (what the
/// job read may show what it wrote).
pub(crate) fn rewind() {
    with_installed(|read| read.pending.clear());
}

/// The transaction committed: the rows it read are kept.
pub(crate) fn committed() {
    with_installed(|read| {
        if read.committed.len() + read.pending.len() > MAX_KEPT {
            read.committed.clear();
        }
        read.committed.extend(read.pending.drain());
    });
}

fn key(tenant: &str, id: &str) -> String {
    super::kept_key(&[tenant, id])
}

fn with_installed(change: impl FnOnce(&mut ReadSessions)) {
    READ.with(|read| {
        if let Some(read) = read.borrow_mut().as_mut() {
            change(read);
        }
    });
}

#[cfg(test)]
mod tests;
