//! `lock-bench --baseline BINARY`: W1 for an earlier lockd build and this one, in one run, on
//! SQLite and on PostgreSQL, alternating the two binaries run by run (so that a machine that
//! slows down or speeds up during the run weighs on both alike), and the ratio of the medians.
//! This is how a change proves it costs no throughput ("at least 0.95× of before").

use std::path::Path;
use std::time::Duration;

use crate::lockd::{Lockd, LockdSystem};
use crate::stats::RunStats;
use crate::{drop_database, postgres_database, workload};

/// Measured cycles per second of each run, per (backend, binary).
struct Series {
    backend: &'static str,
    baseline: Vec<f64>,
    current: Vec<f64>,
}

/// Runs the comparison and prints a Markdown table with the ratios.
#[allow(clippy::too_many_arguments)]
pub fn run(
    runtime: &tokio::runtime::Runtime,
    baseline: &Path,
    current: &Path,
    postgres_admin: &str,
    runs: usize,
    duration: Duration,
    clients: usize,
    lockd_args: &[&str],
    work: &Path,
) {
    let mut all = Vec::new();
    {
        let mut series = Series {
            backend: "SQLite",
            baseline: Vec::new(),
            current: Vec::new(),
        };
        let urls = [
            format!("sqlite://{}", work.join("compare-baseline.db").display()),
            format!("sqlite://{}", work.join("compare-current.db").display()),
        ];
        measure(
            runtime,
            &mut series,
            [baseline, current],
            &urls,
            runs,
            duration,
            clients,
            lockd_args,
        );
        all.push(series);
    }
    // Two databases: each binary migrates its own (the baseline may not know this schema).
    let databases = [
        postgres_database(postgres_admin, "_baseline"),
        postgres_database(postgres_admin, "_current"),
    ];
    if let [Some((admin, a, url_a)), Some((_, b, url_b))] = &databases {
        let mut series = Series {
            backend: "PostgreSQL",
            baseline: Vec::new(),
            current: Vec::new(),
        };
        let urls = [url_a.clone(), url_b.clone()];
        measure(
            runtime,
            &mut series,
            [baseline, current],
            &urls,
            runs,
            duration,
            clients,
            lockd_args,
        );
        all.push(series);
        drop_database(admin, a);
        drop_database(admin, b);
    } else {
        eprintln!("!!! PostgreSQL does not answer at {postgres_admin}: not compared");
    }
    println!("\n| backend | baseline W1 cycles/s (median) | this build | ratio | runs (baseline / this) |");
    println!("|---|---|---|---|---|");
    for series in &all {
        let (b, c) = (median(&series.baseline), median(&series.current));
        println!(
            "| {} | {:.0} | {:.0} | {:.3} | {} / {} |",
            series.backend,
            b,
            c,
            c / b,
            join(&series.baseline),
            join(&series.current)
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn measure(
    runtime: &tokio::runtime::Runtime,
    series: &mut Series,
    binaries: [&Path; 2],
    urls: &[String; 2],
    runs: usize,
    duration: Duration,
    clients: usize,
    lockd_args: &[&str],
) {
    let servers: Vec<Lockd> = binaries
        .iter()
        .zip(urls)
        .map(|(binary, url)| Lockd::start(binary, url, lockd_args).expect("start lockd"))
        .collect();
    let systems: Vec<LockdSystem> = servers
        .iter()
        .map(|server| LockdSystem {
            addr: server.addr.clone(),
        })
        .collect();
    let once = |system: &LockdSystem, tag: String, duration: Duration| -> RunStats {
        runtime.block_on(workload::uncontended(system, clients, duration, &tag))
    };
    for (i, system) in systems.iter().enumerate() {
        let _ = once(system, format!("warm-{i}"), Duration::from_secs(1));
    }
    for run in 0..runs {
        // ABBA order: baseline first in even runs, this build first in odd ones.
        let order: [usize; 2] = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let stats = once(&systems[which], format!("cmp-{which}-{run}"), duration);
            let rate = stats.per_second();
            eprintln!(
                "{} {}: {:.0} cycles/s ({} errors)",
                series.backend,
                if which == 0 { "baseline" } else { "this build" },
                rate,
                stats.errors
            );
            if which == 0 {
                series.baseline.push(rate);
            } else {
                series.current.push(rate);
            }
        }
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn join(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}
