//! SQLite: hints that a lock may have been freed by another process on the same file.
//!
//! SQLite has no notifications between processes, but each connection can tell whether any
//! *other* connection has committed since it last looked: `PRAGMA data_version` changes then,
//! and only then (a connection's own commits leave it as it was). The connection that asks is
//! the group-commit writer's: it is the only one of this process that writes, so a change it
//! sees is a commit of another process (or, rarely, a checkpoint that started the WAL over),
//! never one of this process's own. Releases made here wake their waiters directly; this is for
//! the others.
//!
//! While a subscription is open, the writer thread asks at most every [`PROBE_PERIOD`], between
//! two of its transactions (so never inside one), and also when it has nothing else to do. Each
//! change it sees becomes one [`Freed::Unknown`] for each subscriber: the name of what was
//! freed is not known, so the subscriber looks at every lock it waits for, in one read. Changes
//! seen faster than the subscriber takes them are merged into one. With no subscription, the
//! writer does not ask at all.
//!
//! What it costs: one `PRAGMA data_version` (a few microseconds) every 5 ms on the writer
//! thread, from the first waiting acquire of the process on. What it gives: a waiter here hears
//! of a release made by another process within about 5 ms, where it polled every 200 ms before.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use diesel::sql_types::BigInt;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};
use lock_domain::{Freed, FreedLocks};
use tokio::sync::watch;

/// How often the writer asks whether another process has committed, while anyone listens.
pub(crate) const PROBE_PERIOD: Duration = Duration::from_millis(5);

/// What `PRAGMA data_version` answers.
#[derive(QueryableByName)]
struct DataVersion {
    #[diesel(sql_type = BigInt)]
    data_version: i64,
}

/// The writer thread's side: it asks, and tells the subscribers when the answer changed.
pub(crate) struct ForeignCommits {
    /// Counts the changes seen; subscribers wait for it to move.
    seen: Arc<watch::Sender<u64>>,
    /// The last answer, `None` before the first one.
    version: Option<i64>,
    /// How many subscriptions were open at the last question.
    listeners: usize,
    next_probe: Instant,
}

/// Where subscriptions to a writer's [`ForeignCommits`] are opened. Holds no sender of its own:
/// once the writer thread has ended, no subscription can be opened, and the open ones end.
#[derive(Clone)]
pub(crate) struct CommitHints {
    seen: Weak<watch::Sender<u64>>,
}

impl ForeignCommits {
    /// A watch for the writer thread, and where to subscribe to it.
    pub(crate) fn new() -> (Self, CommitHints) {
        let (seen, _) = watch::channel(0);
        let seen = Arc::new(seen);
        let hints = CommitHints {
            seen: Arc::downgrade(&seen),
        };
        (
            Self {
                seen,
                version: None,
                listeners: 0,
                next_probe: Instant::now(),
            },
            hints,
        )
    }

    /// When the writer should ask next, whether jobs come or not: `None` while nobody listens.
    pub(crate) fn next_probe(&self) -> Option<Instant> {
        (self.seen.receiver_count() > 0).then_some(self.next_probe)
    }

    /// Between two transactions of the writer: asks, if anyone listens and it is time, and tells
    /// the subscribers when the answer changed, or when someone subscribed since the last
    /// question (a commit between its subscribing and this question would otherwise go
    /// unheard). A failed question counts as a change too: a hint too many only costs a look.
    pub(crate) fn probe(&mut self, conn: &mut SqliteConnection) {
        let listeners = self.seen.receiver_count();
        let joined = listeners > self.listeners;
        self.listeners = listeners;
        if listeners == 0 {
            return;
        }
        let now = Instant::now();
        if now < self.next_probe && !joined {
            return;
        }
        self.next_probe = now + PROBE_PERIOD;
        let answer = diesel::sql_query("PRAGMA data_version")
            .get_result::<DataVersion>(conn)
            .map(|row| row.data_version);
        let changed = match answer {
            Ok(version) => self.version.replace(version) != Some(version),
            Err(_) => true,
        };
        if changed || joined {
            self.seen
                .send_modify(|count| *count = count.wrapping_add(1));
        }
    }
}

impl CommitHints {
    /// A subscription to the commits of other processes, or `None` once the writer has ended.
    pub(crate) fn subscribe(&self) -> Option<SqliteFreedLocks> {
        let seen = self.seen.upgrade()?;
        let changes = seen.subscribe();
        Some(SqliteFreedLocks { changes })
    }
}

/// A live subscription: a [`Freed::Unknown`] after each commit of another process.
pub(crate) struct SqliteFreedLocks {
    changes: watch::Receiver<u64>,
}

#[async_trait]
impl FreedLocks for SqliteFreedLocks {
    /// Ends (`None`) when the writer thread has ended.
    async fn next(&mut self) -> Option<Freed> {
        self.changes.changed().await.ok()?;
        Some(Freed::Unknown)
    }
}
