//! The store's errors: why it could not start, and how a failed query maps to the port's
//! `RepositoryError` (unavailable, worth retrying, or internal).

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use lock_domain::RepositoryError;
use thiserror::Error;

/// Why the store could not be opened.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database could not be reached or opened (it may come up later).
    #[error("cannot open the database {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// The schema could not be brought up to date.
    #[error("cannot migrate the database {url}: {reason}")]
    Migration { url: String, reason: String },
    /// The SQLite file's directory does not exist: refusing to guess (a mistyped URL would
    /// otherwise silently create an empty database somewhere else).
    #[error("cannot open the SQLite database {path}: directory {dir} does not exist")]
    MissingDirectory { path: String, dir: String },
}

impl StoreError {
    /// Whether retrying the same open later may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Unreachable { .. })
    }
}

/// Maps a failed query: a full disk is `StorageFull`; connection and other passing problems are
/// `Unavailable` (503, retry later); anything else is `Internal`.
pub(crate) fn from_query(error: DieselError) -> RepositoryError {
    ErrorClass::of(&error).error(error)
}

/// What kind of failure a query's error is, kept apart from the error itself so that every
/// caller of a failed batch gets its own error of the same kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    StorageFull,
    Unavailable,
    Internal,
}

impl ErrorClass {
    pub(crate) fn of(error: &DieselError) -> Self {
        if is_wal_full(error) {
            ErrorClass::Unavailable
        } else if is_storage_full(error) {
            ErrorClass::StorageFull
        } else if is_unavailable(error) {
            ErrorClass::Unavailable
        } else {
            ErrorClass::Internal
        }
    }

    pub(crate) fn error(
        self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> RepositoryError {
        match self {
            ErrorClass::StorageFull => RepositoryError::storage_full(source),
            ErrorClass::Unavailable => RepositoryError::unavailable(source),
            ErrorClass::Internal => RepositoryError::internal(source),
        }
    }
}

/// The database has no room for a write: SQLite's `SQLITE_FULL` ("database or disk is full",
/// also when the WAL cannot grow), PostgreSQL's `disk_full` ("could not extend file …: No space
/// left on device").
fn is_storage_full(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(_, info) => {
            let message = info.message().to_ascii_lowercase();
            ["database or disk is full", "disk is full", "no space left"]
                .iter()
                .any(|needle| message.contains(needle))
        }
        _ => false,
    }
}

/// PostgreSQL could not write its WAL (`could not write to file "pg_wal/…": No space left on
/// device`, a PANIC: the server restarts). Unlike a table that cannot grow, this may come after
/// the transaction's commit record was already flushed, by the flush of other sessions' records
/// past it, so the operation may or may not have happened: unavailable, not storage-full.
fn is_wal_full(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(_, info) => {
            let message = info.message().to_ascii_lowercase();
            message.contains("pg_wal") && message.contains("no space left")
        }
        _ => false,
    }
}

pub(crate) fn is_unavailable(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _)
        | DieselError::DatabaseError(DatabaseErrorKind::UnableToSendCommand, _)
        | DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _)
        | DieselError::BrokenTransactionManager => true,
        DieselError::DatabaseError(_, info) => {
            let message = info.message().to_ascii_lowercase();
            [
                "database is locked",
                "canceling statement due to statement timeout",
                "disk i/o error",
                "readonly database",
                "unable to open database",
                "server closed the connection",
                // libpq on a connection reset under it: the command may or may not have run.
                "could not send data to server",
                "could not receive data from server",
                "lost synchronization with server",
                "terminating connection",
                "could not connect",
                "connection",
                "the database system is",
            ]
            .iter()
            .any(|needle| message.contains(needle))
        }
        _ => false,
    }
}

/// The database did not take or finish an operation within its deadline.
#[derive(Debug, thiserror::Error)]
#[error("the database did not answer within {0:?}")]
pub(crate) struct NoAnswer(pub std::time::Duration);

/// A pool that could not hand out a connection in time: the database is unavailable.
pub(crate) fn from_pool(error: r2d2::Error) -> RepositoryError {
    RepositoryError::unavailable(error)
}

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};

    use super::ErrorClass;

    fn database_error(message: &str) -> DieselError {
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()))
    }

    #[test]
    fn a_table_that_cannot_grow_is_storage_full_and_a_wal_that_cannot_is_unavailable() {
        let cases = [
            (
                "could not extend file \"pg_tblspc/16384/PG_15_202209061/16385/16400\": No space \
                 left on device",
                ErrorClass::StorageFull,
            ),
            ("database or disk is full", ErrorClass::StorageFull),
            (
                "could not write to file \"pg_wal/xlogtemp.6398\": No space left on device",
                ErrorClass::Unavailable,
            ),
            (
                "server closed the connection unexpectedly",
                ErrorClass::Unavailable,
            ),
            (
                "could not send data to server: Broken pipe",
                ErrorClass::Unavailable,
            ),
            (
                "could not receive data from server: Connection reset by peer",
                ErrorClass::Unavailable,
            ),
            (
                "lost synchronization with server: got message type \"Z\", length 5",
                ErrorClass::Unavailable,
            ),
            (
                "duplicate key value violates unique constraint",
                ErrorClass::Internal,
            ),
        ];
        for (message, class) in cases {
            assert_eq!(ErrorClass::of(&database_error(message)), class, "{message}");
        }
        // A command that could not be sent (whatever libpq said) never reached the database.
        let unsent = DieselError::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand,
            Box::new("Broken pipe".to_owned()),
        );
        assert_eq!(ErrorClass::of(&unsent), ErrorClass::Unavailable);
    }
}
