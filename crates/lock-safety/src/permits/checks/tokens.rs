//! Fencing tokens: one token belongs to one grant (one owner on one semaphore), and a new grant
//! draws a token larger than every token shown before it was asked for.

use std::collections::{HashMap, HashSet};

use super::{Finding, Kind, REPORTED};
use crate::history::Micros;
use crate::permits::{PermitHistory, PermitOp, PermitOpKind, PermitOutcome};

/// A token shown for two owners, or on two semaphores (tokens come from one counter, so no two
/// grants share one, whatever their semaphore).
pub(super) fn tokens_with_two_holders(history: &PermitHistory, findings: &mut Vec<Finding>) {
    let mut first: HashMap<i64, (&str, &str, usize)> = HashMap::new();
    let mut reported: HashSet<i64> = HashSet::new();
    for op in &history.ops {
        for lease in op.shown() {
            let (owner, name, by) =
                *first
                    .entry(lease.token)
                    .or_insert((&lease.owner, &lease.name, op.id));
            if (owner == lease.owner && name == lease.name) || reported.contains(&lease.token) {
                continue;
            }
            if reported.len() < REPORTED {
                findings.push(Finding {
                    kind: Kind::TokenReused,
                    name: lease.name.clone(),
                    message: format!(
                        "token {} was shown for {owner} on {name} by op #{by} and for {} on {} by op #{}",
                        lease.token, lease.owner, lease.name, op.id
                    ),
                    ops: vec![by, op.id],
                });
            }
            reported.insert(lease.token);
        }
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
    // Every token shown, by the completion of its answer, with the running maximum.
    let mut shown: Vec<(Micros, i64, usize)> = ops
        .iter()
        .flat_map(|op| op.shown().iter().map(|l| (op.complete, l.token, op.id)))
        .collect();
    shown.sort_unstable();
    let mut best: Vec<(i64, usize)> = Vec::with_capacity(shown.len());
    for &(_, token, id) in &shown {
        let running = best.last().copied().filter(|&(t, _)| t >= token);
        best.push(running.unwrap_or((token, id)));
    }
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
        let before = shown.partition_point(|&(complete, _, _)| complete < grant.invoke);
        let Some(&(top, by)) = before.checked_sub(1).map(|i| &best[i]) else {
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
