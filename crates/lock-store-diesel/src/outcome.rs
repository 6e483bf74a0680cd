//! What a write came to, as the backends' statements report it: the same types on SQLite and
//! PostgreSQL, batched or not, turned into the port's results by the repository.

use crate::row::LockRow;

/// The outcome of an exclusive acquire by the lock statement.
#[derive(Debug)]
pub(crate) enum AcquireRow {
    /// The granted (or re-granted) row.
    Granted(LockRow),
    /// Refused, with the reason when what decided it knew it (a lease the PostgreSQL batcher
    /// saw live); `None` when the statement only told that it refused: the writer then asks the
    /// lock's holders why ([`crate::shared_locks::explain`]).
    Refused(Option<lock_domain::Refusal>),
}

impl From<Option<LockRow>> for AcquireRow {
    fn from(row: Option<LockRow>) -> Self {
        match row {
            Some(row) => AcquireRow::Granted(row),
            None => AcquireRow::Refused(None),
        }
    }
}

/// The outcome of a release.
pub(crate) enum ReleaseRow {
    /// The caller's live lease ended; the row as it was released.
    Released(LockRow),
    /// No live lease.
    NotFound,
    /// Another owner's lease is live.
    Forbidden,
}

/// The lease an exclusive release ended, from the lock statement's row as it was released.
///
/// # Errors
/// [`lock_domain::RepositoryError`] for a row that does not read as a lock.
pub(crate) fn ended_lock(
    row: LockRow,
) -> Result<lock_domain::EndedLease, lock_domain::RepositoryError> {
    let lock = lock_domain::Lock::try_from(row)?;
    Ok(lock_domain::EndedLease {
        fencing_token: lock.fencing_token,
        acquired_at: Some(lock.acquired_at),
        shared: false,
    })
}

/// The outcome of a renew.
pub(crate) enum RenewRow {
    /// The caller's live lease, with its new end.
    Renewed(LockRow),
    /// No live lease.
    NotFound,
    /// Another owner's lease is live.
    Forbidden,
}

/// Where a sweep pass goes on from. A pass starts at [`SweepPosition::START`] and follows the
/// `next` of each [`Swept`] until it is `None`. What a position means is the backend's business:
/// PostgreSQL reads its table in ranges of pages (its expiry column has no index, so that a
/// write updates its row in place), SQLite finds the oldest rows on its expiry index and always
/// starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepPosition(pub(crate) u64);

impl SweepPosition {
    /// The start of a pass.
    pub const START: Self = Self(0);
}

/// One step of a sweep pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Rows deleted by this step: at most the step's batch.
    pub deleted: usize,
    /// Where the pass goes on, or `None` when it is done.
    pub next: Option<SweepPosition>,
}
