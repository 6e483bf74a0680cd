//! How fast lockd writes to its database (W8): a counter of what it has written, read every
//! quarter of a second during a window, and the rate as the least-squares slope of the readings.
//!
//! - **PostgreSQL**: rows written, the sum of `n_tup_ins + n_tup_upd + n_tup_del` over
//!   `pg_stat_user_tables` of lockd's database (a database of the run's own, so every table in it
//!   is lockd's). Those counters are updated asynchronously: each backend keeps its counts to
//!   itself and adds them to the shared statistics at a transaction's end at most once a second
//!   (`PGSTAT_MIN_INTERVAL`), or, gone idle, when a timer fires (up to `PGSTAT_IDLE_INTERVAL`, 10
//!   s, later). `pg_stat_force_next_flush()` would flush only the calling backend (ours, which
//!   writes nothing), and `pg_stat_xact_user_tables` shows only the calling transaction's counts,
//!   so neither sees lockd's backends. What is read therefore lags what was written by up to
//!   about a second per busy backend. Under a steady load that lag is the same at every reading,
//!   so it shifts the line of readings without tilting it: the slope over a window of many
//!   readings is the write rate, where two readings at the ends would each be off by up to a
//!   second's writes. After the load changes (W8's holds taken, 6,400 acquires), a backend that
//!   went idle less than a second after its last flush adds its counts only when its idle timer
//!   fires: a window starts [`WriteCounter::settling`] later, 11 s.
//! - **SQLite**: bytes the lockd process caused to be written to storage, `write_bytes` of
//!   `/proc/PID/io` (SQLite runs inside lockd: its WAL appends and checkpoints). The kernel counts
//!   a page when the process dirties it in the page cache, so this is what the disk will be
//!   asked to write, not the bytes passed to `write()` (a page dirtied twice before its
//!   write-back counts once). Rows written are not visible from outside the process.

use std::io;
use std::time::Duration;

use tokio_postgres::{Client, NoTls};

use crate::table::Backend;

/// What a counter counts, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteUnit {
    /// PostgreSQL: rows inserted, updated or deleted.
    Rows,
    /// SQLite: bytes lockd wrote to storage (`/proc/PID/io` `write_bytes`).
    Bytes,
}

impl WriteUnit {
    /// The unit's name in the report and in its JSON.
    pub fn name(self) -> &'static str {
        match self {
            WriteUnit::Rows => "rows",
            WriteUnit::Bytes => "bytes",
        }
    }

    pub fn from_name(name: &str) -> Self {
        if name == WriteUnit::Bytes.name() {
            WriteUnit::Bytes
        } else {
            WriteUnit::Rows
        }
    }
}

/// A counter of what one lockd has written to its database.
pub enum WriteCounter {
    /// Rows written to lockd's PostgreSQL database, through a connection of our own.
    PostgresRows(Client),
    /// Bytes written to storage by the lockd process.
    ProcessBytes(u32),
}

/// Rows inserted, updated or deleted in every table of the database, as the shared statistics
/// know them now.
const ROWS_WRITTEN: &str = "SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0)::BIGINT \
                            FROM pg_stat_user_tables";

impl WriteCounter {
    /// The counter for lockd `pid` on `backend`, whose database is at `database_url`.
    ///
    /// # Errors
    /// When the PostgreSQL database cannot be reached.
    pub async fn connect(backend: Backend, pid: u32, database_url: &str) -> io::Result<Self> {
        match backend {
            Backend::Sqlite => Ok(WriteCounter::ProcessBytes(pid)),
            Backend::Postgres => {
                let (client, connection) = tokio_postgres::connect(database_url, NoTls)
                    .await
                    .map_err(io::Error::other)?;
                tokio::spawn(connection);
                Ok(WriteCounter::PostgresRows(client))
            }
        }
    }

    /// How long after the load changes the counter may still be adding writes made before:
    /// PostgreSQL's idle backends flush their statistics within `PGSTAT_IDLE_INTERVAL` (10 s),
    /// and a second more; `/proc` counts at once, but SQLite's checkpoint of what was written
    /// before may come a moment later.
    pub fn settling(&self) -> Duration {
        match self {
            WriteCounter::PostgresRows(_) => Duration::from_secs(11),
            WriteCounter::ProcessBytes(_) => Duration::from_secs(1),
        }
    }

