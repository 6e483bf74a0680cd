//! Opening the store: the database, its schema, the pool and the writer of the backend.

use std::sync::Arc;

use lock_domain::{Clock, NoStoreEvents, StoreEvents};

use super::{DieselLockRepository, Inner};
use crate::config::StoreConfig;
use crate::connection::{ConnectionManager, PoolHealth};
use crate::db_connection::DbConnection;
use crate::freed_notifier::{FreedNotifier, HintingUndos};
use crate::pooled::Pooled;
use crate::writer::postgres_batch::PostgresBatcher;
use crate::writer::postgres_direct::PostgresDirect;
use crate::writer::sqlite::SqliteWriter;
use crate::writer::wal_limit::WalLimit;
use crate::writer::Writer;
use crate::{migrations, DatabaseUrl, StoreError};

impl DieselLockRepository {
    /// Opens the database, brings its schema up to date and builds the pool. Blocking: call it
    /// before serving, or from a blocking thread. `clock` is the clock on SQLite; PostgreSQL
    /// always uses its server's clock.
    ///
    /// # Errors
    /// [`StoreError::Unreachable`] (worth retrying), [`StoreError::MissingDirectory`],
    /// [`StoreError::Migration`].
    pub fn open(config: &StoreConfig, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        Self::open_reporting(config, clock, Arc::new(NoStoreEvents))
    }

    /// [`Self::open`], with what the store does on its own (a grant that committed after its
    /// caller had gone, undone) reported to `events`: the audit log's, in a server.
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_reporting(
        config: &StoreConfig,
        clock: Arc<dyn Clock>,
        events: Arc<dyn StoreEvents>,
    ) -> Result<Self, StoreError> {
        let url = config.url.redacted();
        if let DatabaseUrl::Sqlite(path) = &config.url {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            if !dir.is_dir() {
                return Err(StoreError::MissingDirectory {
                    path: path.display().to_string(),
                    dir: dir.display().to_string(),
                });
            }
        }
        let (is_sqlite, default_size) = match config.url {
            DatabaseUrl::Sqlite(_) => (true, 4),
            DatabaseUrl::Postgres(_) => (false, 16),
        };
        // PostgreSQL pools smaller than 2 stall; SQLite has one writer anyway.
        let size = config.pool_size.unwrap_or(default_size).max(2);
        let health = PoolHealth::new(size);
        let manager = ConnectionManager::new(
            config.url.clone(),
            config.sqlite_busy_timeout,
            config.sqlite_synchronous,
            config.connection_timeout,
            config.statement_timeout,
            health.clone(),
        )
        .recording_history(config.record_history)
        .sqlite_wal_limit(config.sqlite_wal_limit);
        // libpq may repeat parts of the connection string in its messages: every reason is
        // scrubbed of the URL's passwords.
        let mut first = manager.establish().map_err(|e| StoreError::Unreachable {
            url: url.clone(),
            reason: config.url.scrub(&error_chain(&e)),
        })?;
        migrations::run(&mut first, config.sqlite_busy_timeout).map_err(|e| {
            StoreError::Migration {
                url: url.clone(),
                reason: config.url.scrub(&error_chain(e.as_ref())),
            }
        })?;
        if let DbConnection::Postgres(conn) = &mut first {
            crate::postgres::timeline::enter(conn).map_err(|e| StoreError::Unreachable {
                url: url.clone(),
                reason: config.url.scrub(&error_chain(&e)),
            })?;
        }
        let manager = manager.entering_timelines();

        let pool = r2d2::Pool::builder()
            .max_size(size)
            .min_idle(Some(size.min(2)))
            .connection_timeout(config.connection_timeout)
            // Tests cost nothing until a statement fails for want of a database (`PoolHealth`).
            .test_on_check_out(true)
            .error_handler(Box::<crate::pool_errors::ConnectFailures>::default())
            .build(manager)
            .map_err(|e| StoreError::Unreachable {
                url: url.clone(),
                reason: config.url.scrub(&error_chain(&e)),
            })?;
        // PostgreSQL: the store's undo of a grant nobody heard of is a hint, as a release is.
        let notifier = match &config.url {
            DatabaseUrl::Postgres(url) => Some(Arc::new(FreedNotifier::new(
                url.clone(),
                config.connection_timeout,
            ))),
            DatabaseUrl::Sqlite(_) => None,
        };
        let events: Arc<dyn StoreEvents> = match &notifier {
            Some(notifier) => Arc::new(HintingUndos {
                events,
                notifier: Arc::clone(notifier),
            }),
            None => events,
        };
        let pooled = Pooled::new(
            pool,
            health,
            Arc::clone(&clock),
            (!is_sqlite).then(|| config.deadlines()),
            events,
        );
        let writer = start_writer(config, first, pooled.clone(), clock).map_err(|reason| {
            StoreError::Unreachable {
                url: url.clone(),
                reason,
            }
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                writer,
                pooled,
                sweep_grace: config.sweep_grace,
                postgres_url: match &config.url {
                    DatabaseUrl::Postgres(url) => Some(url.clone()),
                    DatabaseUrl::Sqlite(_) => None,
                },
                connection_timeout: config.connection_timeout,
                notifier,
                history_frontier: Default::default(),
                record_history: config.record_history,
            }),
        })
    }
}

/// Starts the writer of the configured backend. `first` is the connection the schema was
/// migrated on: SQLite's writer keeps it.
///
/// # Errors
/// Why the writer could not start (a thread that could not be spawned).
fn start_writer(
    config: &StoreConfig,
    first: DbConnection,
    pooled: Pooled,
    clock: Arc<dyn Clock>,
) -> Result<Box<dyn Writer>, String> {
    Ok(match first {
        DbConnection::Sqlite(conn) => Box::new(
            SqliteWriter::spawn(
                conn,
                pooled,
                clock,
                config.sqlite_max_batch,
                config.record_history,
                match &config.url {
                    DatabaseUrl::Sqlite(path) => Some(WalLimit::new(
                        path,
                        config.sqlite_wal_limit,
                        config.sqlite_busy_timeout,
                    )),
                    DatabaseUrl::Postgres(_) => None,
                },
            )
            .map_err(|e| format!("cannot start the SQLite writer: {e}"))?,
        ),
        DbConnection::Postgres(_) if config.postgres_batch_connections == 0 => {
            Box::new(PostgresDirect::new(pooled))
        }
        DbConnection::Postgres(_) => Box::new(
            PostgresBatcher::spawn(
                PostgresDirect::new(pooled),
                config.deadlines(),
                config.postgres_batch_connections,
                config.postgres_max_batch,
            )
            .map_err(|e| format!("cannot start the PostgreSQL batcher: {e}"))?,
        ),
    })
}

/// An error and its sources on one line, for start-up messages.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
