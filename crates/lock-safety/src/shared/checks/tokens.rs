//! Fencing tokens: one token belongs to one lease (one owner, one mode) of a resource, and a new
//! grant, of either mode, draws a token larger than every token shown on the resource before it
//! was asked for.

use std::collections::HashMap;

use super::{Finding, Kind, Lease, REPORTED};
use crate::history::Micros;
use crate::shared::{Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};
use crate::tokens::{reused, Floor};

/// A token shown for two owners, or in two modes, on one resource: a re-grant keeps its token
/// only for the same owner in the same mode, and every other grant draws a new one.
pub(super) fn tokens_with_two_holders(
    resource: &str,
    ops: &[&SharedOp],
    findings: &mut Vec<Finding>,
) {
    let shown = ops.iter().flat_map(|op| {
        op.shown()
            .iter()
            .map(|h| (h.token, (h.owner.as_str(), h.mode), op.id))
    });
    for reuse in reused(shown, REPORTED) {
        let ((owner, mode), by) = reuse.first;
        let ((then_owner, then_mode), id) = reuse.then;
        findings.push(Finding {
            kind: Kind::TokenReused,
            resource: resource.to_owned(),
            message: format!(
                "token {} was shown for {owner} ({}) by op #{by} and for {then_owner} ({}) by op #{id}, but a token belongs to one lease",
                reuse.token,
                mode.as_str(),
                then_mode.as_str(),
            ),
            ops: vec![by, id],
        });
    }
}

/// A granted answer is surely a new grant (not a re-grant keeping its token) when no other
/// answer that could have come before it showed its lease (none invoked before it completed),
/// and no unseen grant of its owner in its mode can have been live when it was invoked. An
/// unseen grant needs an acquire of the owner in that mode with an unknown outcome invoked
/// before this grant completed; and since no answer showed it, it lives only until the latest
/// effect plus TTL of the owner's unknown acquires and renews (plus the margin). A new token is
/// drawn after the grant's invoke, so it is larger than every token an answer that completed
/// before that invoke showed, whatever their modes.
pub(super) fn new_grant_tokens(
    history: &SharedHistory,
    resource: &str,
    ops: &[&SharedOp],
    findings: &mut Vec<Finding>,
) {
    let floor = Floor::new(
        ops.iter()
            .flat_map(|op| op.shown().iter().map(|h| (op.complete, h.token, op.id)))
            .collect(),
    );
    // Each lease: the invokes of the answers that showed it.
    let mut showings: HashMap<Lease<'_>, Vec<(Micros, usize)>> = HashMap::new();
    for op in ops {
        for holder in op.shown() {
            showings
                .entry((&holder.owner, holder.token))
                .or_default()
                .push((op.invoke, op.id));
        }
    }
    let mut reported = 0;
    for grant in ops {
        let SharedOutcome::Granted(holder) = &grant.outcome else {
            continue;
        };
        let shown_before = showings[&(holder.owner.as_str(), holder.token)]
            .iter()
            .any(|&(invoke, id)| id != grant.id && invoke < grant.complete);
        if shown_before || unseen_grant_live(history, ops, grant, holder.mode) {
            continue;
        }
        let Some((top, by)) = floor.before(grant.invoke) else {
            continue;
        };
        if holder.token <= top && reported < REPORTED {
            findings.push(Finding {
                kind: Kind::TokenRegression,
                resource: resource.to_owned(),
                message: format!(
                    "op #{} newly granted {} {} token {}, but op #{} had already completed showing token {top}",
                    grant.id,
                    holder.owner,
                    holder.mode.as_str(),
                    holder.token,
                    by
                ),
                ops: vec![by, grant.id],
            });
            reported += 1;
        }
    }
}

/// Whether an acquire of `grant`'s owner in `mode` left unknown may have made a grant that no
/// answer showed and that was still live when `grant` was invoked (so `grant` may re-grant it).
fn unseen_grant_live(
    history: &SharedHistory,
    ops: &[&SharedOp],
    grant: &SharedOp,
    mode: Mode,
) -> bool {
    let unheard: Vec<&SharedOp> = ops
        .iter()
        .copied()
        .filter(|op| {
            op.kind.owner() == grant.kind.owner()
                && op.outcome.is_unknown()
                && op.invoke < grant.complete
        })
        .collect();
    let unheard_grant = unheard
        .iter()
        .any(|op| matches!(op.kind, SharedOpKind::Acquire { mode: asked, .. } if asked == mode));
    let live_then = unheard.iter().any(|op| {
        op.kind.ttl_us().is_some_and(|ttl| {
            op.latest_effect(history.horizon_us) + ttl + history.margin_us >= grant.invoke
        })
    });
    unheard_grant && live_then
}
