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
//! The writer asks only while a subscriber wants hints (`FreedLocks::wanted`: its process has
//! waiting requests): then at most every [`PROBE_PERIOD`], between two of its transactions
//! (never inside one), and also when it has nothing else to do. A subscriber that comes to want
//! them wakes the writer, which asks at once if the period has passed. Nothing committed
//! while nobody asked is missed: the answer is compared with the last one, however old, and
//! the very first answer counts as a change. Each change seen becomes one [`Freed::Unknown`]:
//! what was freed is not known, so the subscriber looks at every lock it waits for, in one read.
//! Changes seen faster than the subscriber takes them are merged into one.
//!
//! One commit of this process's own is a hint too: the undo of grants whose callers had gone
//! before hearing of them (`group_commit`). No request of this process releases those leases,
//! so its waiters would otherwise learn of their end only at their next look of their own.
//!
//! What it costs: one `PRAGMA data_version` (kept prepared) and a wake-up of the writer thread
//! every 5 ms while this process has waiting requests; nothing otherwise. What it gives: a waiter
//! here hears of a release made by another process within about 5 ms, where it polled every
//! 200 ms before.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use diesel::sql_types::BigInt;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};
use lock_domain::{Freed, FreedLocks};
use tokio::sync::watch;

use crate::prepared::statement;

/// How often the writer asks whether another process has committed, while anyone waits for it.
pub(crate) const PROBE_PERIOD: Duration = Duration::from_millis(5);

const DATA_VERSION: &str = "PRAGMA data_version";

/// What `PRAGMA data_version` answers.
#[derive(QueryableByName)]
struct DataVersion {
    #[diesel(sql_type = BigInt)]
    data_version: i64,
}

/// Wakes the writer thread (when it is still there).
pub(crate) type WakeWriter = Arc<dyn Fn() + Send + Sync>;

/// How many subscriptions want hints now, shared by the writer and the subscriptions.
#[derive(Default)]
struct Interest {
    wanting: AtomicUsize,
}

/// The writer thread's side: it asks, and tells the subscribers when the answer changed.
pub(crate) struct ForeignCommits {
    /// Counts the changes seen; subscribers wait for it to move.
    seen: Arc<watch::Sender<u64>>,
    interest: Arc<Interest>,
    /// The last answer, `None` before the first one.
    version: Option<i64>,
    next_probe: Instant,
}

/// Where subscriptions to a writer's [`ForeignCommits`] are opened. Holds no sender of its own:
/// once the writer thread has ended, no subscription can be opened, and the open ones end.
#[derive(Clone)]
pub(crate) struct CommitHints {
    seen: Weak<watch::Sender<u64>>,
    interest: Arc<Interest>,
    wake: WakeWriter,
}

impl ForeignCommits {
    /// A watch for the writer thread, and where to subscribe to it; `wake` wakes the writer.
    pub(crate) fn new(wake: WakeWriter) -> (Self, CommitHints) {
        let (seen, _) = watch::channel(0);
        let seen = Arc::new(seen);
        let interest = Arc::new(Interest::default());
        let hints = CommitHints {
            seen: Arc::downgrade(&seen),
            interest: Arc::clone(&interest),
            wake,
        };
        (
            Self {
                seen,
                interest,
                version: None,
                next_probe: Instant::now(),
            },
            hints,
        )
    }

    /// When the writer should ask next, whether jobs come or not: `None` while nobody wants
    /// hints.
    pub(crate) fn next_probe(&self) -> Option<Instant> {
        (self.interest.wanting.load(Ordering::Acquire) > 0).then_some(self.next_probe)
    }

    /// Between two transactions of the writer: asks, if anyone wants hints and it is time,
    /// and tells the subscribers when the answer differs from the last one. The first answer
    /// counts as a change (a subscriber looked when it subscribed, but a commit may have come
    /// since), and so does a failed question: a hint too many only costs a look.
    pub(crate) fn probe(&mut self, conn: &mut SqliteConnection) {
        if self.interest.wanting.load(Ordering::Acquire) == 0 {
            return;
        }
        let now = Instant::now();
        if now < self.next_probe {
            return;
        }
        self.next_probe = now + PROBE_PERIOD;
        // Kept prepared on the writer's connection: parsed once, not at every question.
        let answer = statement!(DATA_VERSION, Vec::new())
            .get_result::<DataVersion>(conn)
            .map(|row| row.data_version);
        let changed = match answer {
            Ok(version) => self.version.replace(version) != Some(version),
            Err(_) => true,
        };
        if changed {
            self.seen
                .send_modify(|count| *count = count.wrapping_add(1));
        }
    }

    /// The writer undid grants nobody heard of: a hint to this process's subscribers, if any
    /// want hints (other processes see the commit as any other).
    pub(crate) fn undone_here(&self) {
        if self.interest.wanting.load(Ordering::Acquire) > 0 {
            self.seen
                .send_modify(|count| *count = count.wrapping_add(1));
        }
    }
}

impl CommitHints {
    /// A subscription to the commits of other processes, or `None` once the writer has ended.
    pub(crate) fn subscribe(&self) -> Option<SqliteFreedLocks> {
        let seen = self.seen.upgrade()?;
        Some(SqliteFreedLocks {
            changes: seen.subscribe(),
            hints: self.clone(),
            wanted: false,
        })
    }
}

/// A live subscription: a [`Freed::Unknown`] after each commit of another process.
pub(crate) struct SqliteFreedLocks {
    changes: watch::Receiver<u64>,
    hints: CommitHints,
    /// Whether this subscription counts in `Interest::wanting`.
    wanted: bool,
}

impl Drop for SqliteFreedLocks {
    fn drop(&mut self) {
        self.wanted(false);
    }
}

#[async_trait]
impl FreedLocks for SqliteFreedLocks {
    /// Ends (`None`) when the writer thread has ended.
    async fn next(&mut self) -> Option<Freed> {
        self.changes.changed().await.ok()?;
        Some(Freed::Unknown)
    }

    fn wanted(&mut self, wanted: bool) {
        if wanted == self.wanted {
            return;
        }
        self.wanted = wanted;
        let interest = &self.hints.interest;
        if wanted {
            if interest.wanting.fetch_add(1, Ordering::AcqRel) == 0 {
                // The writer may be asleep for up to a second, asking nothing.
                (self.hints.wake)();
            }
        } else {
            interest.wanting.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lock_domain::FreedLocks;

    use super::ForeignCommits;

    #[test]
    fn an_undo_of_unheard_grants_is_a_hint_when_hints_are_wanted() {
        let (writer, hints) = ForeignCommits::new(Arc::new(|| {}));
        let mut subscription = hints.subscribe().expect("the writer is there");
        writer.undone_here();
        assert!(
            !subscription.changes.has_changed().unwrap(),
            "no hint while none is wanted"
        );
        subscription.wanted(true);
        writer.undone_here();
        assert!(subscription.changes.has_changed().unwrap());
    }
}
