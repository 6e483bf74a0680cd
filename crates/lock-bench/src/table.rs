//! The benchmark as data: which systems run which workloads, in the order the report shows them.
//! `runner.rs` runs this table row by row; nothing else decides what is measured.

/// The database a lockd (or a raw ceiling) runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }

    /// The command name of the database server's processes, whose CPU time counts as the
    /// database's (SQLite runs inside lockd).
    pub fn database_process(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some("postgres"),
        }
    }
}

/// SQLite's `synchronous` setting for the raw SQLite ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// An fsync at every commit (lockd's default).
    Full,
    /// In WAL mode, an fsync only at checkpoints: a commit may be lost on power failure.
    Normal,
}

impl Synchronous {
    pub fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// A measured system and how it is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    /// actix-web answering lockd's requests with fixed bodies, storing nothing (`ceiling.rs`).
    HttpCeiling,
    /// The release build of lockd on a fresh database. `audit_log` runs it at its default log
    /// level (an audit line per grant and release) instead of warnings only; `live_locks` preloads
    /// that many live locks into the database before it starts.
    Lockd {
        backend: Backend,
        audit_log: bool,
        live_locks: u64,
    },
    /// Two lockd processes on one fresh database (W5: a waiter on either of them).
    LockdPair { backend: Backend },
    /// The raw SQLite ceiling (`raw_sqlite.rs`) on a database file lockd has migrated.
    RawSqlite { synchronous: Synchronous },
    /// The raw PostgreSQL ceiling (`raw_postgres.rs`) on a database lockd has migrated.
    RawPostgres,
    /// redis-server without persistence, or with every write fsynced (`appendfsync always`).
    Redis { fsync_always: bool },
    /// A single-member etcd.
    Etcd,
}

impl System {
    /// Whether the system needs the PostgreSQL server.
    pub fn on_postgres(self) -> bool {
        matches!(
            self,
            System::Lockd {
                backend: Backend::Postgres,
                ..
            } | System::LockdPair {
                backend: Backend::Postgres
            } | System::RawPostgres
        )
    }
}

/// Which of two lockd instances a W5 waiter talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instance {
    /// The holder's: the release wakes the waiter in process.
    Same,
    /// Another one on the same database: the wake-up crosses processes.
    Other,
}

/// A workload, as `workload.rs` and `handoff.rs` drive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Each client acquires and releases its own resource (one cycle = acquire + release).
    W1,
    /// All clients contend for one resource; a granted client releases at once.
    W2,
    /// W1 while `live` locks are held (the system must be preloaded with them).
    W3 { live: u64 },
    /// Status reads of held resources.
    W4,
    /// Handoff latency: from a release to the grant of a waiter standing in line.
    W5 { waiter: Instance },
    /// Semaphore permits: the clients share 4 semaphores of limit 8, one permit each.
    W6,
    /// A read/write lock: the clients share one resource, 90 % of acquires shared.
    W7,
    /// 100 holds per client kept alive by one session per client, against the same holds as
    /// plain leases renewed one by one, W1's cycles beside them (`kept_alive.rs`).
    W8,
    /// W1 with each client under a session of its own, against plain W1 (alternating runs).
    W1S,
}

impl Workload {
    /// The workload's name in the report (and the prefix `--workloads` matches).
    pub fn label(self) -> String {
        match self {
            Workload::W1 => "W1".to_owned(),
            Workload::W2 => "W2".to_owned(),
            Workload::W3 { live } => format!("W3 ({} live)", count(live)),
            Workload::W4 => "W4".to_owned(),
            Workload::W5 {
                waiter: Instance::Same,
            } => "W5 (same instance)".to_owned(),
            Workload::W5 {
                waiter: Instance::Other,
            } => "W5 (other instance)".to_owned(),
            Workload::W6 => "W6".to_owned(),
            Workload::W7 => "W7".to_owned(),
            Workload::W8 => "W8".to_owned(),
            Workload::W1S => "W1S".to_owned(),
        }
    }

    /// Whether `--quick` runs it.
    pub fn in_quick(self) -> bool {
        matches!(self, Workload::W1 | Workload::W2)
    }

    /// W8 and W1S: each compares sessions with plain leases within one lockd's runs, which
    /// `Measure::sessions` makes (not a throughput of its own).
    pub fn compares_sessions(self) -> bool {
        matches!(self, Workload::W8 | Workload::W1S)
    }
}

/// `1k`, `1M`: a count as the report's headings write it.
fn count(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// One row of the table: a system, its name in the report, the workloads it runs, and whether
/// `--quick` runs it at all (then only its W1 and W2).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub name: &'static str,
    pub system: System,
    pub workloads: &'static [Workload],
    pub in_quick: bool,
}

