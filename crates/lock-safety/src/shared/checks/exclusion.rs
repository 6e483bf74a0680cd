//! A writer beside another holder: two acknowledged holds of different leases that overlap in
//! time, one of them exclusive. Readers may overlap each other; nothing may overlap a writer.

use std::collections::{HashMap, HashSet};

use super::held::Hold;
use super::{Finding, Kind, Lease, REPORTED};
use crate::history::Micros;

/// Every pair of overlapping holds of different leases where one is exclusive. Holds are
/// half-open, so one ending at `t` and another starting at `t` do not meet; a lease's several
/// holds (its grant, re-grants and renewals) with another lease's are reported once.
pub(super) fn writers_beside_holders(
    resource: &str,
    holds: &[Hold<'_>],
    findings: &mut Vec<Finding>,
) {
    let mut reported: HashSet<(Lease<'_>, Lease<'_>)> = HashSet::new();
    for (i, a) in holds.iter().enumerate() {
        // Sorted by `from`: the holds starting before `a` ends are the ones right after it.
        for b in holds[i + 1..].iter().take_while(|b| b.from < a.until) {
            if a.lease() == b.lease() || !(a.is_exclusive() || b.is_exclusive()) {
                continue;
            }
            let pair = if a.lease() < b.lease() {
                (a.lease(), b.lease())
            } else {
                (b.lease(), a.lease())
            };
            if reported.len() >= REPORTED || !reported.insert(pair) {
                continue;
            }
            let (writer, other) = if a.is_exclusive() { (a, b) } else { (b, a) };
            findings.push(Finding {
                kind: Kind::WriterBesideHolder,
                resource: resource.to_owned(),
                message: format!(
                    "{}, and {}: both at once, yet a writer excludes every other holder",
                    writer.describe(),
                    other.describe()
                ),
                ops: vec![a.op.id, b.op.id],
            });
        }
    }
}

/// The most different shared leases surely held at one instant.
pub(super) fn most_readers(holds: &[Hold<'_>]) -> usize {
    // (instant, 0 for an end / 1 for a start, hold): ends first at one instant.
    let mut events: Vec<(Micros, u8, usize)> = Vec::new();
    for (i, hold) in holds.iter().enumerate().filter(|(_, h)| !h.is_exclusive()) {
        events.push((hold.from, 1, i));
        events.push((hold.until, 0, i));
    }
    events.sort_unstable();
    let mut covering: HashMap<Lease<'_>, usize> = HashMap::new();
    let (mut readers, mut most) = (0, 0);
    for (_, starts, i) in events {
        let count = covering.entry(holds[i].lease()).or_default();
        if starts == 1 {
            *count += 1;
            if *count == 1 {
                readers += 1;
            }
        } else {
            *count -= 1;
            if *count == 0 {
                readers -= 1;
            }
        }
        most = most.max(readers);
    }
    most
}
