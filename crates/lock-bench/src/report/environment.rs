//! What a report was measured on: the machine and the versions of every program measured.

/// The versions of what was measured, as each program reports itself.
pub(super) fn versions() -> String {
    let first_line = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.lines().next().map(str::trim).map(str::to_owned))
            .filter(|line| !line.is_empty())
            .unwrap_or_else(|| format!("{program}: not found"))
    };
    let lockd = crate::lockd::release_binary();
    [
        first_line(&lockd.to_string_lossy(), &["--version"]),
        first_line("redis-server", &["--version"]),
        first_line("etcd", &["--version"]),
        first_line("psql", &["--version"]),
        format!(
            "PostgreSQL server {}",
            first_line(
                "psql",
                &[
                    &std::env::var("LOCKD_TEST_DATABASE_URL")
                        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned()),
                    "-tAc",
                    "SHOW server_version",
                ],
            )
        ),
        format!("SQLite {} (bundled)", sqlite_version()),
    ]
    .join("; ")
}

fn sqlite_version() -> String {
    use diesel::{Connection, RunQueryDsl};
    #[derive(diesel::QueryableByName)]
    struct Version {
        #[diesel(sql_type = diesel::sql_types::Text)]
        version: String,
    }
    diesel::sqlite::SqliteConnection::establish(":memory:")
        .ok()
        .and_then(|mut conn| {
            diesel::sql_query("SELECT sqlite_version() AS version")
                .get_result::<Version>(&mut conn)
                .ok()
        })
        .map_or_else(|| "unknown".to_owned(), |v| v.version)
}

pub(super) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{cores} cores, {cpu}")
}
