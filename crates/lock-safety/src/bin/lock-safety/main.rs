//! `lock-safety`: runs several lockd instances on one database, many concurrent clients doing
//! random lock (exclusive, shared, several at once, force-released by an admin), election and
//! semaphore operations, and a fault injector; records every operation; reads lockd's own
//! history of each lock and election back once the faults are over; then checks the histories
//! (see the `lock_safety` library) and exits non-zero on any violation.
//! docs/safety.md explains how to run it and read its output.

mod cluster;
mod elections;
mod failovers;
mod faults;
mod force_release;
mod ha_cluster;
mod multi_locks;
mod observers;
mod output;
mod recorded;
mod rng;
mod semaphores;
mod sessions;
mod shared_locks;
mod verdict;
mod workload;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use lock_safety::permits::PermitHistory;
use lock_safety::{History, MultiHistory, SharedHistory};

use crate::cluster::{Database, Fleet, PgCluster};
use crate::faults::Fault;
use crate::output::{read_histories, write_history, Histories};
use crate::verdict::verdict;
use crate::workload::{Clock, Plan};

/// How many semaphores the clients share.
const SEMAPHORES: usize = 2;
/// How many resources the clients lock in both modes (besides `--resources`).
const SHARED_RESOURCES: usize = 2;
/// The lock-delay (seconds) of every acquire of the lock-delayed resource.
const LOCK_DELAY_SECONDS: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
    /// A PostgreSQL primary and its synchronous standby, failed over under load.
    PostgresHa,
}

