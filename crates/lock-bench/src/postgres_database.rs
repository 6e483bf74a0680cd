//! A fresh PostgreSQL database for one measurement, created with `psql` on the server the
//! benchmark was pointed at and dropped again when it goes out of scope.

use std::process::Command;

/// A database of this benchmark process on the PostgreSQL server, dropped on `Drop`.
pub struct PostgresDatabase {
    admin: String,
    name: String,
    url: String,
}

impl PostgresDatabase {
    /// Creates `lock_bench_<pid><suffix>` through the server at `admin`; `None` when `psql` is
    /// missing or the server does not answer or refuses.
    pub fn create(admin: &str, suffix: &str) -> Option<Self> {
        let name = format!("lock_bench_{}{suffix}", std::process::id());
        let created = Command::new("psql")
            .args([admin, "-qc", &format!("CREATE DATABASE {name}")])
            .output()
            .ok()?;
        if !created.status.success() {
            return None;
        }
        let base = admin.rsplit_once('/').map_or(admin, |(base, _)| base);
        Some(Self {
            admin: admin.to_owned(),
            url: format!("{base}/{name}"),
            name,
        })
    }

    /// The URL of the new database.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([
                &self.admin,
                "-qc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .output();
    }
}
