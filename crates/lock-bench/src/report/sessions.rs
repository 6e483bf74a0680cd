//! The sessions' measurements in the report: W8 (holds kept alive by a session or one by one,
//! with W1's cycles beside them) and W1S (W1 under a session against plain W1), each summarised
//! over its runs, as Markdown tables of figures and ratios, and as JSON.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::kept_alive::{KeptRun, W8_CYCLERS, W8_HOLDS_PER_CLIENT, W8_TTL_SECONDS};
use crate::stats::{median, median_of_paired_ratios, percentile, RunStats};
use crate::write_rate::WriteUnit;

/// W8 on one lockd: its holds kept alive both ways, in one run of the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptAlive {
    pub system: String,
    /// Clients holding [`W8_HOLDS_PER_CLIENT`] locks each.
    pub holders: usize,
    pub unit: WriteUnit,
    pub session: KeptFigures,
    pub one_by_one: KeptFigures,
}

/// One way of keeping W8's holds alive, over its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeptFigures {
    /// Median over the runs, in the [`KeptAlive::unit`] a second.
    pub writes_per_second: f64,
    /// Each keepalive, or each renew, with the cycles beside.
    pub request_p99_ms: f64,
    /// Each round (one client's holds all kept alive once), with the cycles beside.
    pub round_p99_ms: f64,
    /// The cycles beside: median cycles/s and the p99 of a cycle (acquire and release).
    pub cycles_per_second: f64,
    pub cycle_p99_ms: f64,
    /// Medians over the runs of lockd's and the database's CPU microseconds per round.
    pub lockd_us_per_round: f64,
    pub database_us_per_round: f64,
    /// Holds not taken, keepalives or renews not answered 200, holds not let go; errors of the
    /// cycles.
    pub failures: u64,
    pub cycle_errors: u64,
}

impl KeptFigures {
    pub fn from_runs(runs: &[KeptRun]) -> Self {
        let medians = |of: fn(&KeptRun) -> f64| median(&runs.iter().map(of).collect::<Vec<_>>());
        let p99_ms = |of: fn(&KeptRun) -> &Vec<u32>| {
            let all: Vec<u32> = runs.iter().flat_map(|r| of(r).iter().copied()).collect();
            f64::from(percentile(&all, 99.0)) / 1000.0
        };
        let cycles = RunStats::merge(runs.iter().map(|r| r.cycles.clone()));
        Self {
            writes_per_second: medians(|r| r.writes_per_second),
            request_p99_ms: p99_ms(|r| &r.beside.requests_us),
            round_p99_ms: p99_ms(|r| &r.beside.rounds_us),
            cycles_per_second: medians(|r| r.cycles.per_second()),
            cycle_p99_ms: cycles.percentile_ms(99.0),
            lockd_us_per_round: medians(|r| r.cpu_per_round_us.0),
            database_us_per_round: medians(|r| r.cpu_per_round_us.1),
            failures: runs.iter().map(|r| r.failures).sum(),
            cycle_errors: cycles.errors,
        }
    }
}

/// W1S on one lockd: W1 under a session and plain W1, alternating run by run.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCycles {
    pub system: String,
    /// Cycles per second of each run, in the order they ran.
    pub plain: Vec<f64>,
    pub session: Vec<f64>,
    /// Medians over the runs of lockd's and the database's CPU microseconds per cycle.
    pub plain_cpu_us: (f64, f64),
    pub session_cpu_us: (f64, f64),
    /// The acquire's p99 over every run.
    pub plain_p99_ms: f64,
    pub session_p99_ms: f64,
    pub errors: u64,
}

/// `ours / theirs` as the tables write a ratio; a dash when it has no meaning.
fn ratio(ours: f64, theirs: f64) -> String {
    let ratio = ours / theirs;
    if ratio.is_finite() && theirs > 0.0 {
        if ratio < 0.1 {
            format!("{ratio:.3}×")
        } else {
            format!("{ratio:.2}×")
        }
    } else {
        "–".to_owned()
    }
}

