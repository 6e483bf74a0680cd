//! More permits held at once than the limit: by the acknowledged holds of different grants, or
//! by the holders one status showed.

use std::collections::HashMap;

use super::held::Hold;
use super::{Finding, Kind, REPORTED};
use crate::history::Micros;
use crate::permits::{PermitOp, PermitOutcome};

/// Sweeps the holds in time. A grant counts its permits once while any of its holds (its grant
/// and its renewals) covers the instant; intervals are half-open, so a hold ending at `t` and
/// another starting at `t` do not meet. The limit is the largest any of the counted grants
/// showed (they must all agree; the largest is the weakest claim). Returns the most permits
/// surely held at once (how close the run came to the limit, so how much the check could see).
pub(super) fn too_many_held(
    name: &str,
    holds: &[Hold<'_>],
    start: Micros,
    findings: &mut Vec<Finding>,
) -> u64 {
    // (instant, 0 for an end / 1 for a start, hold): ends first at one instant.
    let mut events: Vec<(Micros, u8, usize)> = Vec::with_capacity(holds.len() * 2);
    for (i, hold) in holds.iter().enumerate() {
        events.push((hold.from, 1, i));
        events.push((hold.until, 0, i));
    }
    events.sort_unstable();
    let mut active: Vec<usize> = Vec::new();
    let mut covering: HashMap<(&str, i64), usize> = HashMap::new();
    let mut held: u64 = 0;
    let mut peak: u64 = 0;
    let mut over = false;
    let mut reported = 0;
    for (at, starts, i) in events {
        let hold = &holds[i];
        let count = covering.entry(hold.grant()).or_default();
        if starts == 1 {
            *count += 1;
            if *count == 1 {
                held += u64::from(hold.lease.permits);
            }
            active.push(i);
        } else {
            *count -= 1;
            if *count == 0 {
                held -= u64::from(hold.lease.permits);
            }
            active.retain(|&a| a != i);
        }
        let limit = active
            .iter()
            .map(|&a| holds[a].lease.limit)
            .max()
            .unwrap_or(0);
        peak = peak.max(held);
        let now_over = held > u64::from(limit);
        if now_over && !over && reported < REPORTED {
            // One hold per grant, the one that covers this instant.
            let mut shown: Vec<&Hold<'_>> = Vec::new();
            for &a in &active {
                if !shown.iter().any(|s| s.grant() == holds[a].grant()) {
                    shown.push(&holds[a]);
                }
            }
            let parts: Vec<String> = shown
                .iter()
                .map(|h| {
                    format!(
                        "{} x{} (token {}, from op #{}'s answer until {})",
                        h.lease.owner,
                        h.lease.permits,
                        h.lease.token,
                        h.op.id,
                        h.end()
                    )
                })
                .collect();
            findings.push(Finding {
                kind: Kind::TooManyPermits,
                name: name.to_owned(),
                message: format!(
                    "at {:.3}s {held} permits of a limit of {limit} were surely held at once: {}",
                    (at - start) as f64 / 1e6,
                    parts.join(", ")
                ),
                ops: shown.iter().map(|h| h.op.id).collect(),
            });
            reported += 1;
        }
        over = now_over;
    }
    peak
}

/// A status shows the live holders of one instant: their permits add up to at most the limit.
pub(super) fn too_many_shown(name: &str, ops: &[&PermitOp], findings: &mut Vec<Finding>) {
    let mut reported = 0;
    for op in ops {
        let PermitOutcome::Seen(holders) = &op.outcome else {
            continue;
        };
        let held: u64 = holders.iter().map(|l| u64::from(l.permits)).sum();
        let limit = holders.iter().map(|l| l.limit).max().unwrap_or(0);
        if held > u64::from(limit) && reported < REPORTED {
            findings.push(Finding {
                kind: Kind::TooManyPermits,
                name: name.to_owned(),
                message: format!(
                    "op #{} showed holders of {held} permits of a limit of {limit} at once",
                    op.id
                ),
                ops: vec![op.id],
            });
            reported += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permits::{PermitLease, PermitOpKind};

    fn op(id: usize, owner: &str, token: i64, permits: u32) -> PermitOp {
        let lease = PermitLease {
            name: "s".to_owned(),
            owner: owner.to_owned(),
            token,
            permits,
            limit: 3,
            acquired_at: 0,
            expires_at: 10_000,
        };
        PermitOp {
            id,
            client: 0,
            name: "s".to_owned(),
            kind: PermitOpKind::Renew {
                owner: owner.to_owned(),
                ttl_seconds: 1,
            },
            invoke: 0,
            complete: 0,
            outcome: PermitOutcome::Renewed(lease),
        }
    }

    fn hold(op: &PermitOp, from: Micros, until: Micros) -> Hold<'_> {
        let PermitOutcome::Renewed(lease) = &op.outcome else {
            unreachable!()
        };
        Hold {
            from,
            until,
            op,
            lease,
            cut_by: None,
        }
    }

    #[test]
    fn overlapping_holds_of_one_grant_count_once() {
        let (a1, a2, b) = (op(0, "a", 1, 2), op(1, "a", 1, 2), op(2, "b", 2, 1));
        // a's two holds overlap over [50, 100): 2 + 1 permits, not 2 + 2 + 1.
        let holds = vec![hold(&a1, 0, 100), hold(&b, 10, 200), hold(&a2, 50, 150)];
        let mut findings = Vec::new();
        let _ = too_many_held("s", &holds, 0, &mut findings);
        assert!(findings.is_empty(), "{findings:?}");
        // Another grant of the same owner is a second grant.
        let a_other = op(3, "a", 3, 2);
        let holds = vec![
            hold(&a1, 0, 100),
            hold(&b, 10, 200),
            hold(&a_other, 50, 150),
        ];
        let _ = too_many_held("s", &holds, 0, &mut findings);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].ops, vec![0, 2, 3]);
    }

    #[test]
    fn holds_that_only_touch_do_not_overlap() {
        let (a, b, c) = (op(0, "a", 1, 2), op(1, "b", 2, 1), op(2, "c", 3, 1));
        let holds = vec![hold(&a, 0, 100), hold(&b, 0, 200), hold(&c, 100, 200)];
        let mut findings = Vec::new();
        let _ = too_many_held("s", &holds, 0, &mut findings);
        assert!(findings.is_empty(), "{findings:?}");
    }
}
