//! A refused set changed nothing: no lease of its owner on one of its resources may show an
//! `acquired_at` (set by every grant and re-grant, kept by renewals) inside the set's request
//! unless another acquire of the owner, answered granted or left unknown, was running then too.

use std::collections::HashMap;

use super::{Finding, Kind, REPORTED};
use crate::multi::view::Step;
use crate::multi::{MultiHistory, MultiOpKind, MultiOutcome};

/// Every set answered `acquired: false`; at most one finding each.
pub(super) fn refused_left_leases(
    multi: &MultiHistory,
    steps: &HashMap<&str, Vec<Step<'_>>>,
    findings: &mut Vec<Finding>,
) {
    let margin = multi.margin_us;
    let mut reported = 0;
    for set in &multi.ops {
        let (MultiOpKind::AcquireAll { owner, locks, .. }, MultiOutcome::Unavailable(_)) =
            (&set.kind, &set.outcome)
        else {
            continue;
        };
        let during = |at| set.invoke - margin <= at && at <= set.complete + margin;
        let found = locks.iter().find_map(|(resource, _)| {
            let steps = steps.get(resource.as_str())?;
            let explained = |at| {
                steps.iter().any(|step| {
                    step.owner == Some(owner)
                        && step.may_grant
                        && !(step.client == set.client && step.invoke == set.invoke)
                        && step.invoke - margin <= at
                        && at <= step.latest_effect + margin
                })
            };
            steps.iter().find_map(|step| {
                let shown = step.shown.iter().find(|s| {
                    s.owner == owner && during(s.acquired_at) && !explained(s.acquired_at)
                })?;
                Some((resource, step, *shown))
            })
        });
        let Some((resource, step, shown)) = found else {
            continue;
        };
        if reported >= REPORTED {
            return;
        }
        findings.push(Finding {
            kind: Kind::RefusedLeftLease,
            set: set.id,
            message: format!(
                "multi op #{} was answered not granted ({:.3}s .. {:.3}s), nothing changed, yet {} showed {owner} holding {resource} {} token {} acquired at {:.3}s, inside that request, and no other acquire of {owner} answered granted or unknown was running then",
                set.id,
                multi.at(set.invoke),
                multi.at(set.complete),
                step.op,
                shown.mode.as_str(),
                shown.token,
                multi.at(shown.acquired_at)
            ),
            ops: vec![step.op],
        });
        reported += 1;
    }
}