/// A write rate in its unit: rows a second, or KiB a second.
fn writes(per_second: f64, unit: WriteUnit) -> String {
    match unit {
        WriteUnit::Rows => format!("{per_second:.0} rows/s"),
        WriteUnit::Bytes => format!("{:.0} KiB/s", per_second / 1024.0),
    }
}

/// W8's table: each lockd's two ways, and the ratio of the session's to one by one's.
pub(super) fn kept_alive_table(rows: &[KeptAlive]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut out = format!(
        "\n### W8 ({} holds kept alive, with W1's cycles beside)\n\n{} clients hold {} locks \
         each and keep them alive every {} s (TTL {} s): **by a session** (one keepalive a \
         round) or **one by one** (a renew per lease, one after another). Database writes and \
         CPU per round while the holds run alone (writes: PostgreSQL rows inserted, updated or \
         deleted; SQLite bytes lockd wrote to storage; CPU: lockd's, and the PostgreSQL \
         backends' serving its database); the latencies while {} more clients run \
         W1's acquire/release cycles beside them (a round: one client's {} holds kept alive \
         once; a cycle's latency: its acquire and release). Ratios: by a session / one by one.\n\n",
        first.holders * W8_HOLDS_PER_CLIENT,
        first.holders,
        W8_HOLDS_PER_CLIENT,
        W8_TTL_SECONDS as f64 / 3.0,
        W8_TTL_SECONDS,
        W8_CYCLERS,
        W8_HOLDS_PER_CLIENT,
    );
    out.push_str(
        "| system | holds kept alive | database writes | keepalive or renew p99 ms | round p99 ms \
         | cycles beside: cycles/s | cycle p99 ms | lockd CPU µs/round | database CPU µs/round \
         | failures |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        for (how, k) in [
            ("by a session", &row.session),
            ("one by one", &row.one_by_one),
        ] {
            let _ = writeln!(
                out,
                "| {} | {how} | {} | {:.2} | {:.2} | {:.0} | {:.2} | {:.0} | {} | {} |",
                row.system,
                writes(k.writes_per_second, row.unit),
                k.request_p99_ms,
                k.round_p99_ms,
                k.cycles_per_second,
                k.cycle_p99_ms,
                k.lockd_us_per_round,
                database_us(k.database_us_per_round),
                k.failures + k.cycle_errors,
            );
        }
        let (s, o) = (&row.session, &row.one_by_one);
        let _ = writeln!(
            out,
            "| {} | **ratio** | **{}** | {} | {} | {} | {} | {} | {} | |",
            row.system,
            ratio(s.writes_per_second, o.writes_per_second),
            ratio(s.request_p99_ms, o.request_p99_ms),
            ratio(s.round_p99_ms, o.round_p99_ms),
            ratio(s.cycles_per_second, o.cycles_per_second),
            ratio(s.cycle_p99_ms, o.cycle_p99_ms),
            ratio(s.lockd_us_per_round, o.lockd_us_per_round),
            ratio(s.database_us_per_round, o.database_us_per_round),
        );
    }
    out
}

/// The database's CPU: a dash where it runs inside lockd (SQLite).
fn database_us(us: f64) -> String {
    if us > 0.0 {
        format!("{us:.0}")
    } else {
        "–".to_owned()
    }
}

/// W1S's table: W1 under a session against plain W1, measured alternately in one run.
pub(super) fn session_cycles_table(rows: &[SessionCycles]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n### W1S (W1 under a session) against W1, alternating runs\n\nEach client opens a \
         session of its own, then acquires with `{\"session\": id}` and releases with \
         `?session=id`; plain W1's runs alternate with these on the same lockd (ABBA).\n\n\
         | system | W1 cycles/s (median) | W1S cycles/s (median) | ratio of medians | median of \
         paired ratios | p99 ms (W1 / W1S) | lockd CPU µs/cycle (W1 / W1S) | database CPU \
         µs/cycle (W1 / W1S) | errors |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let (plain, session) = (median(&row.plain), median(&row.session));
        let _ = writeln!(
            out,
            "| {} | {plain:.0} | {session:.0} | **{}** | {:.3} | {:.2} / {:.2} | {:.0} / {:.0} | {} / {} | {} |",
            row.system,
            ratio(session, plain),
            median_of_paired_ratios(&row.plain, &row.session),
            row.plain_p99_ms,
            row.session_p99_ms,
            row.plain_cpu_us.0,
            row.session_cpu_us.0,
            database_us(row.plain_cpu_us.1),
            database_us(row.session_cpu_us.1),
            row.errors,
        );
    }
    out
}

