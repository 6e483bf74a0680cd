//! `lock-bench`: drives lockd and the systems users would pick instead with the same workloads
//! and the same client code paths, and reports throughput, latency and ratios.
//!
//! `lock-bench --quick` (make bench-quick): W1 and W2, one run each, for lockd on SQLite and on
//! PostgreSQL, Redis and etcd. `lock-bench` (make bench): every system and workload, three runs
//! each, medians and spreads, written to docs/benchmarks.md with a chart.

mod ceiling;
mod chart;
mod compare;
mod cpu;
mod etcd;
mod handoff;
mod http;
mod lockd;
mod raw_postgres;
mod raw_sqlite;
mod redis;
mod report;
mod scale;
mod stats;
mod workload;

use std::io;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;

use crate::report::{Measurement, Report};
use crate::stats::RunStats;
use crate::workload::LockSystem;

/// Benchmarks lockd against Redis and etcd.
#[derive(Debug, Parser)]
struct Args {
    /// W1 and W2 only, one short run each (under 3 minutes).
    #[arg(long)]
    quick: bool,
    /// Seconds per measured run [default: 5 with --quick, else 10].
    #[arg(long)]
    seconds: Option<u64>,
    /// Measured runs per system and workload [default: 1 with --quick, else 3].
    #[arg(long)]
    runs: Option<usize>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// The PostgreSQL server to create the benchmark database on.
    #[arg(
        long,
        env = "LOCKD_TEST_DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres_url: String,
    /// Write the report here (Markdown) with a PNG chart beside it.
    #[arg(long)]
    write: Option<PathBuf>,
    /// Only measure systems whose name contains this text (e.g. `PostgreSQL`).
    #[arg(long)]
    only: Option<String>,
    /// Only run these workloads, comma-separated (e.g. `W1,W2`; `W3` covers both scale points).
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Render the report of an earlier run again from its `.json` (written beside the
    /// Markdown) instead of measuring; needs --write.
    #[arg(long)]
    render: Option<PathBuf>,
    /// Extra flags for every lockd started (e.g. `--pool-size 32`), split on whitespace.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    lockd_args: String,
    /// Compare W1 of this lockd binary (an earlier build) with target/release/lockd, on SQLite
    /// and PostgreSQL, in one run (runs alternate between the two); prints the ratios.
    #[arg(long)]
    baseline: Option<PathBuf>,
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some(ceiling::SERVE_FLAG) {
        if let Err(e) = ceiling::serve() {
            eprintln!("the HTTP ceiling server failed: {e}");
            std::process::exit(1);
        }
        return;
    }
    let args = Args::parse();
    if let Some(source) = &args.render {
        let text = std::fs::read_to_string(source).expect("read the measurements");
        let report = Report::from_json(&text).expect("parse the measurements");
        let target = args
            .write
            .clone()
            .unwrap_or_else(|| source.with_extension("md"));
        report.write(&target).expect("write the report");
        println!("rendered {} from {}", target.display(), source.display());
        return;
    }
    let seconds = args.seconds.unwrap_or(if args.quick { 5 } else { 10 });
    let runs = args.runs.unwrap_or(if args.quick { 1 } else { 3 }).max(1);
    let plan = Plan {
        duration: Duration::from_secs(seconds),
        warmup: Duration::from_secs(1),
        runs,
        clients: args.clients,
    };
    let work = tempfile_dir();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut report = Report::new(&plan.describe(), args.quick);
    // W4 (status reads) where the system has a status read; etcd's lock API has none.
    let with_reads: &[&'static str] = if args.quick {
        &["W1", "W2"]
    } else {
        &["W1", "W2", "W4"]
    };
    let without_reads: &[&'static str] = &["W1", "W2"];
    let binary = lockd::release_binary();
    ONLY.with(|only| *only.borrow_mut() = args.only.clone());
    WORKLOADS.with(|workloads| *workloads.borrow_mut() = args.workloads.clone());
    let lockd_args: Vec<&str> = args.lockd_args.split_whitespace().collect();
    if let Some(baseline) = &args.baseline {
        compare::run(
            &runtime,
            baseline,
            &binary,
            &args.postgres_url,
            runs,
            plan.duration,
            args.clients,
            &lockd_args,
            &work,
        );
        return;
    }

    // What HTTP alone allows: actix-web with fixed answers, driven by lockd's client.
    {
        let server = lockd::Lockd::start_ceiling().expect("start the HTTP ceiling server");
        let system = lockd::LockdSystem {
            addr: server.addr.clone(),
        };
        let probe = Probe {
            pid: Some(server.pid()),
            database: None,
        };
        measure(
            &runtime,
            &plan,
            &mut report,
            HTTP_CEILING,
            &system,
            &["W1"],
            probe,
        );
    }
    // lockd on SQLite, then (full run) the same statements in-process without group commit.
    let sqlite_file = work.join("lockd.db");
    {
        let url = format!("sqlite://{}", sqlite_file.display());
        let server =
            lockd::Lockd::start(&binary, &url, &lockd_args).expect("start lockd on SQLite");
        let system = lockd::LockdSystem {
            addr: server.addr.clone(),
        };
        measure(
            &runtime,
            &plan,
            &mut report,
            "lockd (SQLite)",
            &system,
            with_reads,
            Probe {
                pid: Some(server.pid()),
                database: None,
            },
        );
    }
    if !args.quick {
        // The same, at lockd's default log level: the audit log writes a line per grant and
        // release (the other lockd runs log warnings only).
        let url = format!("sqlite://{}", work.join("lockd-audit.db").display());
        let mut with_audit = lockd_args.clone();
        with_audit.extend(["--log", "info"]);
        let server =
            lockd::Lockd::start(&binary, &url, &with_audit).expect("start lockd on SQLite");
        let system = lockd::LockdSystem {
            addr: server.addr.clone(),
        };
        let probe = Probe {
            pid: Some(server.pid()),
            database: None,
        };
        measure(
            &runtime,
            &plan,
            &mut report,
            "lockd (SQLite, audit log on)",
            &system,
            &["W1"],
            probe,
        );
    }
    if !args.quick {
        let url = format!("sqlite://{}", work.join("handoff.db").display());
        measure_handoffs(
            &runtime,
            &plan,
            &mut report,
            "lockd (SQLite)",
            &binary,
            &url,
            &lockd_args,
        );
    }
    if !args.quick {
        for synchronous in ["FULL", "NORMAL"] {
            let system =
                raw_sqlite::RawSqliteSystem::open(&sqlite_file, synchronous).expect("open SQLite");
            let name = format!("raw SQLite, a commit per statement (synchronous={synchronous})");
            measure(
                &runtime,
                &plan,
                &mut report,
                &name,
                &system,
                &["W1"],
                Probe::default(),
            );
        }
    }
    // lockd on PostgreSQL.
    match postgres_database(&args.postgres_url, "") {
        Some((admin, name, url)) => {
            {
                let server = lockd::Lockd::start(&binary, &url, &lockd_args)
                    .expect("start lockd on PostgreSQL");
                let system = lockd::LockdSystem {
                    addr: server.addr.clone(),
                };
                measure(
                    &runtime,
                    &plan,
                    &mut report,
                    "lockd (PostgreSQL)",
                    &system,
                    with_reads,
                    Probe {
                        pid: Some(server.pid()),
                        database: Some("postgres"),
                    },
                );
            }
            if !args.quick {
                measure_handoffs(
                    &runtime,
                    &plan,
                    &mut report,
                    "lockd (PostgreSQL)",
                    &binary,
                    &url,
                    &lockd_args,
                );
            }
            if !args.quick {
                let system = raw_postgres::RawPostgresSystem { url: url.clone() };
                let name = "raw PostgreSQL (tokio-postgres, same statements)";
                // The server is PostgreSQL itself: its processes are the database column.
                let probe = Probe {
                    pid: None,
                    database: Some("postgres"),
                };
                measure(&runtime, &plan, &mut report, name, &system, &["W1"], probe);
            }
            drop_database(&admin, &name);
        }
        None => eprintln!(
            "!!! PostgreSQL does not answer at {}: lockd (PostgreSQL) not measured",
            args.postgres_url
        ),
    }
    // W3: W1 with 1,000 and with 1,000,000 live locks held, on both backends.
    if !args.quick && workload_wanted("W3") {
        for live in [1_000u64, 1_000_000] {
            let label = if live == 1_000 {
                "W3 (1k live)"
            } else {
                "W3 (1M live)"
            };
            let file = work.join(format!("scale-{live}.db"));
            let url = format!("sqlite://{}", file.display());
            drop(lockd::Lockd::start(&binary, &url, &lockd_args).expect("migrate the SQLite file"));
            scale::preload_sqlite(&file, live).expect("preload SQLite");
            let server =
                lockd::Lockd::start(&binary, &url, &lockd_args).expect("start lockd on SQLite");
            let system = lockd::LockdSystem {
                addr: server.addr.clone(),
            };
            measure(
                &runtime,
                &plan,
                &mut report,
                "lockd (SQLite)",
                &system,
                &[label],
                Probe {
                    pid: Some(server.pid()),
                    database: None,
                },
            );
        }
        for live in [1_000u64, 1_000_000] {
            let label = if live == 1_000 {
                "W3 (1k live)"
            } else {
                "W3 (1M live)"
            };
            let Some((admin, name, url)) = postgres_database(&args.postgres_url, "") else {
                break;
            };
            drop(
                lockd::Lockd::start(&binary, &url, &lockd_args)
                    .expect("migrate the PostgreSQL database"),
            );
            scale::preload_postgres(&url, live).expect("preload PostgreSQL");
            {
                let server = lockd::Lockd::start(&binary, &url, &lockd_args)
                    .expect("start lockd on PostgreSQL");
                let system = lockd::LockdSystem {
                    addr: server.addr.clone(),
                };
                measure(
                    &runtime,
                    &plan,
                    &mut report,
                    "lockd (PostgreSQL)",
                    &system,
                    &[label],
                    Probe {
                        pid: Some(server.pid()),
                        database: Some("postgres"),
                    },
                );
            }
            drop_database(&admin, &name);
        }
    }
    // Redis without persistence, and with every write fsynced.
    for (name, fsync) in [
        ("Redis (no persistence)", false),
        ("Redis (appendfsync always)", true),
    ] {
        if args.quick && fsync {
            continue;
        }
        let dir = work.join(if fsync { "redis-aof" } else { "redis" });
        std::fs::create_dir_all(&dir).expect("redis dir");
        match redis::RedisServer::start(&dir, fsync) {
            Ok(server) => {
                let system = redis::RedisSystem {
                    addr: server.addr.clone(),
                };
                measure(
                    &runtime,
                    &plan,
                    &mut report,
                    name,
                    &system,
                    with_reads,
                    Probe {
                        pid: Some(server.pid()),
                        database: None,
                    },
                );
            }
            Err(e) => eprintln!("!!! redis-server could not start ({e}): run `make bench-deps`"),
        }
    }
    // etcd.
    match etcd::EtcdServer::start(&work) {
        Ok(server) => {
            let system = etcd::EtcdSystem {
                addr: server.addr.clone(),
            };
            measure(
                &runtime,
                &plan,
                &mut report,
                "etcd 3.4",
                &system,
                without_reads,
                Probe {
                    pid: Some(server.pid()),
                    database: None,
                },
            );
        }
        Err(e) => eprintln!("!!! etcd could not start ({e}): run `make bench-deps`"),
    }

    println!("{}", report.table());
    if let Some(path) = args.write {
        report.write(&path).expect("write the report");
        println!("wrote {}", path.display());
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// What to watch of a measured system: its server process and, if any, the database server's
/// processes (by command name).
#[derive(Debug, Clone, Copy, Default)]
pub struct Probe {
    pub pid: Option<u32>,
    pub database: Option<&'static str>,
}

impl Probe {
    fn rss_kib(&self) -> Option<u64> {
        self.pid.and_then(rss_kib)
    }
}

/// How long and how often each measurement runs.
pub struct Plan {
    pub duration: Duration,
    pub warmup: Duration,
    pub runs: usize,
    pub clients: usize,
}

impl Plan {
    fn describe(&self) -> String {
        format!(
            "{} clients, {} run(s) of {} s after a {} s warm-up",
            self.clients,
            self.runs,
            self.duration.as_secs(),
            self.warmup.as_secs()
        )
    }
}

thread_local! {
    static ONLY: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    static WORKLOADS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether `--workloads` selects `workload` (W3's scale points count as `W3`).
fn workload_wanted(workload: &str) -> bool {
    WORKLOADS.with(|workloads| {
        let workloads = workloads.borrow();
        workloads.is_empty() || workloads.iter().any(|w| workload.starts_with(w.as_str()))
    })
}

fn wanted(name: &str) -> bool {
    ONLY.with(|only| {
        only.borrow()
            .as_deref()
            .is_none_or(|only| name.contains(only))
    })
}

#[allow(clippy::too_many_arguments)]
fn measure<S: LockSystem>(
    runtime: &tokio::runtime::Runtime,
    plan: &Plan,
    report: &mut Report,
    name: &str,
    system: &S,
    workloads: &[&'static str],
    probe: Probe,
) {
    if !wanted(name) {
        return;
    }
    for &workload in workloads.iter().filter(|w| workload_wanted(w)) {
        // Resource names come from the tag: keep them plain in a URL path.
        let slug: String = workload
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let run = |tag: String, duration: Duration| -> RunStats {
            runtime.block_on(async {
                match workload {
                    "W2" => workload::contended(system, plan.clients, duration, &tag).await,
                    "W4" => workload::reads(system, plan.clients, duration, &tag).await,
                    // W1, and W3's scale points, which are W1 over many live locks.
                    _ => workload::uncontended(system, plan.clients, duration, &tag).await,
                }
            })
        };
        let started = Instant::now();
        let _ = run(format!("warm-{slug}"), plan.warmup);
        let before = cpu::CpuSample::take(probe.pid, probe.database);
        let runs: Vec<RunStats> = (0..plan.runs)
            .map(|i| run(format!("{slug}-{i}"), plan.duration))
            .collect();
        let operations: u64 = runs.iter().map(|r| r.operations).sum();
        let cpu =
            cpu::CpuSample::take(probe.pid, probe.database).per_operation_us(&before, operations);
        let mut measurement = Measurement::from_runs(name, workload, &runs, probe.rss_kib());
        // Only a long-lived server process can be measured: the raw anchors' database backends live
        // and die with their connections, whose CPU time /proc no longer shows afterwards.
        measurement.cpu_us = probe.pid.map(|_| cpu);
        eprintln!(
            "{name} {workload}: {:.0}/s (spread {:.0}), p50 {:.2} ms, p99 {:.2} ms, errors {} [{:.0?}]",
            measurement.per_second,
            measurement.spread,
            measurement.p50_ms,
            measurement.p99_ms,
            measurement.errors,
            started.elapsed()
        );
        report.add(measurement);
    }
}

/// The name of the HTTP ceiling in the report.
pub const HTTP_CEILING: &str = "HTTP ceiling (actix-web, fixed answers, no storage)";

/// Handoffs measured per run of W5.
const HANDOFFS_PER_RUN: usize = 100;

/// W5 on two lockd processes sharing `database_url`: the waiter on the holder's instance, then
/// on the other one.
fn measure_handoffs(
    runtime: &tokio::runtime::Runtime,
    plan: &Plan,
    report: &mut Report,
    name: &str,
    binary: &std::path::Path,
    database_url: &str,
    lockd_args: &[&str],
) {
    if !wanted(name) {
        return;
    }
    let first = lockd::Lockd::start(binary, database_url, lockd_args).expect("start lockd");
    let second = lockd::Lockd::start(binary, database_url, lockd_args).expect("start lockd");
    for (workload, waiter_addr) in [
        ("W5 (same instance)", &first.addr),
        ("W5 (other instance)", &second.addr),
    ] {
        let slug = if waiter_addr == &first.addr {
            "same"
        } else {
            "other"
        };
        let started = Instant::now();
        let _ = runtime.block_on(handoff::handoffs(
            &first.addr,
            waiter_addr,
            10,
            &format!("warm-{slug}"),
        ));
        let runs: Vec<RunStats> = (0..plan.runs)
            .map(|i| {
                runtime.block_on(handoff::handoffs(
                    &first.addr,
                    waiter_addr,
                    HANDOFFS_PER_RUN,
                    &format!("w5-{slug}-{i}"),
                ))
            })
            .collect();
        let measurement = Measurement::from_runs(name, workload, &runs, rss_kib(first.pid()));
        eprintln!(
            "{name} {workload}: {} handoffs, p50 {:.2} ms, p99 {:.2} ms, errors {} [{:.0?}]",
            measurement.operations,
            measurement.p50_ms,
            measurement.p99_ms,
            measurement.errors,
            started.elapsed()
        );
        report.add(measurement);
    }
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lock-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A fresh database on the PostgreSQL server: (admin URL, name, URL of the new database).
fn postgres_database(admin: &str, suffix: &str) -> Option<(String, String, String)> {
    let name = format!("lock_bench_{}{suffix}", std::process::id());
    let created = std::process::Command::new("psql")
        .args([admin, "-qc", &format!("CREATE DATABASE {name}")])
        .output()
        .ok()?;
    if !created.status.success() {
        return None;
    }
    let base = admin.rsplit_once('/').map_or(admin, |(base, _)| base);
    Some((admin.to_owned(), name.clone(), format!("{base}/{name}")))
}

fn drop_database(admin: &str, name: &str) {
    let _ = std::process::Command::new("psql")
        .args([
            admin,
            "-qc",
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        ])
        .output();
}

/// A TCP port free right now on 127.0.0.1.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Waits until something accepts connections at `addr`.
pub fn wait_for_port(addr: &str, within: Duration) -> io::Result<()> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(addr).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("nothing listens on {addr}"),
    ))
}

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}
