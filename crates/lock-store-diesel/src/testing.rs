//! Throw-away databases for tests (feature `testing`): a SQLite file in a temporary directory, or
//! a fresh PostgreSQL database created on the test server and dropped when the value is dropped.
//!
//! PostgreSQL tests run whenever the server at `LOCKD_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) answers. When it does not, they are skipped with a
//! loud message, unless `LOCKD_REQUIRE_POSTGRES=1` (as in CI), which makes them fail instead.

use std::sync::atomic::{AtomicU32, Ordering};

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::Connection;

use crate::DatabaseUrl;

/// The server PostgreSQL tests use, and the database they connect to for administration.
pub fn postgres_admin_url() -> String {
    std::env::var("LOCKD_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// Whether PostgreSQL tests must run (and fail rather than skip when the server is unreachable).
pub fn postgres_required() -> bool {
    std::env::var("LOCKD_REQUIRE_POSTGRES")
        .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// A database that exists for one test.
pub enum TestDatabase {
    Sqlite {
        dir: tempfile::TempDir,
        url: DatabaseUrl,
    },
    Postgres {
        admin_url: String,
        name: String,
        url: DatabaseUrl,
    },
}

impl TestDatabase {
    /// A new SQLite file (not yet created) in a new temporary directory.
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("create a temporary directory");
        let url = DatabaseUrl::Sqlite(dir.path().join("locks.db"));
        Self::Sqlite { dir, url }
    }

    /// A new, empty PostgreSQL database, or `None` (after a loud message) when the test server
    /// is unreachable and PostgreSQL tests are not required.
    ///
    /// # Panics
    /// When the server is unreachable and `LOCKD_REQUIRE_POSTGRES=1`.
    pub fn postgres() -> Option<Self> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let admin_url = postgres_admin_url();
        let mut admin = match PgConnection::establish(&admin_url) {
            Ok(conn) => conn,
            Err(error) if !postgres_required() => {
                eprintln!(
                    "\n!!!!! SKIPPING a PostgreSQL test: {admin_url} is unreachable ({error}).\n\
                     !!!!! Start PostgreSQL or set LOCKD_TEST_DATABASE_URL; CI sets LOCKD_REQUIRE_POSTGRES=1.\n"
                );
                return None;
            }
            Err(error) => panic!("PostgreSQL is required (LOCKD_REQUIRE_POSTGRES=1) but {admin_url} is unreachable: {error}"),
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let name = format!(
            "lockd_test_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        );
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap_or_else(|e| panic!("create test database {name}: {e}"));
        let url = DatabaseUrl::Postgres(with_database(&admin_url, &name));
        Some(Self::Postgres {
            admin_url,
            name,
            url,
        })
    }

    pub fn url(&self) -> &DatabaseUrl {
        match self {
            Self::Sqlite { url, .. } | Self::Postgres { url, .. } => url,
        }
    }

    /// The URL as lockd's `--database-url` takes it.
    pub fn url_string(&self) -> String {
        match self.url() {
            DatabaseUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            DatabaseUrl::Postgres(url) => url.clone(),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres { .. })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Self::Postgres {
            admin_url, name, ..
        } = self
        {
            if let Ok(mut admin) = PgConnection::establish(admin_url) {
                let _ = admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
            }
        }
    }
}

/// `url` with its database name replaced by `database` (query parameters kept).
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{host_part}/{database}?{query}"),
        None => format!("{host_part}/{database}"),
    }
}

/// Opens the store of `config` on `clock` (on tokio's blocking pool, as lockd does), for tests;
/// panics when it cannot.
pub async fn open_store(
    config: crate::StoreConfig,
    clock: std::sync::Arc<dyn lock_domain::Clock>,
) -> std::sync::Arc<crate::DieselLockRepository> {
    let repo =
        tokio::task::spawn_blocking(move || crate::DieselLockRepository::open(&config, clock))
            .await
            .expect("open task")
            .expect("open the store");
    std::sync::Arc::new(repo)
}

/// Every page of the default tenant's history of `subject` (`limit` a page, `since`), following
/// the cursors, joined: newest first. Panics when a page fails.
pub async fn every_history_page(
    repo: &crate::DieselLockRepository,
    subject: lock_domain::HistorySubject,
    since: Option<chrono::DateTime<chrono::Utc>>,
    limit: i64,
) -> Vec<lock_domain::HistoryRecord> {
    use lock_domain::{HistoryQuery, HistoryRepository, ListLimit};
    let mut all = Vec::new();
    let mut before = None;
    loop {
        let page = repo
            .history(
                values::tenant(),
                HistoryQuery {
                    subject: subject.clone(),
                    since,
                    before,
                    limit: ListLimit::parse(limit).expect("a page size of 1 to 1000"),
                },
            )
            .await
            .expect("a history page");
        all.extend(page.records);
        match page.next {
            Some(next) => before = Some(next),
            None => return all,
        }
    }
}

/// Valid lock values for tests, panicking on invalid input: the default tenant, a resource
/// name, an owner, a TTL (at most an hour).
pub mod values {
    use lock_domain::{
        Claim, LeaseOp, LeaseTerms, LockDelay, Owner, Place, ResourceName, Tenant, Ttl,
    };

    pub fn tenant() -> Tenant {
        Tenant::parse("default").unwrap()
    }

    pub fn name(raw: &str) -> ResourceName {
        ResourceName::parse(raw.to_owned()).unwrap()
    }

    pub fn owner(raw: &str) -> Owner {
        Owner::parse(raw).unwrap()
    }

    pub fn ttl(seconds: i64) -> Ttl {
        Ttl::parse(seconds, 3_600).unwrap()
    }

    /// An exclusive acquire of lock `r` by `who`, for an hour, with no value and no lock-delay.
    pub fn acquire_by(who: &str) -> LeaseOp {
        LeaseOp::Acquire {
            place: Place::Lock(name("r")),
            claim: Claim::Exclusive,
            terms: LeaseTerms {
                owner: owner(who),
                ttl: ttl(3600),
                value: None,
                lock_delay: LockDelay::NONE,
            },
        }
    }

    /// A release of lock `r` by `who`.
    pub fn release_by(who: &str) -> LeaseOp {
        LeaseOp::Release {
            place: Place::Lock(name("r")),
            owner: owner(who),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_names_are_replaced() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(with_database("postgresql://h", "x"), "postgresql://h/x");
    }
}
