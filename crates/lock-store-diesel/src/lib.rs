//! The repository adapter of lockd: the lease port (`LeaseStore`) and its neighbours over SQLite or PostgreSQL, with
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
mod db_connection;
mod error;
mod expired_holds;
mod foreign_commits;
mod freed_listener;
mod freed_notifier;
mod hint_connection;
mod history;
mod migrations;
mod outcome;
mod peek;
mod pool_errors;
mod pooled;
// Its statement macros (`clock_ms!`) serve the semaphore statements too.
#[macro_use]
mod postgres;
// After `postgres`, whose statement macros (`clock_ms!`) it uses.
mod lease_statements;
mod prepared;
mod repository;
mod row;
mod schema;
mod semaphores;
mod sessions;
mod shared_locks;
mod sqlite;
mod sweeper;
mod writer;

#[cfg(feature = "testing")]
pub mod testing;

/// The SQL text of statements that tests EXPLAIN or run by hand: the listing (binds: tenant,
/// prefix, prefix upper bound, cursor (`''` for none), then `now_ms, limit` on SQLite or `limit`
/// on PostgreSQL), SQLite's check for ended rows in a page's range (binds: tenant, prefix, last
/// name, cursor, `now_ms`), PostgreSQL's `WRITE_BATCH`, which every acquire, release and renew
/// goes through, batched or alone (as it or one of its smaller variants, `WRITE_BATCHES`), PostgreSQL's live-lock count, and the settings of every
/// PostgreSQL session of lockd.
pub mod statements {
    pub use crate::connection::POSTGRES_SESSION;
    pub use crate::postgres::reads::COUNT_LIVE as POSTGRES_COUNT_LIVE;
    pub use crate::postgres::reads::LIST_BOUNDED as POSTGRES_LIST;
    pub use crate::postgres::writes::WRITE_BATCH as POSTGRES_WRITE_BATCH;
    pub use crate::postgres::writes::WRITE_BATCHES as POSTGRES_WRITE_BATCHES;
    pub use crate::sqlite::{ENDED_IN_RANGE as SQLITE_LIST_ENDED, LIST_BOUNDED as SQLITE_LIST};
}

pub use config::SqliteSynchronous;
pub use config::{Deadlines, StoreConfig, SWEEP_GRACE};
pub use database_url::{DatabaseUrl, DatabaseUrlError};
pub use error::StoreError;
pub use outcome::{SweepPosition, Swept};
/// How far the first lockd connection on a new PostgreSQL timeline (a promoted standby) moves
/// the fencing tokens forward (migration 17; docs/high-availability.md).
pub use postgres::timeline::TOKEN_MARGIN as POSTGRES_TIMELINE_TOKEN_MARGIN;
pub use repository::DieselLockRepository;
pub use sweeper::run_sweeper;
