//! Fencing tokens that go backwards, or one token shown for two owners.

use super::observations::Seen;
use super::{Finding, Kind};
use crate::tokens::Floor;

pub(super) fn token_order(resource: &str, seen: &[Seen<'_>], findings: &mut Vec<Finding>) {
    // Each answer against the largest token among answers completed before its invoke (the
    // first to show it, in the order the answers were seen), in invoke order.
    let floor = Floor::new(
        seen.iter()
            .enumerate()
            .map(|(i, s)| (s.op.complete, s.lease.token, i))
            .collect(),
    );
    let mut by_invoke: Vec<&Seen<'_>> = seen.iter().collect();
    by_invoke.sort_by_key(|s| s.op.invoke);
    let mut reported = 0;
    for b in by_invoke {
        let Some((_, first)) = floor.before(b.op.invoke) else {
            continue;
        };
        let a = &seen[first];
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
