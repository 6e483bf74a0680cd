//! `lock-bench --baseline BINARY`: W1 (or each of `--workloads W1,W2,W6`) for an earlier lockd
//! build and this one, in one run, on SQLite and on PostgreSQL, alternating the two binaries run
//! by run (so that a machine that
//! slows down or speeds up during the run weighs on both alike), and two ratios: of the medians,
//! and the median of the ratios of each pair of adjacent runs (which a slow drift of the machine
//! during the run does not move). This is how a change proves it costs no throughput ("at least
//! 0.95× of before"). `--only SQLite` or `--only PostgreSQL` compares on one backend.

use std::path::Path;
use std::time::Duration;

use crate::cpu::CpuSample;
use crate::lockd::{Lockd, LockdSystem};
use crate::postgres_database::PostgresDatabase;
use crate::runner::Bench;
use crate::stats::{median, median_of_paired_ratios, RunStats};
use crate::workload;

/// The lockd the current build is compared with: a binary, and flags of its own.
struct Baseline<'a> {
    binary: &'a Path,
    args: &'a [&'a str],
}

/// The workloads a comparison can run.
const COMPARABLE: [&str; 3] = ["W1", "W2", "W6"];

/// Measured cycles per second of each run, per (backend, workload, binary).
struct Series {
    backend: &'static str,
    workload: &'static str,
    baseline: Vec<f64>,
    current: Vec<f64>,
    /// lockd's CPU microseconds per cycle of each run, and (PostgreSQL) the database's.
    baseline_cpu: Vec<(f64, f64)>,
    current_cpu: Vec<(f64, f64)>,
}

/// Runs the comparison of `baseline` with `bench.binary` and prints a Markdown table with the
/// ratios. Runs, duration and clients come from `bench.plan`.
pub fn run(
    bench: &Bench<'_>,
    baseline: &Path,
    baseline_args: &[&str],
    only: Option<&str>,
    workloads: &[String],
) {
    let wanted = |backend: &str| only.is_none_or(|only| backend.contains(only));
    let workloads: Vec<&'static str> = COMPARABLE
        .into_iter()
        .filter(|w| {
            if workloads.is_empty() {
                *w == "W1"
            } else {
                workloads.iter().any(|asked| asked == w)
            }
        })
        .collect();
    let baseline = Baseline {
        binary: baseline,
        args: baseline_args,
    };
    let mut all = Vec::new();
    for workload in workloads {
        if wanted("SQLite") {
            compare_sqlite(bench, &baseline, workload, &mut all);
        }
        if wanted("PostgreSQL") {
            compare_postgres(bench, &baseline, workload, &mut all);
        }
    }
    if !baseline_args.is_empty() {
        println!(
            "\nbaseline: {} {}",
            baseline.binary.display(),
            baseline_args.join(" ")
        );
    }
    println!("\n| backend | workload | baseline cycles/s (median) | this build | ratio of medians | median of paired ratios | lockd CPU µs/cycle (baseline / this) | database CPU µs/cycle (baseline / this) | runs (baseline / this) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for series in &all {
        let (b, c) = (median(&series.baseline), median(&series.current));
        let cpu = |runs: &[(f64, f64)], which: fn(&(f64, f64)) -> f64| {
            median(&runs.iter().map(which).collect::<Vec<f64>>())
        };
        let database = if series.backend == "PostgreSQL" {
            format!(
                "{:.0} / {:.0}",
                cpu(&series.baseline_cpu, |r| r.1),
                cpu(&series.current_cpu, |r| r.1)
            )
        } else {
            "–".to_owned()
        };
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.3} | {:.3} | {:.0} / {:.0} | {} | {} / {} |",
            series.backend,
            series.workload,
            b,
            c,
            c / b,
            median_of_paired_ratios(&series.baseline, &series.current),
            cpu(&series.baseline_cpu, |r| r.0),
            cpu(&series.current_cpu, |r| r.0),
            database,
            join(&series.baseline),
            join(&series.current)
        );
    }
}

