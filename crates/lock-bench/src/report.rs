//! The benchmark report: a Markdown table per workload, ratios of lockd to each anchor, and a
//! PNG chart of W1 throughput and p99 per system.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::stats::{median_and_spread, RunStats};

/// One system on one workload, over all its runs.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub system: String,
    pub workload: String,
    pub per_second: f64,
    pub spread: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
    /// Operations completed over all runs (W5: handoffs measured).
    pub operations: u64,
    pub fairness: Option<f64>,
    pub rss_kib: Option<u64>,
    /// CPU microseconds per operation: server, database, benchmark client.
    pub cpu_us: Option<(f64, f64, f64)>,
}

impl Measurement {
    pub fn from_runs(
        system: &str,
        workload: &str,
        runs: &[RunStats],
        rss_kib: Option<u64>,
    ) -> Self {
        let rates: Vec<f64> = runs.iter().map(RunStats::per_second).collect();
        let (per_second, spread) = median_and_spread(&rates);
        let all = RunStats::merge(runs.iter().cloned());
        Self {
            system: system.to_owned(),
            workload: workload.to_owned(),
            per_second,
            spread,
            p50_ms: all.percentile_ms(50.0),
            p99_ms: all.percentile_ms(99.0),
            errors: all.errors,
            operations: all.operations,
            fairness: (!all.per_client.is_empty()).then(|| all.fairness()),
            rss_kib,
            cpu_us: None,
        }
    }
}

pub struct Report {
    plan: String,
    quick: bool,
    measurements: Vec<Measurement>,
}

impl Report {
    pub fn new(plan: &str, quick: bool) -> Self {
        Self {
            plan: plan.to_owned(),
            quick,
            measurements: Vec::new(),
        }
    }

    pub fn add(&mut self, measurement: Measurement) {
        self.measurements.push(measurement);
    }

