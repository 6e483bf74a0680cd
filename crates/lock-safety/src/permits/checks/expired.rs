//! A grant shown live after it had surely expired: by a renewal, a re-grant with its token, or
//! a status.

use std::collections::HashMap;

use super::{Finding, Kind, REPORTED};
use crate::history::Micros;
use crate::permits::{PermitHistory, PermitOp, PermitOpKind};

/// A grant `(owner, token)` that an answer completed before `op`'s invoke showed lives at most
/// until the latest expiry anything could have given it before `op` completed: the `expires_at`
/// of every answer showing it that was invoked before then, and, for each acquire or renew of its
/// owner left unknown and invoked before then, its latest effect plus its TTL. Once that instant
/// (plus the margin) has passed when `op` is invoked, `op` cannot show the grant live.
pub(super) fn seen_after_expiry(
    history: &PermitHistory,
    name: &str,
    ops: &[&PermitOp],
    findings: &mut Vec<Finding>,
) {
    let mut of_owner: HashMap<&str, Vec<&PermitOp>> = HashMap::new();
    for &op in ops {
        if let Some(owner) = op.kind.owner() {
            of_owner.entry(owner).or_default().push(op);
        }
    }
    let mut showing: HashMap<(&str, i64), Vec<&PermitOp>> = HashMap::new();
    for &op in ops {
        for lease in op.shown() {
            showing
                .entry((&lease.owner, lease.token))
                .or_default()
                .push(op);
        }
    }
    let mut reported = 0;
    for &op in ops {
        for lease in op.shown() {
            let grant = (lease.owner.as_str(), lease.token);
            let earlier = &showing[&grant];
            let Some(first) = earlier.iter().find(|o| o.complete < op.invoke) else {
                continue;
            };
            let shown_until = earlier
                .iter()
                .filter(|o| o.id != op.id && o.invoke < op.complete)
                .flat_map(|o| o.shown())
                .filter(|l| (l.owner.as_str(), l.token) == grant)
                .map(|l| l.expires_at)
                .max()
                .unwrap_or(Micros::MIN);
            let unheard_until = of_owner
                .get(lease.owner.as_str())
                .into_iter()
                .flatten()
                .filter(|o| o.outcome.is_unknown() && o.invoke < op.complete)
                .filter_map(|o| {
                    let ttl = match o.kind {
                        PermitOpKind::Acquire { ttl_seconds, .. }
                        | PermitOpKind::Renew { ttl_seconds, .. } => ttl_seconds,
                        _ => return None,
                    };
                    Some(o.latest_effect(history.horizon_us) + i64::from(ttl) * 1_000_000)
                })
                .max()
                .unwrap_or(Micros::MIN);
            let ends = shown_until.max(unheard_until);
            if ends.saturating_add(history.margin_us) < op.invoke && reported < REPORTED {
                findings.push(Finding {
                    kind: Kind::SeenAfterExpiry,
                    name: name.to_owned(),
                    message: format!(
                        "{} token {} (shown by op #{}) could live until {:.3}s at the latest, yet op #{}, invoked at {:.3}s, showed it live",
                        lease.owner,
                        lease.token,
                        first.id,
                        (ends - history.start) as f64 / 1e6,
                        op.id,
                        (op.invoke - history.start) as f64 / 1e6
                    ),
                    ops: vec![first.id, op.id],
                });
                reported += 1;
            }
        }
    }
}