    pub fn unit(&self) -> WriteUnit {
        match self {
            WriteCounter::PostgresRows(_) => WriteUnit::Rows,
            WriteCounter::ProcessBytes(_) => WriteUnit::Bytes,
        }
    }

    /// What has been written so far.
    ///
    /// # Errors
    /// When the statistics or `/proc` cannot be read.
    pub async fn read(&self) -> io::Result<f64> {
        match self {
            WriteCounter::PostgresRows(client) => {
                let row = client
                    .query_one(ROWS_WRITTEN, &[])
                    .await
                    .map_err(io::Error::other)?;
                Ok(row.get::<_, i64>(0) as f64)
            }
            WriteCounter::ProcessBytes(pid) => {
                let io = std::fs::read_to_string(format!("/proc/{pid}/io"))?;
                write_bytes(&io)
                    .map(|bytes| bytes as f64)
                    .ok_or_else(|| io::Error::other("no write_bytes in /proc/PID/io"))
            }
        }
    }
}

/// `write_bytes` of a `/proc/PID/io` file.
fn write_bytes(io: &str) -> Option<u64> {
    io.lines()
        .find_map(|line| line.strip_prefix("write_bytes:"))
        .and_then(|value| value.trim().parse().ok())
}

/// The least-squares slope of `(seconds, count)` readings: the counter's rate per second.
/// `None` with fewer than two distinct instants.
pub fn rate(readings: &[(f64, f64)]) -> Option<f64> {
    if readings.len() < 2 {
        return None;
    }
    let n = readings.len() as f64;
    let mean_t = readings.iter().map(|(t, _)| t).sum::<f64>() / n;
    let mean_c = readings.iter().map(|(_, c)| c).sum::<f64>() / n;
    let spread: f64 = readings.iter().map(|(t, _)| (t - mean_t).powi(2)).sum();
    if spread == 0.0 {
        return None;
    }
    let covariance: f64 = readings
        .iter()
        .map(|(t, c)| (t - mean_t) * (c - mean_c))
        .sum();
    Some(covariance / spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_bytes`, not `cancelled_write_bytes` nor `wchar`, whatever the order of the lines.
    #[test]
    fn write_bytes_of_proc_io() {
        let io = "rchar: 6976\nwchar: 512\nsyscr: 10\nsyscw: 2\nread_bytes: 0\n\
                  write_bytes: 1236992\ncancelled_write_bytes: 4096\n";
        assert_eq!(write_bytes(io), Some(1_236_992));
        assert_eq!(write_bytes("cancelled_write_bytes: 4096\n"), None);
        assert_eq!(write_bytes(""), None);
    }

    /// The slope of a counter that grows 100 a second, whatever its offset; readings that lag
    /// alike (every one a constant behind) give the same rate; a steady counter, zero.
    #[test]
    fn the_rate_is_the_slope_of_the_readings() {
        let readings: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                let t = f64::from(i) * 0.25;
                (t, 5_000.0 + 100.0 * t)
            })
            .collect();
        let rate_of = |r: &[(f64, f64)]| rate(r).expect("a rate");
        assert!((rate_of(&readings) - 100.0).abs() < 1e-9);
        let lagging: Vec<(f64, f64)> = readings.iter().map(|(t, c)| (*t, c - 100.0)).collect();
        assert!((rate_of(&lagging) - 100.0).abs() < 1e-9);
        assert_eq!(rate_of(&[(0.0, 7.0), (1.0, 7.0), (2.0, 7.0)]), 0.0);
        assert_eq!(rate(&[(1.0, 7.0)]), None);
        assert_eq!(rate(&[(1.0, 7.0), (1.0, 9.0)]), None);
        assert_eq!(rate(&[]), None);
    }

    /// A counter that steps once a second (as a backend's flushed statistics do) still shows
    /// its rate over a long window, within a step's share of it.
    #[test]
    fn a_counter_flushed_once_a_second_shows_its_rate() {
        let readings: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                let t = f64::from(i) * 0.25;
                (t, 100.0 * t.floor())
            })
            .collect();
        let rate = rate(&readings).expect("a rate");
        assert!((rate - 100.0).abs() < 5.0, "{rate}");
    }
}