    /// The tables, as Markdown.
    pub fn table(&self) -> String {
        let mut out = String::new();
        for (workload, unit) in [
            ("W1", "cycles/s"),
            ("W2", "grants/s"),
            ("W3 (1k live)", "cycles/s"),
            ("W3 (1M live)", "cycles/s"),
            ("W4", "reads/s"),
        ] {
            let rows: Vec<&Measurement> = self
                .measurements
                .iter()
                .filter(|m| m.workload == workload)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n### {workload}\n");
            let _ = writeln!(out, "| system | {unit} (median) | spread | p50 ms | p99 ms | errors | fairness | server RSS MiB |");
            let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
            for m in rows {
                let _ = writeln!(
                    out,
                    "| {} | {:.0} | {:.0} | {:.2} | {:.2} | {} | {} | {} |",
                    m.system,
                    m.per_second,
                    m.spread,
                    m.p50_ms,
                    m.p99_ms,
                    m.errors,
                    m.fairness.map_or("–".to_owned(), |f| format!("{f:.3}")),
                    m.rss_kib
                        .map_or("–".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0)),
                );
            }
        }
        out.push_str(&self.handoff_table());
        out.push_str(&self.ratios());
        out.push_str(&self.cpu_table());
        out
    }

    /// W5: from a release to the next waiter's grant, on the releasing instance and on another.
    fn handoff_table(&self) -> String {
        let rows: Vec<&Measurement> = self
            .measurements
            .iter()
            .filter(|m| m.workload.starts_with("W5"))
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n### W5 handoff latency (release sent → waiter's grant received)\n\n| system | waiter on | handoffs | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n",
        );
        for m in rows {
            let waiter_on = m
                .workload
                .strip_prefix("W5 (")
                .and_then(|rest| rest.strip_suffix(')'))
                .unwrap_or(&m.workload);
            let _ = writeln!(
                out,
                "| {} | {waiter_on} | {} | {:.2} | {:.2} | {} |",
                m.system, m.operations, m.p50_ms, m.p99_ms, m.errors
            );
        }
        out
    }

    /// CPU time per W1 cycle, split by process: where the time goes.
    fn cpu_table(&self) -> String {
        let rows: Vec<&Measurement> = self
            .measurements
            .iter()
            .filter(|m| m.workload == "W1" && m.cpu_us.is_some())
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n### Where the CPU goes (W1, CPU microseconds per cycle)\n\n| system | server | database | benchmark client |\n|---|---|---|---|\n",
        );
        for m in rows {
            if let Some((server, database, client)) = m.cpu_us {
                let database = if database > 0.0 {
                    format!("{database:.0}")
                } else {
                    "–".to_owned()
                };
                let _ = writeln!(
                    out,
                    "| {} | {server:.0} | {database} | {client:.0} |",
                    m.system
                );
            }
        }
        out
    }

    fn ratios(&self) -> String {
        let w1 = |system: &str| {
            self.measurements
                .iter()
                .find(|m| m.workload == "W1" && m.system == system)
                .map(|m| m.per_second)
        };
        let mut out = String::from(
            "\n### Ratios (W1, same run)\n\n| lockd | anchor | ratio |\n|---|---|---|\n",
        );
        for lockd in [
            "lockd (SQLite)",
            "lockd (SQLite, audit log on)",
            "lockd (PostgreSQL)",
        ] {
            let Some(ours) = w1(lockd) else { continue };
            for anchor in self
                .measurements
                .iter()
                .filter(|m| m.workload == "W1" && !m.system.starts_with("lockd"))
            {
                if anchor.per_second > 0.0 {
                    let _ = writeln!(
                        out,
                        "| {lockd} | {} | {:.2}× |",
                        anchor.system,
                        ours / anchor.per_second
                    );
                }
            }
        }
        out
    }

    /// The measurements as JSON, kept beside the report so that it can be rendered again
    /// (`--render`) without running anything: the figures stay those of the run.
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "plan": self.plan,
            "quick": self.quick,
            "measurements": self.measurements.iter().map(|m| serde_json::json!({
                "system": m.system, "workload": m.workload, "per_second": m.per_second,
                "spread": m.spread, "p50_ms": m.p50_ms, "p99_ms": m.p99_ms, "errors": m.errors,
                "operations": m.operations,
                "fairness": m.fairness, "rss_kib": m.rss_kib,
                "cpu_us": m.cpu_us.map(|(a, b, c)| [a, b, c]),
            })).collect::<Vec<_>>(),
        })
    }

    /// A report read back from the JSON that [`Report::write`] keeps beside the Markdown.
    pub fn from_json(text: &str) -> io::Result<Self> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(io::Error::other)?;
        let number = |v: &serde_json::Value| v.as_f64().unwrap_or_default();
        let measurements = value["measurements"]
            .as_array()
            .ok_or_else(|| io::Error::other("no measurements"))?
            .iter()
            .map(|m| Measurement {
                system: m["system"].as_str().unwrap_or_default().to_owned(),
                workload: m["workload"].as_str().unwrap_or_default().to_owned(),
                per_second: number(&m["per_second"]),
                spread: number(&m["spread"]),
                p50_ms: number(&m["p50_ms"]),
                p99_ms: number(&m["p99_ms"]),
                errors: m["errors"].as_u64().unwrap_or_default(),
                operations: m["operations"].as_u64().unwrap_or_default(),
                fairness: m["fairness"].as_f64(),
                rss_kib: m["rss_kib"].as_u64(),
                cpu_us: m["cpu_us"]
                    .as_array()
                    .map(|c| (number(&c[0]), number(&c[1]), number(&c[2]))),
            })
            .collect();
        Ok(Self {
            plan: value["plan"].as_str().unwrap_or_default().to_owned(),
            quick: value["quick"].as_bool().unwrap_or_default(),
            measurements,
        })
    }

    /// Writes the Markdown report to `path`, the chart beside it (`.png`) and the measurements
    /// (`.json`).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        std::fs::write(
            path.with_extension("json"),
            serde_json::to_string_pretty(&self.to_json()).map_err(io::Error::other)? + "\n",
        )?;
        let chart = path.with_extension("png");
        crate::report::chart(&self.measurements, &chart)?;
        let mut doc = String::from("# Benchmarks\n\n");
        let _ = writeln!(doc, "Generated by `lock-bench{}` — every figure below comes from that run; do not edit by hand.\n", if self.quick { " --quick" } else { "" });
        let _ = writeln!(doc, "- Commands: `make bench-deps` (once, as root), then `make bench` (which runs `target/release/lock-bench --write docs/benchmarks.md`); `make bench-quick` for W1 and W2 only");
        let _ = writeln!(doc, "- Plan: {}", self.plan);
        let _ = writeln!(doc, "- Machine: {}", machine());
        let _ = writeln!(doc, "- Versions: {}", versions());
        let _ = writeln!(doc, "- W1: each client acquires and releases its own resource (one cycle = acquire + release). W2: all clients contend for one resource; a granted client releases at once (etcd's lock call waits in line instead of answering \"held\").");
        let _ = writeln!(
            doc,
            "\n![W1 throughput and p99 per system]({})\n",
            chart
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("benchmarks.png")
        );
        doc.push_str(&self.table());
        doc.push_str(NOTES);
        std::fs::write(path, doc)
    }
}

/// What the tables mean and how lockd spends its time; no figures here (they all come from the
/// run above).
const NOTES: &str = "
## How to read this

- Every system is driven by the same client code (`crates/lock-bench/src/workload.rs`): 64
  concurrent clients on one connection each, HTTP/1.1 keep-alive for lockd and etcd's JSON
  gateway, RESP for Redis, the PostgreSQL wire protocol with prepared statements for the raw
  PostgreSQL anchor. Client and servers share the same 2 cores, so every system pays for its
  client too; the CPU table shows how much.
