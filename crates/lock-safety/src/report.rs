//! Runs every check on a history and renders the verdict: per resource the search's result and
//! effort, each finding with the slice of history that shows it, and the seed.

use std::fmt::Write as _;

use crate::checks::{self, Finding};
use crate::history::{History, Op, OpKind};
use crate::linearizability::{self, PartitionResult, Verdict};
use crate::violation::{self, Trim, Window};

/// Everything the checks found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub partitions: Vec<PartitionResult>,
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Violations: direct findings and partitions with no linearization.
    pub fn violations(&self) -> usize {
        self.findings.len()
            + self
                .partitions
                .iter()
                .filter(|p| matches!(p.verdict, Verdict::Violation { .. }))
                .count()
    }

    /// Partitions whose search ran out of budget (neither a pass nor a violation).
    pub fn unknown(&self) -> usize {
        self.partitions
            .iter()
            .filter(|p| p.verdict == Verdict::Unknown)
            .count()
    }

    /// The most states one partition's search explored.
    pub fn max_states(&self) -> u64 {
        self.partitions.iter().map(|p| p.states).max().unwrap_or(0)
    }

    /// The verdict in words, with a slice of history for each violation.
    pub fn render(&self, history: &History) -> String {
        let mut out = String::new();
        for p in &self.partitions {
            let verdict = match &p.verdict {
                Verdict::Linearizable => "linearizable".to_owned(),
                Verdict::Unknown => {
                    "UNKNOWN: the search exceeded its budget (not a pass)".to_owned()
                }
                Verdict::Violation { .. } => "NOT LINEARIZABLE".to_owned(),
            };
            let _ = writeln!(
                out,
                "resource {:<24} {:>6} entries, {:>9} states searched: {verdict}",
                p.resource, p.entries, p.states
            );
        }
        for p in &self.partitions {
            if let Verdict::Violation { slice } = &p.verdict {
                let _ = writeln!(
                    out,
                    "\nVIOLATION on {} (seed {}): no order of the operations explains the answers \
                     marked * (what remains after shrinking; the others were allowed to have \
                     happened or not, see docs/safety.md):",
                    p.resource, history.seed
                );
                out.push_str(&slice_text(history, &p.resource, slice));
            }
        }
        for finding in &self.findings {
            violation::heading(
                &mut out,
                &finding.resource,
                history.seed,
                finding.kind.title(),
                &finding.message,
            );
            out.push_str(&slice_text(history, &finding.resource, &finding.ops));
        }
        out
    }
}

/// Checks a history: the direct checks, and the search on each resource with at most `budget`
/// states.
pub fn check(history: &History, budget: u64) -> CheckReport {
    let partitions = linearizability::partitions(history)
        .iter()
        .map(|p| linearizability::check_partition(p, budget))
        .collect();
    CheckReport {
        partitions,
        findings: checks::run(history),
    }
}

/// The operations `marked` (shown with `*`) and those on the resource whose answers could have
/// interleaved with them, at most 60 lines: a listing reads every resource under its prefix, and
/// an unknown write may take effect up to the horizon after its completion.
pub(crate) fn slice_text(history: &History, resource: &str, marked: &[usize]) -> String {
    let interleaves = |op: &Op, window: Window| {
        (op.resource == resource
            || (op.kind == OpKind::List && resource.starts_with(op.resource.as_str())))
            && op.invoke <= window.to
            && (op.complete >= window.from
                || (op.outcome.is_unknown()
                    && op.complete + history.horizon_us >= window.from
                    && !matches!(op.kind, OpKind::Status | OpKind::List)))
    };
    violation::slice(&history.ops, marked, interleaves, Trim::Earliest, |op| {
        history.describe(op)
    })
}
