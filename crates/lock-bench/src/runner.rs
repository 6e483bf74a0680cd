//! Runs the table (`table.rs`): for each selected row, sets its system up (a fresh database,
//! migrated and preloaded if the row says so, then the servers), measures the row's workloads,
//! and tears everything down before the next row.

use std::path::{Path, PathBuf};

use crate::etcd::{EtcdServer, EtcdSystem};
use crate::lockd::{Lockd, LockdSystem};
use crate::measure::{Measure, Probe};
use crate::plan::{Plan, Selection};
use crate::postgres_database::PostgresDatabase;
use crate::raw_postgres::RawPostgresSystem;
use crate::raw_sqlite::RawSqliteSystem;
use crate::redis::{RedisServer, RedisSystem};
use crate::report::Report;
use crate::scale;
use crate::table::{Backend, Row, System};

/// What every row is run with.
pub struct Bench<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub plan: &'a Plan,
    /// The lockd binary to measure (the release build).
    pub binary: PathBuf,
    /// Extra flags for every lockd started (`--lockd-args`).
    pub lockd_args: Vec<&'a str>,
    /// The PostgreSQL server the PostgreSQL rows create their databases on.
    pub postgres_url: &'a str,
    /// The scratch directory of this run.
    pub work: &'a Path,
}

/// A fresh database for one row, gone with it (the SQLite file goes with the work directory).
enum Database {
    Sqlite(PathBuf),
    Postgres(PostgresDatabase),
}

impl Database {
    fn url(&self) -> String {
        match self {
            Database::Sqlite(file) => format!("sqlite://{}", file.display()),
            Database::Postgres(database) => database.url().to_owned(),
        }
    }
}

impl Bench<'_> {
    /// Measures the rows of `table` that `selection` selects, in order, into `report`.
    pub fn run(&self, table: &[Row], selection: &Selection, report: &mut Report) {
        let mut postgres_answers = true;
        for (index, row) in table.iter().enumerate() {
            let workloads = selection.workloads(row);
            if workloads.is_empty() || (row.system.on_postgres() && !postgres_answers) {
                continue;
            }
            let measure = Measure {
                runtime: self.runtime,
                plan: self.plan,
                name: row.name,
                workloads: &workloads,
            };
            if let Err(Missing::Postgres) = self.run_row(index, row.system, &measure, report) {
                eprintln!(
                    "!!! PostgreSQL does not answer at {}: lockd (PostgreSQL) not measured",
                    self.postgres_url
                );
                postgres_answers = false;
            }
        }
    }

    fn run_row(
        &self,
        index: usize,
        system: System,
        measure: &Measure<'_>,
        report: &mut Report,
    ) -> Result<(), Missing> {
        match system {
            System::HttpCeiling => {
                let server = Lockd::start_ceiling().expect("start the HTTP ceiling server");
                let probe = Probe {
                    pid: Some(server.pid()),
                    database: None,
                };
                measure.throughput(&lockd_system(&server), probe, report);
            }
            System::Lockd {
                backend,
                audit_log,
                live_locks,
            } => {
                let database = self.database(backend, index)?;
                if live_locks > 0 {
                    self.migrate(&database);
                    match &database {
                        Database::Sqlite(file) => scale::preload_sqlite(file, live_locks),
                        Database::Postgres(db) => scale::preload_postgres(db.url(), live_locks),
                    }
                    .expect("preload the live locks");
                }
                let mut args = self.lockd_args.clone();
                if audit_log {
                    // lockd's default log level: the audit log writes a line per grant and
                    // release (the other lockd rows log warnings only).
                    args.extend(["--log", "info"]);
                }
                let server = Lockd::start(&self.binary, &database.url(), &args)
                    .unwrap_or_else(|e| panic!("start lockd on {}: {e}", backend.name()));
                let probe = Probe {
                    pid: Some(server.pid()),
                    database: backend.database_process(),
                };
                measure.throughput(&lockd_system(&server), probe, report);
                measure.sessions(&server, backend, &database.url(), report);
            }
            System::LockdPair { backend } => {
                let database = self.database(backend, index)?;
                let start = || {
                    Lockd::start(&self.binary, &database.url(), &self.lockd_args)
                        .unwrap_or_else(|e| panic!("start lockd on {}: {e}", backend.name()))
                };
                let (first, second) = (start(), start());
                measure.handoffs(&first, &second, report);
            }
            System::RawSqlite { synchronous } => {
                let database = self.database(Backend::Sqlite, index)?;
                self.migrate(&database);
                let Database::Sqlite(file) = &database else {
                    unreachable!("a SQLite database is a file")
                };
                let system =
                    RawSqliteSystem::open(file, synchronous.pragma()).expect("open SQLite");
                measure.throughput(&system, Probe::default(), report);
            }
            System::RawPostgres => {
                let database = self.database(Backend::Postgres, index)?;
                self.migrate(&database);
                let system = RawPostgresSystem::new(database.url());
                // The server is PostgreSQL itself: its processes are the database column.
                let probe = Probe {
                    pid: None,
                    database: Some("postgres"),
                };
                measure.throughput(&system, probe, report);
            }
            System::Redis { fsync_always } => {
                let dir = self
                    .work
                    .join(if fsync_always { "redis-aof" } else { "redis" });
                std::fs::create_dir_all(&dir).expect("redis dir");
                match RedisServer::start(&dir, fsync_always) {
                    Ok(server) => {
                        let system = RedisSystem {
                            addr: server.addr.clone(),
                        };
                        let probe = Probe {
                            pid: Some(server.pid()),
                            database: None,
                        };
                        measure.throughput(&system, probe, report);
                    }
                    Err(e) => {
                        eprintln!("!!! redis-server could not start ({e}): run `make bench-deps`")
                    }
                }
            }
            System::Etcd => match EtcdServer::start(self.work) {
                Ok(server) => {
                    let system = EtcdSystem {
                        addr: server.addr.clone(),
                    };
                    let probe = Probe {
                        pid: Some(server.pid()),
                        database: None,
                    };
                    measure.throughput(&system, probe, report);
                }
                Err(e) => eprintln!("!!! etcd could not start ({e}): run `make bench-deps`"),
            },
        }
        Ok(())
    }

    /// A fresh, empty database for row `index`.
    fn database(&self, backend: Backend, index: usize) -> Result<Database, Missing> {
        match backend {
            Backend::Sqlite => Ok(Database::Sqlite(self.work.join(format!("row-{index}.db")))),
            Backend::Postgres => PostgresDatabase::create(self.postgres_url, "")
                .map(Database::Postgres)
                .ok_or(Missing::Postgres),
        }
    }

    /// Lets lockd create its schema in `database` (it migrates at start), then stops it.
    fn migrate(&self, database: &Database) {
        drop(
            Lockd::start(&self.binary, &database.url(), &self.lockd_args)
                .expect("start lockd to migrate the database"),
        );
    }
}

/// Why a row could not run.
enum Missing {
    /// The PostgreSQL server did not give a database.
    Postgres,
}

fn lockd_system(server: &Lockd) -> LockdSystem {
    LockdSystem {
        addr: server.addr.clone(),
    }
}