- The `HTTP ceiling` row is an actix-web server (same framework, same worker count as lockd)
  that answers lockd's acquire and release requests with fixed bodies and stores nothing,
  driven by lockd's own client: the most any lockd cycle (two HTTP requests) could reach on this
  machine, whatever the storage.
- `raw SQLite` and `raw PostgreSQL` send exactly lockd's own acquire and release statements
  (`lock_store_diesel::statements`), without HTTP: the cost of the storage alone. The raw SQLite
  anchor commits each statement on its own (one fsync each); lockd commits the writes of all
  concurrent requests together (group commit) and answers each request only after the commit
  that holds it, so every acknowledged grant is durable (`synchronous = FULL`).
- W5 starts two lockd processes on one database. For each handoff a holder takes a lock, a
  waiter asks for it with `wait_seconds` (on the holder's instance, or on the other one) and
  stands in line, and the holder releases; the latency runs from sending the release to the
  waiter's grant arriving, so it includes the release's own durable commit and the waiter's.
- W3 preloads the live locks straight into the database before lockd starts, then runs W1; the
  RSS column is lockd's resident memory after the run.
- lockd runs with its default settings (durable SQLite commits, `synchronous = FULL`) but logs
  warnings only, except in the row `lockd (SQLite, audit log on)`, which runs at the default log
  level, where the audit log writes one line per grant and per release to stderr.

## Where the time goes

Per lockd cycle (acquire + release = two HTTP requests, two storage operations):
- **HTTP**: the `HTTP ceiling` row is actix-web answering the same two requests with fixed
  bodies and no storage: its `server` column is what the framework alone costs per cycle, and
  its throughput the most any lockd cycle could reach on this machine. The difference between
  that column and lockd's is lockd's own work per cycle: parsing and validating the JSON body
  and the path, the metrics middleware and problem+json error handlers, serialising the answer,
  the hand-off to the writer and the storage engine.
- **Thread hand-off**: a write is a job queued to a writer (the SQLite group-commit thread, or
  one of the PostgreSQL batch executors) and answered through a oneshot channel after the
  commit that holds it; reads run on tokio's blocking pool with a pooled connection.
- **SQL**: statements are prepared once per connection (diesel does not cache raw SQL by
  itself). On SQLite a batch is one transaction with a savepoint per operation; on PostgreSQL
  a batch is one statement over arrays (`unnest`) with at most one operation per lock, so the
  `database` column is shared by every operation of the batch.
- **fsync**: one per batch on both backends, shared by every request in it; each request is
  answered only after the commit that holds it, so every acknowledged grant is durable.
- **Redis** keeps its data in memory and answers from one thread; with `appendfsync always`
  it still batches the fsync of everything one event-loop turn wrote. Its whole cycle costs
  less CPU than the HTTP ceiling's, so on two shared cores lockd can approach it only by
  spending less per request of its own (see the CPU table), not by faster storage.
- **W2 on PostgreSQL**: when a batch shows who holds a hot lock, the acquires of other owners
  queued behind it are answered `held` without a statement each.
";

/// The versions of what was measured, as each program reports itself.
fn versions() -> String {
    let first_line = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.lines().next().map(str::trim).map(str::to_owned))
            .filter(|line| !line.is_empty())
            .unwrap_or_else(|| format!("{program}: not found"))
    };
    let lockd = crate::lockd::release_binary();
    [
        first_line(&lockd.to_string_lossy(), &["--version"]),
        first_line("redis-server", &["--version"]),
        first_line("etcd", &["--version"]),
        first_line("psql", &["--version"]),
        format!(
            "PostgreSQL server {}",
            first_line(
                "psql",
                &[
                    &std::env::var("LOCKD_TEST_DATABASE_URL")
                        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned()),
                    "-tAc",
                    "SHOW server_version",
                ],
            )
        ),
        format!("SQLite {} (bundled)", sqlite_version()),
    ]
    .join("; ")
}

fn sqlite_version() -> String {
    use diesel::{Connection, RunQueryDsl};
    #[derive(diesel::QueryableByName)]
    struct Version {
        #[diesel(sql_type = diesel::sql_types::Text)]
        version: String,
    }
    diesel::sqlite::SqliteConnection::establish(":memory:")
        .ok()
        .and_then(|mut conn| {
            diesel::sql_query("SELECT sqlite_version() AS version")
                .get_result::<Version>(&mut conn)
                .ok()
        })
        .map_or_else(|| "unknown".to_owned(), |v| v.version)
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{cores} cores, {cpu}")
}

/// A bar chart of W1 throughput with p99 latency per system.
pub fn chart(measurements: &[Measurement], path: &Path) -> io::Result<()> {
    let rows: Vec<&Measurement> = measurements.iter().filter(|m| m.workload == "W1").collect();
    crate::chart::draw(&rows, path)
}