/// The name of the HTTP ceiling in the report.
pub const HTTP_CEILING: &str = "HTTP ceiling (actix-web, fixed answers, no storage)";

const LOCKD_SQLITE: System = System::Lockd {
    backend: Backend::Sqlite,
    audit_log: false,
    live_locks: 0,
};
const LOCKD_POSTGRES: System = System::Lockd {
    backend: Backend::Postgres,
    audit_log: false,
    live_locks: 0,
};
/// W4 where the system has a status read (etcd's lock API has none, the ceiling answers only
/// acquire and release), W6 where it has semaphores and W7 where it has read/write locks (etcd
/// has neither in its API).
const EVERY_PRIMITIVE: &[Workload] = &[
    Workload::W1,
    Workload::W2,
    Workload::W4,
    Workload::W6,
    Workload::W7,
];
/// The sessions' comparisons, on a lockd of their own (a fresh database, whose writes W8 counts).
const SESSIONS: &[Workload] = &[Workload::W8, Workload::W1S];
const HANDOFFS: &[Workload] = &[
    Workload::W5 {
        waiter: Instance::Same,
    },
    Workload::W5 {
        waiter: Instance::Other,
    },
];

const fn row(name: &'static str, system: System, workloads: &'static [Workload]) -> Row {
    Row {
        name,
        system,
        workloads,
        in_quick: false,
    }
}

const fn quick(name: &'static str, system: System, workloads: &'static [Workload]) -> Row {
    Row {
        in_quick: true,
        ..row(name, system, workloads)
    }
}

const fn scaled(backend: Backend, name: &'static str, live: u64, w3: &'static [Workload]) -> Row {
    row(
        name,
        System::Lockd {
            backend,
            audit_log: false,
            live_locks: live,
        },
        w3,
    )
}

/// Every measurement of a full run, in report order; `--quick` keeps the rows marked `quick`.
pub const TABLE: &[Row] = &[
    quick(HTTP_CEILING, System::HttpCeiling, &[Workload::W1]),
    quick("lockd (SQLite)", LOCKD_SQLITE, EVERY_PRIMITIVE),
    row(
        "lockd (SQLite, audit log on)",
        System::Lockd {
            backend: Backend::Sqlite,
            audit_log: true,
            live_locks: 0,
        },
        &[Workload::W1],
    ),
    row(
        "lockd (SQLite)",
        System::LockdPair {
            backend: Backend::Sqlite,
        },
        HANDOFFS,
    ),
    row(
        "raw SQLite, a commit per statement (synchronous=FULL)",
        System::RawSqlite {
            synchronous: Synchronous::Full,
        },
        &[Workload::W1],
    ),
    row(
        "raw SQLite, a commit per statement (synchronous=NORMAL)",
        System::RawSqlite {
            synchronous: Synchronous::Normal,
        },
        &[Workload::W1],
    ),
    quick("lockd (PostgreSQL)", LOCKD_POSTGRES, EVERY_PRIMITIVE),
    row(
        "lockd (PostgreSQL)",
        System::LockdPair {
            backend: Backend::Postgres,
        },
        HANDOFFS,
    ),
    row(
        "raw PostgreSQL, a commit per statement (tokio-postgres)",
        System::RawPostgres,
        &[Workload::W1, Workload::W6, Workload::W7],
    ),
    scaled(
        Backend::Sqlite,
        "lockd (SQLite)",
        1_000,
        &[Workload::W3 { live: 1_000 }],
    ),
    scaled(
        Backend::Sqlite,
        "lockd (SQLite)",
        1_000_000,
        &[Workload::W3 { live: 1_000_000 }],
    ),
    scaled(
        Backend::Postgres,
        "lockd (PostgreSQL)",
        1_000,
        &[Workload::W3 { live: 1_000 }],
    ),
    scaled(
        Backend::Postgres,
        "lockd (PostgreSQL)",
        1_000_000,
        &[Workload::W3 { live: 1_000_000 }],
    ),
    row("lockd (SQLite)", LOCKD_SQLITE, SESSIONS),
    row("lockd (PostgreSQL)", LOCKD_POSTGRES, SESSIONS),
    quick(
        "Redis (no persistence)",
        System::Redis {
            fsync_always: false,
        },
        EVERY_PRIMITIVE,
    ),
    row(
        "Redis (appendfsync always)",
        System::Redis { fsync_always: true },
        EVERY_PRIMITIVE,
    ),
    quick("etcd 3.4", System::Etcd, &[Workload::W1, Workload::W2]),
];

#[cfg(test)]
mod tests;
