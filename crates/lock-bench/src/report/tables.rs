//! The report's Markdown tables: one per workload, the W5 handoffs, the W1 ratios of lockd to
//! each other system, where the CPU goes, and the sessions' comparisons (W8, W1S).

use std::fmt::Write as _;

use super::{sessions, Measurement, Report};

/// What W7 does, above its table.
const W7_TEXT: &str = "The clients share one resource; each cycle draws the mode from a seeded \
generator, asks for the lock waiting up to 1 s (`wait_seconds: 1` for lockd; a refusal after \
the wait counts without a grant), and releases it at once when granted. Grants in either mode \
per second; the latency of every acquire, waits included; the exclusive acquires apart.";

impl Report {
    /// The tables, as Markdown.
    pub fn table(&self) -> String {
        let mut out = String::new();
        for (workload, unit) in [
            ("W1", "cycles/s"),
            ("W2", "grants/s"),
            ("W3 (1k live)", "cycles/s"),
            ("W3 (1M live)", "cycles/s"),
            ("W4", "reads/s"),
            ("W6", "grants/s"),
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
        out.push_str(&self.read_write_table());
        out.push_str(&self.handoff_table());
        out.push_str(&self.ratios());
        out.push_str(&self.cpu_table());
        out.push_str(&sessions::kept_alive_table(&self.kept_alive));
        out.push_str(&sessions::session_cycles_table(&self.session_cycles));
        out
    }

    /// W7: grants in either mode, every acquire's latency, and the writers apart: how many got
    /// in, and their p99 (a writer that never gets in shows as such); then lockd against each
    /// anchor.
    fn read_write_table(&self) -> String {
        let rows: Vec<&Measurement> = self
            .measurements
            .iter()
            .filter(|m| m.workload == "W7")
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "\n### W7 (read/write lock, {}% shared)\n\n{}\n\n",
            crate::read_write::W7_SHARED_PERCENT,
            W7_TEXT
        );
        out.push_str("| system | grants/s (median) | spread | p50 ms | p99 ms | shared granted / asked | exclusive granted / asked | exclusive p99 ms | errors | fairness |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for m in &rows {
            let Some(rw) = m.read_write else { continue };
            let exclusive = match rw.exclusive_granted {
                0 => format!("**0 / {} (writers starved)**", rw.exclusive_asked),
                granted => format!("{granted} / {}", rw.exclusive_asked),
            };
            let _ = writeln!(
                out,
                "| {} | {:.0} | {:.0} | {:.2} | {:.2} | {} / {} | {exclusive} | {:.2} | {} | {} |",
                m.system,
                m.per_second,
                m.spread,
                m.p50_ms,
                m.p99_ms,
                rw.shared_granted,
                rw.shared_asked,
                rw.exclusive_p99_ms,
                m.errors,
                m.fairness.map_or("–".to_owned(), |f| format!("{f:.3}")),
            );
        }
        let (lockd, anchors): (Vec<&Measurement>, Vec<&Measurement>) =
            rows.iter().partition(|m| m.system.starts_with("lockd"));
        if !lockd.is_empty() && !anchors.is_empty() {
            out.push_str("\n| lockd | anchor | ratio (W7 grants/s) |\n|---|---|---|\n");
            for ours in &lockd {
                for anchor in anchors.iter().filter(|a| a.per_second > 0.0) {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {:.2}× |",
                        ours.system,
                        anchor.system,
                        ours.per_second / anchor.per_second
                    );
                }
            }
        }
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
        let mut out = String::new();
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
        if out.is_empty() {
            // No W1 of lockd and of an anchor in this run (`--workloads` without W1).
            return out;
        }
        format!("\n### Ratios (W1, same run)\n\n| lockd | anchor | ratio |\n|---|---|---|\n{out}")
    }
}
