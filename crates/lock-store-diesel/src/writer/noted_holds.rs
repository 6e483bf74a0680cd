//! The session holds that this process knows are noted (`session_holds`) by transactions that
//! committed, so that a session taking the same place again (a worker's lock, released and
//! taken once a job) does not write the same note again each time.
//!
//! Why a kept entry is never wrong: a session's notes are deleted only with the session (closed,
//! forced or swept, by any process), and an ended session takes nothing again (its id is never
//! reused, a keepalive never revives it, and every acquire under a session is decided on the
//! session's row). So while anything can still be granted under a session, every note it
//! committed is still there. Only a commit makes an entry: a note written by a job that was
//! rolled back (its savepoint), or by a transaction that did not commit, is forgotten with it.
//!
//! - SQLite: the writer thread owns the set ([`install`]), marked and rewound with each job's
//!   savepoint; on any other thread every note is written ([`needs_note`] says yes and keeps
//!   nothing).
//! - PostgreSQL: the batcher keeps a [`NotedHolds`] for its batch statement, which commits by
//!   itself: a grant it returned under a session was noted ([`NotedHolds::note_committed`]).

use std::cell::RefCell;
use std::collections::HashSet;

/// The most entries kept; past it the set starts again empty (notes are then written again,
/// once each).
const MAX_KEPT: usize = 65_536;

thread_local! {
    static NOTED: RefCell<Option<NotedHolds>> = const { RefCell::new(None) };
}

/// Notes known committed; on SQLite's writer also those of the transaction under way.
#[derive(Default)]
pub(crate) struct NotedHolds {
    /// Notes committed, each [`key`].
    committed: HashSet<String>,
    /// Notes written by the transaction under way, in order (jobs rewind to a mark).
    pending: Vec<String>,
}

impl NotedHolds {
    /// Whether a committed transaction noted that session `id` (of `tenant`, as stored) holds
    /// `kind` at `name`.
    pub(crate) fn is_committed(&self, tenant: &str, id: &str, kind: &str, name: &str) -> bool {
        self.committed.contains(&key(tenant, id, kind, name))
    }

    /// A transaction that committed noted that session `id` holds `kind` at `name`.
    pub(crate) fn note_committed(&mut self, tenant: &str, id: &str, kind: &str, name: &str) {
        self.pending.push(key(tenant, id, kind, name));
        self.keep_pending();
    }

    fn keep_pending(&mut self) {
        if self.committed.len() + self.pending.len() > MAX_KEPT {
            self.committed.clear();
        }
        self.committed.extend(self.pending.drain(..));
    }
}

/// Makes the calling thread (the writer's) keep the notes its transactions commit.
pub(crate) fn install() {
    NOTED.with(|noted| *noted.borrow_mut() = Some(NotedHolds::default()));
}

/// Whether the note of session `id` (of `tenant`, as stored) holding `kind` at `name` must be
/// written by the transaction under way: `false` only when a committed transaction wrote it.
/// When it must, it is taken as written by this transaction (until [`rewind`] or [`begin`]).
pub(crate) fn needs_note(tenant: &str, id: &str, kind: &str, name: &str) -> bool {
    NOTED.with(|noted| {
        let mut noted = noted.borrow_mut();
        let Some(noted) = noted.as_mut() else {
            return true;
        };
        let key = key(tenant, id, kind, name);
        if noted.committed.contains(&key) {
            return false;
        }
        noted.pending.push(key);
        true
    })
}

/// A transaction begins: nothing of an earlier one that did not commit is kept.
pub(crate) fn begin() {
    with_installed(|noted| noted.pending.clear());
}

/// Where the notes of the next job start.
pub(crate) fn mark() -> usize {
    NOTED.with(|noted| {
        noted
            .borrow()
            .as_ref()
            .map_or(0, |noted| noted.pending.len())
    })
}

/// The job that started at `mark` was rolled back: so were its notes.
pub(crate) fn rewind(mark: usize) {
    with_installed(|noted| noted.pending.truncate(mark));
}

/// The transaction committed: its notes are kept.
pub(crate) fn committed() {
    with_installed(NotedHolds::keep_pending);
}

fn key(tenant: &str, id: &str, kind: &str, name: &str) -> String {
    super::kept_key(&[tenant, id, kind, name])
}

fn with_installed(change: impl FnOnce(&mut NotedHolds)) {
    NOTED.with(|noted| {
        if let Some(noted) = noted.borrow_mut().as_mut() {
            change(noted);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_a_writer_thread(test: impl FnOnce() + Send + 'static) {
        crate::writer::on_a_writer_thread(install, test);
    }

    #[test]
    fn only_a_committed_note_is_not_written_again() {
        on_a_writer_thread(|| {
            begin();
            assert!(needs_note("t", "s", "lock", "a"));
            // The same transaction again: written by it, not yet committed.
            assert!(needs_note("t", "s", "lock", "a"));
            committed();
            begin();
            assert!(!needs_note("t", "s", "lock", "a"));
            assert!(needs_note("t", "s", "lock", "b"), "another place");
            assert!(needs_note("t", "s2", "lock", "a"), "another session");
            assert!(needs_note("t", "s", "semaphore", "a"), "another kind");
            assert!(needs_note("u", "s", "lock", "a"), "another tenant");
        });
    }

    #[test]
    fn notes_of_a_transaction_that_did_not_commit_are_forgotten() {
        on_a_writer_thread(|| {
            begin();
            assert!(needs_note("t", "s", "lock", "a"));
            // The commit failed; the next transaction begins.
            begin();
            committed();
            begin();
            assert!(needs_note("t", "s", "lock", "a"));
        });
    }

    #[test]
    fn notes_of_a_job_rolled_back_to_its_mark_are_forgotten() {
        on_a_writer_thread(|| {
            begin();
            assert!(needs_note("t", "s", "lock", "kept"));
            let mark = mark();
            assert!(needs_note("t", "s", "lock", "undone"));
            rewind(mark);
            committed();
            begin();
            assert!(!needs_note("t", "s", "lock", "kept"));
            assert!(needs_note("t", "s", "lock", "undone"));
        });
    }

    #[test]
    fn keys_do_not_run_into_each_other() {
        on_a_writer_thread(|| {
            begin();
            assert!(needs_note("t", "s", "lock", "a\0b"));
            committed();
            begin();
            assert!(needs_note("t", "s\0lock", "a", "b"));
        });
    }

    #[test]
    fn a_set_of_its_own_keeps_what_committed() {
        let mut noted = NotedHolds::default();
        assert!(!noted.is_committed("t", "s", "lock", "a"));
        noted.note_committed("t", "s", "lock", "a");
        assert!(noted.is_committed("t", "s", "lock", "a"));
        assert!(!noted.is_committed("t", "s", "election", "a"));
    }

    #[test]
    fn a_thread_without_the_set_writes_every_note() {
        std::thread::spawn(|| {
            begin();
            assert!(needs_note("t", "s", "lock", "a"));
            committed();
            assert!(needs_note("t", "s", "lock", "a"));
        })
        .join()
        .expect("the test thread");
    }
}
