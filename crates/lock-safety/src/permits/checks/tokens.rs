//! Fencing tokens: one token belongs to one grant (one owner on one semaphore), and a new grant
//! draws a token larger than every token shown before it was asked for.

use std::collections::HashMap;

use super::{Finding, Kind, REPORTED};
use crate::permits::{PermitHistory, PermitOp, PermitOpKind, PermitOutcome};
use crate::tokens::{reused, Floor};

/// A token shown for two owners, or on two semaphores (tokens come from one counter, so no two
/// grants share one, whatever their semaphore).
pub(super) fn tokens_with_two_holders(history: &PermitHistory, findings: &mut Vec<Finding>) {
    let shown = history.ops.iter().flat_map(|op| {
        op.shown()
            .iter()
            .map(|l| (l.token, (l.owner.as_str(), l.name.as_str()), op.id))
    });
    for reuse in reused(shown, REPORTED) {
        let ((owner, name), by) = reuse.first;
        let ((then_owner, then_name), id) = reuse.then;
        findings.push(Finding {
            kind: Kind::TokenReused,
            name: then_name.to_owned(),
            message: format!(
                "token {} was shown for {owner} on {name} by op #{by} and for {then_owner} on {then_name} by op #{id}",
                reuse.token
            ),
            ops: vec![by, id],
        });
    }
}

/// A grant is surely new (not a re-grant keeping an earlier token) when its token was shown to
/// its owner by no other answer on the semaphore, and no unseen grant of its owner can have been
/// live when it was invoked. An unseen grant needs an acquire of the owner with an unknown outcome
/// invoked before this grant completed; and it lives only until the expiry the last acquire or
/// renew touching it gave it, which, since no answer showed it, was one left unknown too: at most
/// its latest effect plus its TTL (plus the margin). A new token is drawn after the grant's
/// invoke, so it is larger than every token an answer that completed before that invoke showed.
pub(super) fn new_grant_tokens(
    history: &PermitHistory,
    name: &str,
    ops: &[&PermitOp],
    findings: &mut Vec<Finding>,
) {
    let floor = Floor::new(
        ops.iter()
            .flat_map(|op| op.shown().iter().map(|l| (op.complete, l.token, op.id)))
            .collect(),
    );
    // How many answers showed each (owner, token).
    let mut showings: HashMap<(&str, i64), usize> = HashMap::new();
    for op in ops {
        for lease in op.shown() {
            *showings.entry((&lease.owner, lease.token)).or_default() += 1;
        }
    }
    let mut reported = 0;
    for grant in ops {
        let PermitOutcome::Granted(lease) = &grant.outcome else {
            continue;
        };
        if showings[&(lease.owner.as_str(), lease.token)] > 1 {
            continue;
        }
        let unheard: Vec<&PermitOp> = ops
            .iter()
            .copied()
            .filter(|op| {
                op.kind.owner() == Some(lease.owner.as_str())
                    && op.outcome.is_unknown()
                    && op.invoke < grant.complete
            })
            .collect();
        let unheard_grant = unheard
            .iter()
            .any(|op| matches!(op.kind, PermitOpKind::Acquire { .. }));
        let unheard_live_then = unheard.iter().any(|op| {
            let ttl = match op.kind {
                PermitOpKind::Acquire { ttl_seconds, .. }
                | PermitOpKind::Renew { ttl_seconds, .. } => ttl_seconds,
                _ => return false,
            };
            op.latest_effect(history.horizon_us) + i64::from(ttl) * 1_000_000 + history.margin_us
                >= grant.invoke
        });
        if unheard_grant && unheard_live_then {
            continue;
        }
        let Some((top, by)) = floor.before(grant.invoke) else {
            continue;
        };
        if lease.token <= top && reported < REPORTED {
            findings.push(Finding {
                kind: Kind::TokenRegression,
                name: name.to_owned(),
                message: format!(
                    "op #{} newly granted {} token {}, but op #{} had already completed showing token {top}",
                    grant.id, lease.owner, lease.token, by
                ),
                ops: vec![by, grant.id],
            });
            reported += 1;
        }
    }
}
