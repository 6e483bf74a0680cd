//! `lock-bench`: drives lockd (and, for comparison, the systems users would pick instead) with
//! the same workloads, and reports throughput and latency.

mod http;
mod lockd;
mod stats;

use std::time::Duration;

use clap::Parser;

/// Benchmarks lockd.
#[derive(Debug, Parser)]
struct Args {
    /// Seconds per measured run.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Database URL for lockd (default: a SQLite file in a temporary directory).
    #[arg(long)]
    database_url: Option<String>,
}

fn main() {
    let args = Args::parse();
    let dir = std::env::temp_dir().join(format!("lock-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let url = args
        .database_url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", dir.join("bench.db").display()));
    let server = lockd::Lockd::start(&lockd::release_binary(), &url, &[]).expect("start lockd");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let duration = Duration::from_secs(args.seconds);
    let w1 = runtime.block_on(lockd::uncontended(
        &server.addr,
        args.clients,
        duration,
        "w1",
    ));
    println!(
        "W1 lockd {url}: {:.0} cycles/s, p50 {:.2} ms, p99 {:.2} ms, errors {}",
        w1.per_second(),
        w1.percentile_ms(50.0),
        w1.percentile_ms(99.0),
        w1.errors
    );
    let w2 = runtime.block_on(lockd::contended(&server.addr, args.clients, duration, "w2"));
    println!(
        "W2 lockd: {:.0} grants/s, fairness {:.3}, p99 {:.2} ms, errors {}",
        w2.per_second(),
        w2.fairness(),
        w2.percentile_ms(99.0),
        w2.errors
    );
    println!("lockd RSS: {} KiB", server.rss_kib().unwrap_or_default());
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