impl KeptFigures {
    fn to_json(self) -> Value {
        json!({
            "writes_per_second": self.writes_per_second,
            "request_p99_ms": self.request_p99_ms, "round_p99_ms": self.round_p99_ms,
            "cycles_per_second": self.cycles_per_second, "cycle_p99_ms": self.cycle_p99_ms,
            "lockd_us_per_round": self.lockd_us_per_round,
            "database_us_per_round": self.database_us_per_round,
            "failures": self.failures, "cycle_errors": self.cycle_errors,
        })
    }

    fn from_json(v: &Value) -> Self {
        let number = |field: &str| v[field].as_f64().unwrap_or(f64::NAN);
        Self {
            writes_per_second: number("writes_per_second"),
            request_p99_ms: number("request_p99_ms"),
            round_p99_ms: number("round_p99_ms"),
            cycles_per_second: number("cycles_per_second"),
            cycle_p99_ms: number("cycle_p99_ms"),
            lockd_us_per_round: number("lockd_us_per_round"),
            database_us_per_round: number("database_us_per_round"),
            failures: v["failures"].as_u64().unwrap_or_default(),
            cycle_errors: v["cycle_errors"].as_u64().unwrap_or_default(),
        }
    }
}

impl KeptAlive {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "system": self.system, "holders": self.holders, "unit": self.unit.name(),
            "session": self.session.to_json(), "one_by_one": self.one_by_one.to_json(),
        })
    }

    pub(super) fn from_json(v: &Value) -> Self {
        Self {
            system: v["system"].as_str().unwrap_or_default().to_owned(),
            holders: v["holders"].as_u64().unwrap_or_default() as usize,
            unit: WriteUnit::from_name(v["unit"].as_str().unwrap_or_default()),
            session: KeptFigures::from_json(&v["session"]),
            one_by_one: KeptFigures::from_json(&v["one_by_one"]),
        }
    }
}