/// Record a history of lock and semaphore operations against lockd under faults, then check it.
#[derive(Debug, Parser)]
#[command(name = "lock-safety")]
struct Args {
    /// How long the clients run.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// The seed of every random choice (clients and faults); random when absent, and printed.
    #[arg(long, env = "LOCK_SAFETY_SEED")]
    seed: Option<u64>,
    #[arg(long, value_enum, default_value = "sqlite")]
    backend: Backend,
    /// lockd instances on the one database.
    #[arg(long, default_value_t = 2)]
    instances: usize,
    /// Concurrent clients (threads).
    #[arg(long, default_value_t = 10)]
    clients: usize,
    /// Resources the clients share.
    #[arg(long, default_value_t = 4)]
    resources: usize,
    /// The lockd binary.
    #[arg(long, env = "LOCKD_BINARY", default_value = "target/debug/lockd")]
    lockd: PathBuf,
    /// Where PostgreSQL's initdb and pg_ctl are (a private cluster is made for the run).
    #[arg(
        long,
        env = "LOCKD_PG_BIN",
        default_value = "/usr/lib/postgresql/15/bin"
    )]
    pg_bin: PathBuf,
    /// Run without injecting faults.
    #[arg(long)]
    no_faults: bool,
    /// Run without shared-mode locks (for a server that does not support them yet).
    #[arg(long)]
    no_shared: bool,
    /// Run without election operations (for a server without `/elections`).
    #[arg(long)]
    no_elections: bool,
    /// Run without the lock-delayed resource (for a server without `lock_delay_seconds`).
    #[arg(long)]
    no_lock_delay: bool,
    /// Run without multi-lock operations (`POST /locks`, `DELETE /locks`; for a server without
    /// them).
    #[arg(long)]
    no_multi: bool,
    /// Run without force-releases, and without reading lockd's history of the locks after the
    /// run (for a server without them).
    #[arg(long)]
    no_force_release: bool,
    /// Run without session clients (for a server without `/sessions`; every fifth client works
    /// under sessions otherwise).
    #[arg(long)]
    no_sessions: bool,
    /// No observers (by default every lock and election is observed on every instance, so that
    /// the instances' observe watches record the expiries they see while the faults happen).
    #[arg(long)]
    no_observers: bool,
    /// The most states one resource's linearizability search may explore before it reports
    /// "unknown".
    #[arg(long, default_value_t = 3_000_000)]
    budget: u64,
    /// Check a recorded history (the `history.jsonl` of an earlier run, and the `permits.jsonl`,
    /// `shared.jsonl`, `multi.jsonl` and `records.jsonl` beside it if there are) instead of
    /// running.
    #[arg(long)]
    check: Option<PathBuf>,
    /// Where the lockd logs and the recorded history go (default target/safety/BACKEND-SEED).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(path) = &args.check {
        return match read_histories(path) {
            Ok(histories) => verdict(&histories, args.budget, &[], &[], "recorded", &args),
            Err(error) => {
                eprintln!("lock-safety: {error}");
                ExitCode::from(2)
            }
        };
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            % 1_000_000_007
    });
    let backend = match args.backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
        Backend::PostgresHa => "postgres-ha",
    };
    println!(
        "lock-safety: backend {backend}, seed {seed}, {} s, {} instances, {} clients, {} resources, {} locked in both modes, {} elections, multi-locks {}, force-releases {}, sessions {}, observers {}, {} semaphores (limit {}), faults {}",
        args.seconds,
        args.instances,
        args.clients,
        args.resources,
        if args.no_shared { 0 } else { SHARED_RESOURCES },
        if args.no_elections { 0 } else { elections::ELECTIONS },
        if args.no_multi { "off" } else { "on" },
        if args.no_force_release { "off" } else { "on" },
        if args.no_sessions { "off" } else { "on" },
        if args.no_observers { "off" } else { "on" },
        SEMAPHORES,
        semaphores::LIMIT,
        if args.no_faults { "off" } else { "on" }
    );
    match run(&args, seed, backend) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("lock-safety: {error} (seed {seed})");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args, seed: u64, backend: &str) -> Result<ExitCode, String> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/safety/{backend}-{seed}")));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    if !args.lockd.exists() {
        return Err(format!(
            "no lockd binary at {} (build it, or pass --lockd)",
            args.lockd.display()
        ));
    }
    let db = Arc::new(match args.backend {
        Backend::Sqlite => {
            let dir = tempfile::Builder::new()
                .prefix("lock-safety-sqlite")
                .tempdir()
                .map_err(|e| format!("temp dir: {e}"))?;
            Database::Sqlite {
                path: dir.path().join("lockd.db"),
                _dir: dir,
            }
        }
        Backend::Postgres => {
            let cluster = PgCluster::start(&args.pg_bin)?;
            let upstream: SocketAddr = format!("127.0.0.1:{}", cluster.port)
                .parse()
                .expect("address");
            let proxy = lock_safety::proxy::Proxy::start(upstream);
            Database::Postgres { cluster, proxy }
        }
        Backend::PostgresHa => Database::PostgresHa {
            pair: ha_cluster::PgPair::start(&args.pg_bin)?,
        },
    });
    let fleet = Arc::new(Fleet::start(
        &args.lockd,
        &db.url(),
        args.instances.max(1),
        &out,
    )?);
    let clock = Clock::new();
    let start = clock.now();
    let run_id = format!("safety-{seed}");
    let mut resources: Vec<String> = (0..args.resources.max(1))
        .map(|j| format!("{run_id}/r{j}"))
        .collect();
    let mut lock_delays = std::collections::BTreeMap::new();
    if !args.no_lock_delay {
        // One more resource, under the listings' prefix, whose every acquire asks for a delay.
        let delayed = format!("{run_id}/delayed");
        lock_delays.insert(delayed.clone(), LOCK_DELAY_SECONDS);
        resources.push(delayed);
        // And one of the semaphores: its grants' permits stay taken that long after they end.
        lock_delays.insert(format!("{run_id}/s1"), LOCK_DELAY_SECONDS);
    }
    let mut plan = Plan {
        resources,
        lock_delays,
        // Outside the listings' prefix `{run_id}/`.
        shared_resources: (0..if args.no_shared { 0 } else { SHARED_RESOURCES })
            .map(|j| format!("{run_id}-shared/r{j}"))
            .collect(),
        // Outside the listings' prefix too.
        elections: (0..if args.no_elections {
            0
        } else {
            elections::ELECTIONS
        })
            .map(|j| format!("{run_id}-election/e{j}"))
            .collect(),
        semaphores: (0..SEMAPHORES).map(|j| format!("{run_id}/s{j}")).collect(),
        multi: false,
        force_release: !args.no_force_release,
        sessions: !args.no_sessions,
        prefix: format!("{run_id}/"),
        run_id,
        clients: args.clients.max(1),
        until: Instant::now() + Duration::from_secs(args.seconds),
        seed,
    };
    plan.multi = !args.no_multi && multi_locks::possible(&plan);
    let plan = Arc::new(plan);
    let clients: Vec<_> = (0..plan.clients)
        .map(|c| {
            let (plan, fleet) = (Arc::clone(&plan), Arc::clone(&fleet));
            thread::spawn(move || workload::client(plan, fleet, clock, c))
        })
        .collect();
    let observers = if args.no_observers {
        Vec::new()
    } else {
        observers::spawn(&plan, &fleet)
    };
    let kinds = if args.no_faults {
        Vec::new()
    } else {
        Fault::for_database(&db)
    };
    let injector = {
        let (db, fleet, until) = (Arc::clone(&db), Arc::clone(&fleet), plan.until);
        thread::spawn(move || faults::inject(db, fleet, kinds, seed, until, move || clock.now()))
    };
    let mut ops = Vec::new();
    let mut permit_ops = Vec::new();
    let mut shared_ops = Vec::new();
    let mut multi_ops = Vec::new();
    for client in clients {
        let recorded = client.join().map_err(|_| "a client thread panicked")?;
        ops.extend(recorded.locks);
        permit_ops.extend(recorded.permits);
        shared_ops.extend(recorded.shared);
        multi_ops.extend(recorded.multi);
    }
    let (events, fault_errors) = injector.join().map_err(|_| "the fault injector panicked")?;
    for observer in observers {
        observer.join().map_err(|_| "an observer thread panicked")?;
    }
    // The faults are over and healed: every instance runs again.
    let records = plan
        .force_release
        .then(|| recorded::read(&fleet, &plan.resources, &plan.elections));
    fleet.stop();
    drop(fleet);
    let failovers = match &*db {
        Database::PostgresHa { pair } => {
            pair.keep_logs(&out);
            pair.failovers()
        }
        _ => Vec::new(),
    };
    drop(db);

    let mut history = History::new(start, seed);
    // The elections are checked as the locks they are, each a resource of its own.
    history.resources = plan.resources.clone();
    history.resources.extend(plan.elections.iter().cloned());
    history.lock_delays = plan
        .lock_delays
        .iter()
        .filter(|(resource, _)| plan.resources.contains(resource))
        .map(|(resource, seconds)| (resource.clone(), i64::from(*seconds) * 1_000_000))
        .collect();
    // An operation left unanswered may still take effect after its client gave up: while its
    // instance was paused, behind a held write lock or a stalled commit (one fault at a time,
    // each at most faults::LONGEST), then within lockd's own bounds (a pool wait of 2 s, a
    // statement timeout of 1.5 s).
    history.horizon_us = (faults::LONGEST + Duration::from_secs(4)).as_micros() as i64;
    ops.sort_by_key(|op| (op.invoke, op.client));
    for op in ops {
        history.push(op);
    }
    let mut permit_history = PermitHistory::new(start, seed);
    permit_history.names = plan.semaphores.clone();
    permit_history.lock_delays = plan
        .lock_delays
        .iter()
        .filter(|(name, _)| plan.semaphores.contains(name))
        .map(|(name, seconds)| (name.clone(), i64::from(*seconds) * 1_000_000))
        .collect();
    permit_history.horizon_us = history.horizon_us;
    permit_history.margin_us = history.margin_us;
    permit_ops.sort_by_key(|op| (op.invoke, op.client));
    for op in permit_ops {
        permit_history.push(op);
    }
    let mut shared_history = SharedHistory::new(start, seed);
    shared_history.resources = plan.shared_resources.clone();
    shared_history.horizon_us = history.horizon_us;
    shared_history.margin_us = history.margin_us;
    shared_ops.sort_by_key(|op| (op.invoke, op.client));
    for op in shared_ops {
        shared_history.push(op);
    }
    let mut multi_history = MultiHistory::new(start, seed);
    multi_history.horizon_us = history.horizon_us;
    multi_history.margin_us = history.margin_us;
    multi_ops.sort_by_key(|op| (op.invoke, op.client));
    for op in multi_ops {
        multi_history.push(op);
    }
    let histories = Histories {
        locks: history,
        permits: permit_history,
        shared: shared_history,
        multi: multi_history,
        records,
    };
    write_history(&histories, &events, &out);
    let failovers = failovers::report(&histories.locks, &failovers);
    if !failovers.is_empty() {
        let _ = std::fs::write(out.join("failovers.txt"), &failovers);
        print!("{failovers}");
    }
    println!("history and lockd logs: {}", out.display());

    Ok(verdict(
        &histories,
        args.budget,
        &events,
        &fault_errors,
        backend,
        args,
    ))
}