fn compare_sqlite(
    bench: &Bench<'_>,
    baseline: &Baseline<'_>,
    workload: &'static str,
    all: &mut Vec<Series>,
) {
    let urls = [
        format!(
            "sqlite://{}",
            bench.work.join("compare-baseline.db").display()
        ),
        format!(
            "sqlite://{}",
            bench.work.join("compare-current.db").display()
        ),
    ];
    all.push(measure(bench, "SQLite", workload, baseline, &urls));
}

fn compare_postgres(
    bench: &Bench<'_>,
    baseline: &Baseline<'_>,
    workload: &'static str,
    all: &mut Vec<Series>,
) {
    // Two databases: each binary migrates its own (the baseline may not know this schema).
    let databases = [
        PostgresDatabase::create(bench.postgres_url, "_baseline"),
        PostgresDatabase::create(bench.postgres_url, "_current"),
    ];
    if let [Some(a), Some(b)] = &databases {
        let urls = [a.url().to_owned(), b.url().to_owned()];
        all.push(measure(bench, "PostgreSQL", workload, baseline, &urls));
    } else {
        eprintln!(
            "!!! PostgreSQL does not answer at {}: not compared",
            bench.postgres_url
        );
    }
}

/// `workload` of `baseline` on `urls[0]` and of this build on `urls[1]`, alternating run by run.
fn measure(
    bench: &Bench<'_>,
    backend: &'static str,
    workload: &'static str,
    baseline: &Baseline<'_>,
    urls: &[String; 2],
) -> Series {
    let mut series = Series {
        backend,
        workload,
        baseline: Vec::new(),
        current: Vec::new(),
        baseline_cpu: Vec::new(),
        current_cpu: Vec::new(),
    };
    let database_process = (backend == "PostgreSQL").then_some("postgres");
    let (runtime, clients) = (bench.runtime, bench.plan.clients);
    let baseline_flags: Vec<&str> = bench
        .lockd_args
        .iter()
        .chain(baseline.args)
        .copied()
        .collect();
    let servers = [
        Lockd::start(baseline.binary, &urls[0], &baseline_flags).expect("start the baseline"),
        Lockd::start(&bench.binary, &urls[1], &bench.lockd_args).expect("start lockd"),
    ];
    let systems: Vec<LockdSystem> = servers
        .iter()
        .map(|server| LockdSystem {
            addr: server.addr.clone(),
        })
        .collect();
    let once = |system: &LockdSystem, tag: String, duration: Duration| -> RunStats {
        runtime.block_on(async {
            match workload {
                "W2" => workload::contended(system, clients, duration, &tag).await,
                "W6" => workload::semaphores(system, clients, duration, &tag).await,
                _ => workload::uncontended(system, clients, duration, &tag).await,
            }
        })
    };
    for (i, system) in systems.iter().enumerate() {
        let _ = once(system, format!("warm-{i}"), Duration::from_secs(1));
    }
    for run in 0..bench.plan.runs {
        // ABBA order: baseline first in even runs, this build first in odd ones.
        let order: [usize; 2] = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let before = CpuSample::take(Some(servers[which].pid()), database_process);
            let stats = once(
                &systems[which],
                format!("cmp-{which}-{run}"),
                bench.plan.duration,
            );
            let after = CpuSample::take(Some(servers[which].pid()), database_process);
            let (server_us, database_us, _) = after.per_operation_us(&before, stats.operations);
            let rate = stats.per_second();
            eprintln!(
                "{} {} {}: {:.0} cycles/s ({} errors)",
                series.backend,
                series.workload,
                if which == 0 { "baseline" } else { "this build" },
                rate,
                stats.errors
            );
            if which == 0 {
                series.baseline.push(rate);
                series.baseline_cpu.push((server_us, database_us));
            } else {
                series.current.push(rate);
                series.current_cpu.push((server_us, database_us));
            }
        }
    }
    series
}

fn join(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}
