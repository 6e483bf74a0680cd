//! `lock-bench`: drives lockd and the systems users would pick instead with the same workloads
//! and the same client code paths, and reports throughput, latency and ratios.
//!
//! `lock-bench --quick` (make bench-quick): W1 and W2, one run each, for lockd on SQLite and on
//! PostgreSQL, Redis and etcd. `lock-bench` (make bench): every system and workload, three runs
//! each, medians and spreads, written to docs/benchmarks.md with a chart. What runs is the table
//! in `table.rs`, which `runner.rs` runs row by row. `lock-bench --workloads W8,W1S`: the
//! sessions' comparisons alone (holds kept alive by a session or one by one; W1 under a session
//! against plain W1).

mod ceiling;
mod chart;
mod compare;
mod cpu;
mod etcd;
mod grafana_picture;
mod handoff;
mod http;
mod kept_alive;
mod lockd;
#[cfg(test)]
mod lockd_schema;
mod measure;
mod plan;
mod postgres_database;
mod process;
mod raw_postgres;
mod raw_sqlite;
mod read_write;
mod redis;
mod report;
mod runner;
mod scale;
mod stats;
mod table;
mod workload;
mod write_rate;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::plan::{Plan, Selection};
use crate::report::Report;
use crate::runner::Bench;

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
    /// Only run these workloads, comma-separated (e.g. `W1,W2`; `W3` covers both scale points;
    /// `W8` and `W1S` are the sessions' comparisons, on lockd alone).
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// Render the report of an earlier run again from its `.json` (written beside the
    /// Markdown) instead of measuring; needs --write.
    #[arg(long)]
    render: Option<PathBuf>,
    /// Extra flags for every lockd started (e.g. `--pool-size 32`), split on whitespace.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    lockd_args: String,
    /// Compare W1 (or each of `--workloads`, of W1, W2 and W6) of this lockd binary (an earlier
    /// build) with target/release/lockd, on SQLite and PostgreSQL (or the one `--only` names),
    /// in one run (runs alternate between the two); prints the ratios.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Extra flags for the baseline's lockd only (with --baseline), after `--lockd-args`: with
    /// the same binary as baseline, compares two settings (`make bench-history` compares
    /// `--history-retention-hours 0` with the default).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    baseline_args: String,
    /// Instead of benchmarking: run a short mixed load on one lockd (SQLite), sample /metrics
    /// every second and draw the Grafana dashboard's panels (docs/grafana/lockd.json) to this PNG
    /// (`make grafana-picture`); `--seconds` is the load's length [default: 60].
    #[arg(long)]
    grafana_picture: Option<PathBuf>,
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
    if let Some(picture) = &args.grafana_picture {
        let work = process::work_dir();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let seconds = args.seconds.unwrap_or(60);
        let drawn =
            grafana_picture::run(&runtime, &lockd::release_binary(), &work, picture, seconds);
        let _ = std::fs::remove_dir_all(&work);
        if let Err(error) = drawn {
            eprintln!("the dashboard's picture could not be drawn: {error}");
            std::process::exit(1);
        }
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
    let work = process::work_dir();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let bench = Bench {
        runtime: &runtime,
        plan: &plan,
        binary: lockd::release_binary(),
        lockd_args: args.lockd_args.split_whitespace().collect(),
        postgres_url: &args.postgres_url,
        work: &work,
    };
    if let Some(baseline) = &args.baseline {
        let baseline_args: Vec<&str> = args.baseline_args.split_whitespace().collect();
        compare::run(
            &bench,
            baseline,
            &baseline_args,
            args.only.as_deref(),
            &args.workloads,
        );
    } else {
        let selection = Selection {
            quick: args.quick,
            only: args.only.clone(),
            workloads: args.workloads.clone(),
        };
        let mut report = Report::new(&plan.describe(), args.quick);
        bench.run(table::TABLE, &selection, &mut report);
        println!("{}", report.table());
        if let Some(path) = args.write {
            report.write(&path).expect("write the report");
            println!("wrote {}", path.display());
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}
