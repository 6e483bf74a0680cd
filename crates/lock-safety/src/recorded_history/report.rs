//! Renders the findings of the recorded-history checks: each with its kind, the seed, its
//! sentence, the records that show it (with their neighbours in the name's history) and the
//! operations on the resource around the ones it names.

use super::checks::Finding;
use super::{describe, RecordedHistory};
use crate::history::History;
use crate::report::slice_text;
use crate::violation;

/// Every finding with its records and its slice of the lock history.
pub fn render(history: &History, recorded: &RecordedHistory, findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        violation::heading(
            &mut out,
            &finding.resource,
            history.seed,
            finding.kind.title(),
            &finding.message,
        );
        if let Some(name) = recorded.names.get(&finding.resource) {
            let mut records: Vec<_> = name.records.iter().collect();
            records.sort_by_key(|r| r.id);
            // The marked records, and the one before and after each in the name's history.
            let near = |i: usize| {
                (i.saturating_sub(1)..=i + 1).any(|j| {
                    records
                        .get(j)
                        .is_some_and(|r| finding.records.contains(&r.id))
                })
            };
            let lines: Vec<_> = (0..records.len())
                .filter(|&i| near(i))
                .take(40)
                .map(|i| {
                    let record = records[i];
                    let marked = finding.records.contains(&record.id);
                    (marked, describe(record, history.start))
                })
                .collect();
            // Only the records near the marked ones were chosen: none is said to be left out.
            let shown = lines.len();
            violation::write_lines(&mut out, lines, shown);
        }
        if !finding.ops.is_empty() {
            out.push_str(&slice_text(history, &finding.resource, &finding.ops));
        }
    }
    out
}
