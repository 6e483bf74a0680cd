//! What a write came to, as the backends' statements report it: the same types on SQLite and
//! PostgreSQL, batched or not, turned into the port's results by the repository.

use crate::row::LockRow;

/// The outcome of an acquire: the granted (or re-granted) row, or `None` when another owner's
/// lease is live (`Held`).
pub(crate) type AcquireRow = Option<LockRow>;

/// The outcome of a release.
pub(crate) enum ReleaseRow {
    /// The caller's live lease ended; the row as it was released.
    Released(LockRow),
    /// No live lease.
    NotFound,
    /// Another owner's lease is live.
    Forbidden,
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
