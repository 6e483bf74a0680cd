//! Where the CPU time goes during a run: CPU seconds used by the server process, by the database
//! server's processes (PostgreSQL backends) and by this benchmark client, read from `/proc`.

use std::fs;

/// Clock ticks per second of `/proc/*/stat` times (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds (user + system) of one process, or 0 when it cannot be read.
fn process_seconds(pid: &str) -> f64 {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may contain spaces.
    let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
        return 0.0;
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line; 12 and 13 after the name.
    (ticks(11) + ticks(12)) / TICKS_PER_SECOND
}

/// CPU seconds of every process whose command name is `name`.
fn named_seconds(name: &str) -> f64 {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0.0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| fs::read_to_string(e.path().join("comm")).is_ok_and(|comm| comm.trim() == name))
        .map(|e| process_seconds(&e.file_name().to_string_lossy()))
        .sum()
}

/// CPU seconds of the PostgreSQL backends serving `database`: processes named `postgres` whose
/// title (`postgres: 15/main: USER DATABASE HOST(PORT) STATE`) names it.
fn backends_seconds(database: &str) -> f64 {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0.0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            fs::read_to_string(e.path().join("comm")).is_ok_and(|comm| comm.trim() == "postgres")
        })
        .filter(|e| {
            fs::read(e.path().join("cmdline")).is_ok_and(|title| {
                String::from_utf8_lossy(&title)
                    .split(|c: char| c.is_whitespace() || c == '\0')
                    .any(|word| word == database)
            })
        })
        .map(|e| process_seconds(&e.file_name().to_string_lossy()))
        .sum()
}

/// The database name at the end of a `postgres://` URL.
pub fn database_name(url: &str) -> Option<&str> {
    let path = url.strip_prefix("postgres://")?.split_once('/')?.1;
    let name = path.split('?').next()?;
    (!name.is_empty()).then_some(name)
}

/// A reading of the three CPU counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    server: f64,
    database: f64,
    client: f64,
}

impl CpuSample {
    pub fn take(server_pid: Option<u32>, database_process: Option<&str>) -> Self {
        Self {
            server: server_pid.map_or(0.0, |pid| process_seconds(&pid.to_string())),
            database: database_process.map_or(0.0, named_seconds),
            client: process_seconds("self"),
        }
    }

    /// Like [`CpuSample::take`], but the database's CPU is that of the PostgreSQL backends
    /// serving `database` alone (SQLite: none): other programs on this machine use the same
    /// PostgreSQL server, whose backends come and go during a run.
    pub fn take_serving(server_pid: u32, database: Option<&str>) -> Self {
        Self {
            server: process_seconds(&server_pid.to_string()),
            database: database.map_or(0.0, backends_seconds),
            client: process_seconds("self"),
        }
    }

    /// Microseconds of CPU per operation spent by server, database and client since `before`.
    pub fn per_operation_us(&self, before: &CpuSample, operations: u64) -> (f64, f64, f64) {
        let per = |after: f64, before: f64| (after - before) * 1e6 / operations.max(1) as f64;
        (
            per(self.server, before.server),
            per(self.database, before.database),
            per(self.client, before.client),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name after the host, without the query; none for SQLite or a URL without one.
    #[test]
    fn the_database_of_a_url() {
        let url = "postgres://postgres@127.0.0.1:5432/lock_bench_42";
        assert_eq!(database_name(url), Some("lock_bench_42"));
        let with_query = "postgres://u:p@h:5432/locks?sslmode=disable";
        assert_eq!(database_name(with_query), Some("locks"));
        assert_eq!(database_name("postgres://h:5432/"), None);
        assert_eq!(database_name("postgres://h:5432"), None);
        assert_eq!(database_name("sqlite:///tmp/row-1.db"), None);
    }
}
