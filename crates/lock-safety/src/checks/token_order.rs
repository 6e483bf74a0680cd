//! Fencing tokens that go backwards, or one token shown for two owners.

use super::observations::Seen;
use super::{Finding, Kind};

pub(super) fn token_order(resource: &str, seen: &[Seen<'_>], findings: &mut Vec<Finding>) {
    // Sweep in invoke order, keeping the largest token among answers completed before.
    let mut by_complete: Vec<&Seen<'_>> = seen.iter().collect();
    by_complete.sort_by_key(|s| s.op.complete);
    let mut by_invoke: Vec<&Seen<'_>> = seen.iter().collect();
    by_invoke.sort_by_key(|s| s.op.invoke);
    let mut best: Option<&Seen<'_>> = None;
    let mut next = 0;
    let mut reported = 0;
    for b in by_invoke {
        while next < by_complete.len() && by_complete[next].op.complete < b.op.invoke {
            let a = by_complete[next];
            if best.is_none_or(|best| a.lease.token > best.lease.token) {
                best = Some(a);
            }
            next += 1;
        }
        let Some(a) = best else { continue };
        let message = if b.lease.token < a.lease.token {
            format!(
                "op #{} showed token {} ({}) after op #{} had completed showing token {} ({})",
                b.op.id, b.lease.token, b.lease.owner, a.op.id, a.lease.token, a.lease.owner
            )
        } else if b.lease.token == a.lease.token && b.lease.owner != a.lease.owner {
            format!(
                "token {} was shown for {} by op #{} and for {} by op #{}",
                a.lease.token, a.lease.owner, a.op.id, b.lease.owner, b.op.id
            )
        } else {
            continue;
        };
        findings.push(Finding {
            kind: Kind::TokenRegression,
            resource: resource.to_owned(),
            message,
            ops: vec![a.op.id, b.op.id],
        });
        reported += 1;
        if reported >= 5 {
            break;
        }
    }
}
