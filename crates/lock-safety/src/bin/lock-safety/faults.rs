//! The fault injector: one fault at a time, for a random 0.3 to 3 s, with quiet spells between.
//! SQLite: `kill -9` (and restart) of an instance, SIGSTOP/SIGCONT of an instance, the database's
//! write lock held from another connection (commits stall). PostgreSQL: the same kill and pause,
//! the database cut (refused) and stalled (black hole) through the proxy, slow commits (a
//! synchronous standby that does not exist), and a restart of the cluster. PostgreSQL with a
//! synchronous standby: the same kill and pause, a restart of the primary, and failovers (the
//! primary killed, the standby promoted; the old primary is then rebuilt as the new one's standby
//! before anything else happens, and a failover waits for a synchronous standby).

use std::ffi::CString;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::cluster::{Database, Fleet};
use crate::rng::Rng;
use lock_safety::proxy::Mode;

/// The longest a fault lasts.
pub const LONGEST: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    Kill9,
    Pause,
    SqliteWriteLock,
    DbCut,
    DbStall,
    SlowCommit,
    PgRestart,
    Failover,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Kill9 => "kill -9 of an instance (then restart)",
            Fault::Pause => "SIGSTOP/SIGCONT of an instance",
            Fault::SqliteWriteLock => "SQLite write lock held by another connection",
            Fault::DbCut => "database cut (connections refused and reset)",
            Fault::DbStall => "database stalled (black hole)",
            Fault::SlowCommit => "slow commits (waiting for a missing synchronous standby)",
            Fault::PgRestart => "PostgreSQL restart",
            Fault::Failover => "failover (kill -9 of the primary, its standby promoted)",
        }
    }

    pub fn for_database(db: &Database) -> Vec<Fault> {
        match db {
            Database::Sqlite { .. } => vec![Fault::Kill9, Fault::Pause, Fault::SqliteWriteLock],
            Database::Postgres { .. } => vec![
                Fault::Kill9,
                Fault::Pause,
                Fault::DbCut,
                Fault::DbStall,
                Fault::SlowCommit,
                Fault::PgRestart,
            ],
            // Failovers are what this backend is for: two draws in five.
            Database::PostgresHa { .. } => vec![
                Fault::Kill9,
                Fault::Pause,
                Fault::PgRestart,
                Fault::Failover,
                Fault::Failover,
            ],
        }
    }
}

/// One injected fault: when it started and ended (microseconds, the history's clock).
#[derive(Debug, Clone)]
pub struct Event {
    pub fault: Fault,
    pub detail: String,
    pub from: i64,
    pub to: i64,
}

/// Injects faults until `until`, then heals everything. Errors in injecting are reported and end
/// the injection (the run goes on without faults).
pub fn inject(
    db: Arc<Database>,
    fleet: Arc<Fleet>,
    kinds: Vec<Fault>,
    seed: u64,
    until: Instant,
    now: impl Fn() -> i64,
) -> (Vec<Event>, Vec<String>) {
    let mut rng = Rng::new(seed ^ 0xfa17);
    let mut events = Vec::new();
    let mut errors = Vec::new();
    loop {
        let quiet = Duration::from_millis(1000 + rng.below(3000));
        if kinds.is_empty() || Instant::now() + quiet + LONGEST >= until {
            break;
        }
        thread::sleep(quiet);
        let fault = kinds[rng.below(kinds.len() as u64) as usize];
        let lasting = Duration::from_millis(300 + rng.below(LONGEST.as_millis() as u64 - 300));
        let instance = rng.below(fleet.len() as u64) as usize;
        if let (Fault::Failover, Database::PostgresHa { pair }) = (fault, &*db) {
            // Only a failover to a synchronous standby keeps every acknowledged commit.
            if let Err(error) = pair.await_sync() {
                errors.push(format!("{}: {error}", fault.name()));
                break;
            }
        }
        let from = now();
        let result = apply(&db, &fleet, fault, instance, lasting, &now);
        let to = now();
        match result {
            Ok(detail) => events.push(Event {
                fault,
                detail,
                from,
                to,
            }),
            Err(error) => {
                errors.push(format!("{}: {error}", fault.name()));
                break;
            }
        }
        if let (Fault::Failover, Database::PostgresHa { pair }) = (fault, &*db) {
            // Outside the fault's window, before any other fault: the old primary comes back as
            // the new one's synchronous standby, while the clients go on.
            if let Err(error) = pair.rebuild(&now) {
                errors.push(format!("rebuilding the standby after a failover: {error}"));
                break;
            }
        }
    }
    if let Err(error) = heal(&db, &fleet) {
        errors.push(format!("healing: {error}"));
    }
    (events, errors)
}

