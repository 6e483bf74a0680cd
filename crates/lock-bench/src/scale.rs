//! W3: W1 again with many live locks already held (1,000, then 1,000,000), preloaded straight
//! into the database while lockd is stopped, to see whether throughput and memory hold at scale.

use std::io;
use std::path::Path;

use diesel::connection::SimpleConnection;
use diesel::sqlite::SqliteConnection;
use diesel::Connection;

/// Inserts `count` live locks (a day's lease) into the SQLite file lockd has migrated.
pub fn preload_sqlite(path: &Path, count: u64) -> io::Result<()> {
    let mut conn =
        SqliteConnection::establish(&path.to_string_lossy()).map_err(io::Error::other)?;
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = 5000;
         BEGIN IMMEDIATE;
         WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < {count})
         INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
         SELECT 'default', 'preload-' || n, 'preloader',
                CAST(strftime('%s', 'now') AS INTEGER) * 1000,
                CAST(strftime('%s', 'now') AS INTEGER) * 1000 + 86400000,
                (SELECT last_token FROM fencing_counter) + n
         FROM seq;
         COMMIT;"
    ))
    .map_err(io::Error::other)
}

/// Inserts `count` live locks (a day's lease) into the PostgreSQL database lockd has migrated.
pub fn preload_postgres(url: &str, count: u64) -> io::Result<()> {
    let sql = format!(
        "INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
         SELECT 'default', 'preload-' || n, 'preloader',
                FLOOR(EXTRACT(EPOCH FROM now()) * 1000)::BIGINT,
                FLOOR(EXTRACT(EPOCH FROM now()) * 1000)::BIGINT + 86400000,
                nextval('fencing_tokens')
         FROM generate_series(1, {count}) AS n"
    );
    let status = std::process::Command::new("psql")
        .args([url, "-qc", &sql, "-c", "VACUUM ANALYZE distributed_locks"])
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other("psql failed to preload"))
    }
}
