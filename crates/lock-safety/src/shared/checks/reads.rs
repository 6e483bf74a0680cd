//! What one status may show: the live holders of one instant during the request. They can hold
//! at once (one writer alone, or readers), and they include every lease surely held throughout
//! the request.

use super::held::Hold;
use super::{Finding, Kind, REPORTED};
use crate::shared::{Mode, SharedOp, SharedOutcome};

/// A status showing a writer among several holders, or one owner or one token twice (an owner
/// holds at most one lease of a resource, and a lease has one token).
pub(super) fn impossible_reads(resource: &str, ops: &[&SharedOp], findings: &mut Vec<Finding>) {
    let mut reported = 0;
    for op in ops {
        let SharedOutcome::Seen(holders) = &op.outcome else {
            continue;
        };
        let why = if holders.len() > 1 && holders.iter().any(|h| h.mode == Mode::Exclusive) {
            "a writer among several holders, yet a writer excludes every other holder"
        } else if holders
            .iter()
            .enumerate()
            .any(|(i, a)| holders[i + 1..].iter().any(|b| a.owner == b.owner))
        {
            "one owner twice, yet an owner holds at most one lease of a resource"
        } else if holders
            .iter()
            .enumerate()
            .any(|(i, a)| holders[i + 1..].iter().any(|b| a.token == b.token))
        {
            "one token for two holders, yet each lease has its own token"
        } else {
            continue;
        };
        if reported < REPORTED {
            findings.push(Finding {
                kind: Kind::ImpossibleRead,
                resource: resource.to_owned(),
                message: format!(
                    "op #{} showed {} holders at once: {why}",
                    op.id,
                    holders.len()
                ),
                ops: vec![op.id],
            });
            reported += 1;
        }
    }
}

/// A status that ran entirely inside a surely-held interval shows that lease.
pub(super) fn lost_acknowledgements(
    resource: &str,
    holds: &[Hold<'_>],
    ops: &[&SharedOp],
    findings: &mut Vec<Finding>,
) {
    // Holds are sorted by `from`: those that may cover a status start at most `longest` before it.
    let longest = holds.iter().map(|h| h.until - h.from).max().unwrap_or(0);
    let mut reported = 0;
    for op in ops {
        let SharedOutcome::Seen(holders) = &op.outcome else {
            continue;
        };
        let first = holds.partition_point(|h| h.from < op.invoke - longest);
        for hold in holds[first..].iter().take_while(|h| h.from < op.invoke) {
            if op.complete >= hold.until {
                continue;
            }
            let (owner, token) = hold.lease();
            let shown = holders.iter().any(|h| h.owner == owner && h.token == token);
            if !shown && reported < REPORTED {
                findings.push(Finding {
                    kind: Kind::LostAcknowledgement,
                    resource: resource.to_owned(),
                    message: format!(
                        "{}, but op #{} in between did not show it",
                        hold.describe(),
                        op.id
                    ),
                    ops: vec![hold.op.id, op.id],
                });
                reported += 1;
            }
        }
    }
}