fn apply(
    db: &Database,
    fleet: &Fleet,
    fault: Fault,
    instance: usize,
    lasting: Duration,
    now: &dyn Fn() -> i64,
) -> Result<String, String> {
    let ms = lasting.as_millis();
    match (fault, db) {
        (Fault::Kill9, _) => {
            fleet.kill9(instance);
            thread::sleep(lasting);
            fleet.restart(instance)?;
            Ok(format!("instance {instance} down {ms} ms"))
        }
        (Fault::Pause, _) => {
            fleet.pause(instance, true);
            thread::sleep(lasting);
            fleet.pause(instance, false);
            Ok(format!("instance {instance} stopped {ms} ms"))
        }
        (Fault::SqliteWriteLock, Database::Sqlite { path, .. }) => {
            hold_sqlite_write_lock(&path.to_string_lossy(), lasting)?;
            Ok(format!("write lock held {ms} ms"))
        }
        (Fault::DbCut | Fault::DbStall, Database::Postgres { proxy, .. }) => {
            proxy.cut(if fault == Fault::DbCut {
                Mode::Refuse
            } else {
                Mode::BlackHole
            });
            thread::sleep(lasting);
            proxy.restore();
            Ok(format!("{ms} ms"))
        }
        (Fault::SlowCommit, Database::Postgres { cluster, .. }) => {
            cluster.sql("ALTER SYSTEM SET synchronous_standby_names = 'nosuch'")?;
            cluster.sql("SELECT pg_reload_conf()")?;
            thread::sleep(lasting);
            cluster.sql("ALTER SYSTEM RESET synchronous_standby_names")?;
            cluster.sql("SELECT pg_reload_conf()")?;
            Ok(format!("{ms} ms"))
        }
        (Fault::PgRestart, Database::Postgres { cluster, .. }) => {
            let started = Instant::now();
            cluster.restart()?;
            Ok(format!("restarted in {} ms", started.elapsed().as_millis()))
        }
        (Fault::PgRestart, Database::PostgresHa { pair }) => {
            let started = Instant::now();
            pair.restart_primary()?;
            Ok(format!(
                "primary restarted in {} ms",
                started.elapsed().as_millis()
            ))
        }
        (Fault::Failover, Database::PostgresHa { pair }) => pair.failover(now),
        _ => Err("not for this database".to_owned()),
    }
}

/// Ends every fault: instances resumed and started, the proxy forwarding, commits not waiting (a
/// primary that takes writes, with its synchronous standby).
pub fn heal(db: &Database, fleet: &Fleet) -> Result<(), String> {
    match db {
        Database::Postgres { cluster, proxy } => {
            proxy.restore();
            cluster.sql("ALTER SYSTEM RESET synchronous_standby_names")?;
            cluster.sql("SELECT pg_reload_conf()")?;
        }
        Database::PostgresHa { pair } => {
            // The instances come back even when the pair cannot be healed whole.
            let healed = pair.heal();
            fleet.heal()?;
            return healed;
        }
        Database::Sqlite { .. } => {}
    }
    fleet.heal()
}

/// Opens the SQLite file and holds its write lock (`BEGIN IMMEDIATE`) for `lasting`.
fn hold_sqlite_write_lock(path: &str, lasting: Duration) -> Result<(), String> {
    use libsqlite3_sys as ffi;
    let c_path = CString::new(path).map_err(|e| e.to_string())?;
    let mut db: *mut ffi::sqlite3 = std::ptr::null_mut();
    // SAFETY: plain use of the SQLite C API on a connection this function owns and closes.
    unsafe {
        if ffi::sqlite3_open_v2(
            c_path.as_ptr(),
            &mut db,
            ffi::SQLITE_OPEN_READWRITE,
            std::ptr::null(),
        ) != ffi::SQLITE_OK
        {
            ffi::sqlite3_close(db);
            return Err(format!("cannot open {path}"));
        }
        ffi::sqlite3_busy_timeout(db, 5000);
        let exec = |sql: &str| {
            let sql = CString::new(sql).expect("no NUL");
            ffi::sqlite3_exec(
                db,
                sql.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if exec("BEGIN IMMEDIATE") != ffi::SQLITE_OK {
            ffi::sqlite3_close(db);
            return Err("BEGIN IMMEDIATE failed (busy for 5 s)".to_owned());
        }
        thread::sleep(lasting);
        exec("ROLLBACK");
        ffi::sqlite3_close(db);
    }
    Ok(())
}
