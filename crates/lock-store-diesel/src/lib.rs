//! The repository adapter of lockd: the `LockRepository` port over SQLite or PostgreSQL, with
//! diesel, embedded migrations and an r2d2 pool.
//!
//! The backend is chosen by the URL scheme ([`DatabaseUrl`]). Pool, row model, error mapping and
//! the async boundary are shared; each backend has its own statements (`sqlite`, `postgres`)
//! because their clocks, placeholders and token sources differ. Dependencies point one way:
//! `repository` (the ports) → `writer` (how the lock statements run: group commit, batcher,
//! pooled connection) → `sqlite` / `postgres` (the SQL) → `row` / `outcome`. Blocking diesel
//! calls run on writer threads or tokio's blocking pool, never on the caller's async worker.

mod config;
mod connection;
mod database_url;
mod error;
mod freed_listener;
mod freed_notifier;
mod migrations;
mod outcome;
mod pooled;
mod postgres;
mod prepared;
mod repository;
mod row;
mod schema;
mod sqlite;
mod sweeper;
mod writer;

#[cfg(feature = "testing")]
pub mod testing;

/// The SQL text of the hot statements, for benchmarks that send what lockd sends and for tests.
///
/// On SQLite lockd sends `SQLITE_ACQUIRE` and `SQLITE_RELEASE` (binds: tenant, resource, owner,
/// then `now_ms, expires_ms` for an acquire, `now_ms` for a release). On PostgreSQL it sends
/// `POSTGRES_WRITE_BATCH` for every acquire, release and renew, batched or alone;
/// `POSTGRES_ACQUIRE`, `POSTGRES_RELEASE` and `POSTGRES_RENEW` are one request's statements,
/// made of the same SQL fragments, so they decide exactly as a batch of one (binds: tenant,
/// resource, owner, and `ttl_ms` for an acquire or renew).
///
/// The listing statements are here too, for the tests that EXPLAIN them (binds: tenant, prefix,
/// prefix upper bound, cursor (`''` for none), then `now_ms, limit` on SQLite or `limit` on
/// PostgreSQL; SQLite's check for ended rows in a page's range: tenant, prefix, last name,
/// cursor, `now_ms`).
pub mod statements {
    pub use crate::postgres::reads::LIST_BOUNDED as POSTGRES_LIST;
    pub use crate::postgres::writes::{
        ACQUIRE as POSTGRES_ACQUIRE, RELEASE as POSTGRES_RELEASE, RENEW as POSTGRES_RENEW,
        WRITE_BATCH as POSTGRES_WRITE_BATCH,
    };
    pub use crate::sqlite::{
        ACQUIRE as SQLITE_ACQUIRE, ENDED_IN_RANGE as SQLITE_LIST_ENDED,
        LIST_BOUNDED as SQLITE_LIST, RELEASE as SQLITE_RELEASE,
    };
}

pub use config::{Deadlines, StoreConfig, SWEEP_GRACE};
pub use connection::SqliteSynchronous;
pub use database_url::{DatabaseUrl, DatabaseUrlError};
pub use error::StoreError;
pub use repository::DieselLockRepository;
pub use sweeper::run_sweeper;
