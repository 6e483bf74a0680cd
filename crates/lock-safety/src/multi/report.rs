//! Renders the multi-lock findings: each with its kind, the seed, its sentence, the set, and the
//! operations on the set's resources (from the lock and shared-lock histories) that show it.

use std::fmt::Write as _;

use super::checks::Finding;
use super::{MultiHistory, OpRef};
use crate::history::{History, Micros};
use crate::shared::SharedHistory;
use crate::violation::{self, Window};

/// At most this many lines of history per finding.
const LINES: usize = 40;

/// Every finding with its slice of history.
pub fn render(
    multi: &MultiHistory,
    locks: &History,
    shared: &SharedHistory,
    findings: &[Finding],
) -> String {
    let mut out = String::new();
    for finding in findings {
        let set = &multi.ops[finding.set];
        violation::heading(
            &mut out,
            format_args!("multi op #{}", set.id),
            multi.seed,
            finding.kind.title(),
            &finding.message,
        );
        let _ = writeln!(out, "  * multi  {}", multi.describe(set));
        let marked = |op: OpRef| finding.ops.contains(&op);
        let marked_times = finding.ops.iter().map(|op| match *op {
            OpRef::Locks(id) => (locks.ops[id].invoke, locks.ops[id].complete),
            OpRef::Shared(id) => (shared.ops[id].invoke, shared.ops[id].complete),
        });
        let window = marked_times.fold(
            Window {
                from: set.invoke,
                to: set.complete,
            },
            |w, (invoke, complete)| Window {
                from: w.from.min(invoke),
                to: w.to.max(complete),
            },
        );
        let resources = set.kind.resources();
        let near = |resource: &str, invoke: Micros, latest: Micros| {
            resources.contains(&resource) && window.meets(invoke, latest)
        };
        // (marked, invoke, line)
        let mut lines: Vec<(bool, Micros, String)> = Vec::new();
        for op in &locks.ops {
            let latest = if op.outcome.is_unknown() {
                op.complete.saturating_add(locks.horizon_us)
            } else {
                op.complete
            };
            let is_marked = marked(OpRef::Locks(op.id));
            if is_marked || near(&op.resource, op.invoke, latest) {
                lines.push((
                    is_marked,
                    op.invoke,
                    format!("locks  {}", locks.describe(op)),
                ));
            }
        }
        for op in &shared.ops {
            let is_marked = marked(OpRef::Shared(op.id));
            if is_marked || near(&op.resource, op.invoke, op.latest_effect(shared.horizon_us)) {
                lines.push((
                    is_marked,
                    op.invoke,
                    format!("shared {}", shared.describe(op)),
                ));
            }
        }
        let total = lines.len();
        if total > LINES {
            lines.sort_by_key(|(m, invoke, _)| (!m, invoke.abs_diff(set.invoke)));
            lines.truncate(LINES);
        }
        lines.sort_by_key(|(_, invoke, _)| *invoke);
        let lines = lines
            .into_iter()
            .map(|(is_marked, _, line)| (is_marked, line));
        violation::write_lines(&mut out, lines, total);
    }
    out
}
