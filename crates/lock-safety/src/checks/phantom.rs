//! Grants and releases that no request explains: a lease whose `acquired_at` no acquire of its
//! owner covers, and a 204 release by an owner proved to hold nothing.

use super::observations::{op_owner, Ended, Seen};
use super::{Finding, Kind};
use crate::history::{History, Micros, Op, OpKind, Outcome};

/// Every lease shown was (re)granted, at its `acquired_at` on the server's clock, by an acquire of
/// its owner answered "granted" or left unknown, whose time covers that instant: from its invoke
/// to its completion (plus the horizon when unknown), widened by the margin. (A renew keeps
/// `acquired_at`; only an acquire sets it.)
pub(super) fn phantom_grants(
    history: &History,
    resource: &str,
    seen: &[Seen<'_>],
    findings: &mut Vec<Finding>,
) {
    let acquires: Vec<&Op> = history
        .ops
        .iter()
        .filter(|op| {
            op.resource == resource
                && matches!(op.kind, OpKind::Acquire { .. })
                && matches!(op.outcome, Outcome::Granted(_) | Outcome::Unknown { .. })
        })
        .collect();
    let mut reported: Vec<(i64, Micros)> = Vec::new();
    for s in seen {
        let lease = s.lease;
        let key = (lease.token, lease.acquired_at);
        if reported.contains(&key) {
            continue;
        }
        let explained = acquires.iter().any(|op| {
            let latest = if op.outcome.is_unknown() {
                op.complete.saturating_add(history.horizon_us)
            } else {
                op.complete
            };
            op_owner(op) == Some(lease.owner.as_str())
                && op.invoke - history.margin_us <= lease.acquired_at
                && lease.acquired_at <= latest + history.margin_us
        });
        if !explained && reported.len() < 5 {
            // The owner's last two acquires invoked before that instant, for the slice.
            let mut near: Vec<usize> = history
                .ops
                .iter()
                .filter(|op| {
                    op.resource == resource
                        && op_owner(op) == Some(lease.owner.as_str())
                        && matches!(op.kind, OpKind::Acquire { .. })
                        && op.invoke <= lease.acquired_at
                })
                .map(|op| op.id)
                .collect();
            near.drain(..near.len().saturating_sub(2));
            findings.push(Finding {
                kind: Kind::PhantomGrant,
                resource: resource.to_owned(),
                message: format!(
                    "op #{} showed {} holding token {} acquired at {:.3}s, but no acquire of {} answered granted or unknown was running then{}",
                    s.op.id,
                    lease.owner,
                    lease.token,
                    (lease.acquired_at - history.start) as f64 / 1e6,
                    lease.owner,
                    if near.is_empty() {
                        String::new()
                    } else {
                        format!(" (its last acquires before: {near:?})")
                    }
                ),
                ops: std::iter::once(s.op.id).chain(near).collect(),
            });
            reported.push(key);
        }
    }
}

/// A 204 release by an owner needs a lease of that owner live at some instant of the release.
/// It has none when an answer proved the owner held nothing (a 404, an empty listing, a 403 or
/// "held" to that owner, its own earlier 204), invoked after the latest instant any acquire of the
/// owner (answered granted, or unknown) could have granted, and completed before the release was
/// invoked.
pub(super) fn phantom_releases(
    history: &History,
    resource: &str,
    ended: &[(&Op, Ended<'_>)],
    findings: &mut Vec<Finding>,
) {
    let mut reported = 0;
    for release in history.ops.iter().filter(|op| {
        op.resource == resource
            && matches!(op.kind, OpKind::Release { .. })
            && op.outcome == Outcome::Released
    }) {
        let Some(owner) = op_owner(release) else {
            continue;
        };
        let latest_grant = history
            .ops
            .iter()
            .filter(|op| {
                op.resource == resource
                    && op_owner(op) == Some(owner)
                    && matches!(op.kind, OpKind::Acquire { .. })
                    && matches!(op.outcome, Outcome::Granted(_) | Outcome::Unknown { .. })
                    && op.invoke < release.complete
            })
            .map(|op| {
                if op.outcome.is_unknown() {
                    op.complete.saturating_add(history.horizon_us)
                } else {
                    op.complete
                }
            })
            .max()
            .unwrap_or(Micros::MIN);
        let proof = ended.iter().find(|(op, what)| {
            op.id != release.id
                && op.invoke > latest_grant
                && op.complete < release.invoke
                && match what {
                    Ended::Everything | Ended::Forced(_) => true,
                    Ended::OwnerOf(o) => *o == owner,
                    Ended::AllBut(_) => false,
                }
        });
        if let Some((proof, _)) = proof {
            if reported < 5 {
                findings.push(Finding {
                    kind: Kind::PhantomGrant,
                    resource: resource.to_owned(),
                    message: format!(
                        "op #{} released {owner}'s lease (204), but op #{} had proved {owner} held nothing, after the last instant any acquire of {owner} answered granted or unknown could have granted one",
                        release.id, proof.id
                    ),
                    ops: vec![proof.id, release.id],
                });
                reported += 1;
            }
        }
    }
}
