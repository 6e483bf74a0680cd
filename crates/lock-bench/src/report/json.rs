//! The measurements as JSON beside the Markdown, so that a report can be rendered again
//! (`--render`) with the figures of its run.

use std::io;

use super::{KeptAlive, Measurement, ReadWrite, Report, SessionCycles};

impl Report {
    /// The measurements as JSON, kept beside the report so that it can be rendered again
    /// (`--render`) without running anything: the figures stay those of the run.
    pub(super) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "plan": self.plan,
            "quick": self.quick,
            "measurements": self.measurements.iter().map(|m| serde_json::json!({
                "system": m.system, "workload": m.workload, "per_second": m.per_second,
                "spread": m.spread, "p50_ms": m.p50_ms, "p99_ms": m.p99_ms, "errors": m.errors,
                "operations": m.operations,
                "fairness": m.fairness, "rss_kib": m.rss_kib,
                "cpu_us": m.cpu_us.map(|(a, b, c)| [a, b, c]),
                "read_write": m.read_write.map(|rw| serde_json::json!({
                    "shared_asked": rw.shared_asked, "shared_granted": rw.shared_granted,
                    "exclusive_asked": rw.exclusive_asked,
                    "exclusive_granted": rw.exclusive_granted,
                    "exclusive_p99_ms": rw.exclusive_p99_ms,
                })),
            })).collect::<Vec<_>>(),
            "kept_alive": self.kept_alive.iter().map(KeptAlive::to_json).collect::<Vec<_>>(),
            "session_cycles":
                self.session_cycles.iter().map(SessionCycles::to_json).collect::<Vec<_>>(),
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
                read_write: m["read_write"].is_object().then(|| {
                    let rw = &m["read_write"];
                    let count = |field: &str| rw[field].as_u64().unwrap_or_default();
                    ReadWrite {
                        shared_asked: count("shared_asked"),
                        shared_granted: count("shared_granted"),
                        exclusive_asked: count("exclusive_asked"),
                        exclusive_granted: count("exclusive_granted"),
                        exclusive_p99_ms: number(&rw["exclusive_p99_ms"]),
                    }
                }),
            })
            .collect();
        // Reports written before W8 and W1S have neither.
        let each = |field: &str| value[field].as_array().cloned().unwrap_or_default();
        Ok(Self {
            plan: value["plan"].as_str().unwrap_or_default().to_owned(),
            quick: value["quick"].as_bool().unwrap_or_default(),
            measurements,
            kept_alive: each("kept_alive")
                .iter()
                .map(KeptAlive::from_json)
                .collect(),
            session_cycles: each("session_cycles")
                .iter()
                .map(SessionCycles::from_json)
                .collect(),
        })
    }
}
