//! The connection to either backend ([`DbConnection`]), which backend-specific statements match
//! on, and why one could not be opened ([`ConnectError`]).

use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::ConnectionError;
use lock_domain::RepositoryError;

/// A connection to the configured backend. Backend-specific statements match on it.
pub(crate) enum DbConnection {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl DbConnection {
    /// The SQLite connection; an internal error on a PostgreSQL one (a store mixes no backends).
    pub(crate) fn sqlite(&mut self) -> Result<&mut SqliteConnection, RepositoryError> {
        match self {
            DbConnection::Sqlite(c) => Ok(c),
            DbConnection::Postgres(_) => Err(RepositoryError::internal(
                "a PostgreSQL connection in a SQLite store",
            )),
        }
    }

    /// The PostgreSQL connection; an internal error on a SQLite one.
    pub(crate) fn postgres(&mut self) -> Result<&mut PgConnection, RepositoryError> {
        match self {
            DbConnection::Postgres(c) => Ok(c),
            DbConnection::Sqlite(_) => Err(RepositoryError::internal(
                "a SQLite connection in a PostgreSQL store",
            )),
        }
    }
}

/// Why a connection could not be opened or set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error(transparent)]
    Connect(#[from] ConnectionError),
    /// PostgreSQL's connection failure, its message scrubbed of the URL's passwords (libpq
    /// may repeat parts of the connection string).
    #[error("{0}")]
    Postgres(String),
    /// The cause is in the message, not a source: r2d2 logs a failed connection by its message
    /// alone.
    #[error("could not configure the connection: {0}")]
    Setup(diesel::result::Error),
}

impl From<diesel::result::Error> for ConnectError {
    fn from(error: diesel::result::Error) -> Self {
        ConnectError::Setup(error)
    }
}