impl SessionCycles {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "system": self.system, "plain": self.plain, "session": self.session,
            "plain_cpu_us": [self.plain_cpu_us.0, self.plain_cpu_us.1],
            "session_cpu_us": [self.session_cpu_us.0, self.session_cpu_us.1],
            "plain_p99_ms": self.plain_p99_ms, "session_p99_ms": self.session_p99_ms,
            "errors": self.errors,
        })
    }

    pub(super) fn from_json(v: &Value) -> Self {
        let rates = |field: &str| -> Vec<f64> {
            v[field]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default()
        };
        let pair = |field: &str| {
            let n = |i: usize| v[field][i].as_f64().unwrap_or(f64::NAN);
            (n(0), n(1))
        };
        Self {
            system: v["system"].as_str().unwrap_or_default().to_owned(),
            plain: rates("plain"),
            session: rates("session"),
            plain_cpu_us: pair("plain_cpu_us"),
            session_cpu_us: pair("session_cpu_us"),
            plain_p99_ms: v["plain_p99_ms"].as_f64().unwrap_or(f64::NAN),
            session_p99_ms: v["session_p99_ms"].as_f64().unwrap_or(f64::NAN),
            errors: v["errors"].as_u64().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kept_alive::Latencies;
    use std::time::Duration;

    fn run(writes: f64, requests_us: Vec<u32>, rounds_us: Vec<u32>, lockd_us: f64) -> KeptRun {
        KeptRun {
            unit: WriteUnit::Rows,
            writes_per_second: writes,
            cpu_per_round_us: (lockd_us, 2.0 * lockd_us),
            alone: Latencies::default(),
            beside: Latencies {
                requests_us,
                rounds_us,
            },
            cycles: RunStats {
                operations: 1_000,
                errors: 1,
                elapsed: Duration::from_secs(1),
                latencies_us: vec![2_000; 100],
                ..RunStats::default()
            },
            failures: 2,
        }
    }

    /// Rates and CPU are medians of the runs; latencies are percentiles over every run's;
    /// failures add up.
    #[test]
    fn a_way_of_keeping_over_its_runs() {
        let runs = [
            run(100.0, vec![1_000; 99], vec![5_000], 10.0),
            run(300.0, vec![3_000], vec![7_000], 30.0),
            run(200.0, vec![], vec![6_000], 20.0),
        ];
        let k = KeptFigures::from_runs(&runs);
        assert_eq!(k.writes_per_second, 200.0);
        assert_eq!(k.request_p99_ms, 1.0);
        assert_eq!(k.round_p99_ms, 7.0);
        assert_eq!(k.cycles_per_second, 1_000.0);
        assert_eq!(k.cycle_p99_ms, 2.0);
        assert_eq!(
            (k.lockd_us_per_round, k.database_us_per_round),
            (20.0, 40.0)
        );
        assert_eq!((k.failures, k.cycle_errors), (6, 3));
    }

    /// A ratio below a tenth keeps three decimals; one with nothing to divide by is a dash.
    #[test]
    fn ratios_as_the_tables_write_them() {
        assert_eq!(ratio(50.0, 100.0), "0.50×");
        assert_eq!(ratio(1.0, 64.0), "0.016×");
        assert_eq!(ratio(1.0, 0.0), "–");
        assert_eq!(ratio(f64::NAN, 3.0), "–");
        assert_eq!(writes(2048.0, WriteUnit::Bytes), "2 KiB/s");
        assert_eq!(writes(64.4, WriteUnit::Rows), "64 rows/s");
    }

    /// The tables show both ways and their ratio, and W1S's medians and paired ratios; the JSON
    /// gives the same rows back.
    #[test]
    fn tables_and_json() {
        let keeping = |writes, p99| KeptFigures {
            writes_per_second: writes,
            request_p99_ms: p99,
            round_p99_ms: p99,
            cycles_per_second: 1_000.0,
            cycle_p99_ms: 4.0,
            lockd_us_per_round: 100.0,
            database_us_per_round: 0.0,
            failures: 0,
            cycle_errors: 0,
        };
        let kept = KeptAlive {
            system: "lockd (SQLite)".to_owned(),
            holders: 64,
            unit: WriteUnit::Bytes,
            session: keeping(100.0 * 1024.0, 1.0),
            one_by_one: keeping(1000.0 * 1024.0, 2.0),
        };
        let table = kept_alive_table(std::slice::from_ref(&kept));
        assert!(table.contains("### W8 (6400 holds kept alive"), "{table}");
        assert!(table.contains("| lockd (SQLite) | by a session | 100 KiB/s | 1.00 |"));
        assert!(table.contains("| lockd (SQLite) | **ratio** | **0.10×** | 0.50× |"));
        assert_eq!(KeptAlive::from_json(&kept.to_json()), kept);

        let cycles = SessionCycles {
            system: "lockd (PostgreSQL)".to_owned(),
            plain: vec![100.0, 200.0],
            session: vec![90.0, 200.0],
            plain_cpu_us: (40.0, 50.0),
            session_cpu_us: (41.0, 52.0),
            plain_p99_ms: 3.0,
            session_p99_ms: 3.5,
            errors: 0,
        };
        let table = session_cycles_table(std::slice::from_ref(&cycles));
        assert!(
            table.contains("| lockd (PostgreSQL) | 150 | 145 | **0.97×** | 0.950 | 3.00 / 3.50 | 40 / 41 | 50 / 52 | 0 |"),
            "{table}"
        );
        assert_eq!(SessionCycles::from_json(&cycles.to_json()), cycles);
        assert_eq!(kept_alive_table(&[]), "");
        assert_eq!(session_cycles_table(&[]), "");
    }
}
