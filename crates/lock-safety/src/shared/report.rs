//! Renders the shared-lock findings: each with its kind, the seed, its sentence and the slice of
//! history that shows it.

use std::fmt::Write as _;

use super::checks::Finding;
use super::{SharedHistory, SharedOp};

/// Every finding with its slice of history.
pub fn render(history: &SharedHistory, findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let _ = writeln!(
            out,
            "\nVIOLATION on {} (seed {}): {}\n  {}",
            finding.resource,
            history.seed,
            finding.kind.title(),
            finding.message
        );
        out.push_str(&slice_text(history, &finding.resource, &finding.ops));
    }
    out
}

/// The operations `marked` (shown with `*`) and those on the resource whose answers could have
/// interleaved with them, at most 60 lines (the marked ones first).
fn slice_text(history: &SharedHistory, resource: &str, marked: &[usize]) -> String {
    let ops: Vec<&SharedOp> = marked.iter().map(|&id| &history.ops[id]).collect();
    let from = ops.iter().map(|o| o.invoke).min().unwrap_or(0);
    let to = ops.iter().map(|o| o.complete).max().unwrap_or(0);
    let mut lines: Vec<&SharedOp> = history
        .ops
        .iter()
        .filter(|op| {
            marked.contains(&op.id)
                || (op.resource == resource
                    && op.invoke <= to
                    && op.latest_effect(history.horizon_us) >= from)
        })
        .collect();
    let total = lines.len();
    if total > 60 {
        lines.sort_by_key(|op| (!marked.contains(&op.id), op.invoke.abs_diff(from)));
        lines.truncate(60);
    }
    lines.sort_by_key(|op| (op.invoke, op.id));
    let mut out = String::new();
    for op in &lines {
        let mark = if marked.contains(&op.id) { '*' } else { ' ' };
        let _ = writeln!(out, "  {mark} {}", history.describe(op));
    }
    if lines.len() < total {
        let _ = writeln!(
            out,
            "    ({} more operations in the window not shown)",
            total - lines.len()
        );
    }
    out
}
