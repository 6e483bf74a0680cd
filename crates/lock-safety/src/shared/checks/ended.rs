//! A lease shown live (by a status, a renewal or a re-grant with its token) after it was surely
//! over: after an answer proved it not live, or after it had surely expired.

use std::collections::HashMap;

use super::{Finding, Kind, Lease, REPORTED};
use crate::history::Micros;
use crate::shared::{Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};

/// What one definite answer proves about the leases of its resource, at one instant of its own.
enum Proof<'a> {
    /// These were all the live leases: a status (none for a 404), a 404 to a renew or release
    /// (nobody held the resource), an exclusive grant or renewal (its lease alone).
    AllLive(Vec<Lease<'a>>),
    /// A shared grant or renewal: the owner's one live lease was this one, and no writer held.
    Reader(Lease<'a>),
    /// The owner held no live lease: its release answered 204, or 403 to its renew or release.
    OwnerHoldsNothing(&'a str),
}

impl Proof<'_> {
    /// Whether the lease `(owner, token)` in `mode` was not live at the answer's instant.
    fn ends(&self, (owner, token): Lease<'_>, mode: Mode) -> bool {
        match self {
            Proof::AllLive(live) => !live.contains(&(owner, token)),
            Proof::Reader((o, t)) => {
                (*o == owner && *t != token) || (*o != owner && mode == Mode::Exclusive)
            }
            Proof::OwnerHoldsNothing(o) => *o == owner,
        }
    }
}

fn proof(op: &SharedOp) -> Option<Proof<'_>> {
    let owner = op.kind.owner();
    Some(match &op.outcome {
        SharedOutcome::Granted(h) | SharedOutcome::Renewed(h) => match h.mode {
            Mode::Exclusive => Proof::AllLive(vec![(&h.owner, h.token)]),
            Mode::Shared => Proof::Reader((&h.owner, h.token)),
        },
        SharedOutcome::Seen(holders) => {
            Proof::AllLive(holders.iter().map(|h| (&*h.owner, h.token)).collect())
        }
        SharedOutcome::NotFound => Proof::AllLive(Vec::new()),
        SharedOutcome::Released | SharedOutcome::Forbidden => Proof::OwnerHoldsNothing(owner?),
        _ => return None,
    })
}

/// Once an answer invoked after a lease was first shown proves it not live, the lease is over
/// for good (a re-grant keeps a token only while its lease is live), so no answer invoked after
/// that proof completed may show it.
pub(super) fn revivals(resource: &str, ops: &[&SharedOp], findings: &mut Vec<Finding>) {
    // Each lease: the first completion of an answer that showed it, that answer, its mode.
    let mut first: HashMap<Lease<'_>, (Micros, usize, Mode)> = HashMap::new();
    for op in ops {
        for h in op.shown() {
            let entry = first
                .entry((&h.owner, h.token))
                .or_insert((op.complete, op.id, h.mode));
            if op.complete < entry.0 {
                *entry = (op.complete, op.id, h.mode);
            }
        }
    }
    let mut proofs: Vec<(&SharedOp, Proof<'_>)> = ops
        .iter()
        .filter_map(|&op| proof(op).map(|p| (op, p)))
        .collect();
    proofs.sort_by_key(|(op, _)| (op.complete, op.id));
    // Each lease: the earliest completion of such a proof, and its answer.
    let mut over: HashMap<Lease<'_>, (Micros, usize)> = HashMap::new();
    for (&lease, &(shown, _, mode)) in &first {
        // A proof invoked after `shown` also completed after it.
        let later = proofs.partition_point(|(op, _)| op.complete <= shown);
        let ender = proofs[later..]
            .iter()
            .find(|(op, p)| op.invoke > shown && p.ends(lease, mode));
        if let Some((op, _)) = ender {
            over.insert(lease, (op.complete, op.id));
        }
    }
    let mut reported: Vec<Lease<'_>> = Vec::new();
    for op in ops {
        for h in op.shown() {
            let lease = (h.owner.as_str(), h.token);
            let Some(&(at, ender)) = over.get(&lease) else {
                continue;
            };
            if op.invoke <= at || reported.contains(&lease) || reported.len() >= REPORTED {
                continue;
            }
            let shown_by = first[&lease].1;
            findings.push(Finding {
                kind: Kind::Revived,
                resource: resource.to_owned(),
                message: format!(
                    "{} {} token {}, shown by op #{shown_by}, was proved not live by op #{ender}, yet op #{} (invoked after) showed it live",
                    h.owner,
                    h.mode.as_str(),
                    h.token,
                    op.id
                ),
                ops: vec![shown_by, ender, op.id],
            });
            reported.push(lease);
        }
    }
}

/// A lease that an answer completed before `op`'s invoke showed lives at most until the latest
/// expiry anything could have given it before `op` completed: the `expires_at` of every answer
/// showing it that was invoked before then, and, for each acquire or renew of its owner left
/// unknown and invoked before then while the lease may still have been live, its latest effect
/// plus its TTL. Once that instant (plus the margin) has passed when `op` is invoked, `op` cannot
/// show the lease live.
pub(super) fn seen_after_expiry(
    history: &SharedHistory,
    resource: &str,
    ops: &[&SharedOp],
    findings: &mut Vec<Finding>,
) {
    let mut unheard: HashMap<&str, Vec<&SharedOp>> = HashMap::new();
    for &op in ops {
        if let (Some(owner), true) = (op.kind.owner(), op.outcome.is_unknown()) {
            if matches!(
                op.kind,
                SharedOpKind::Acquire { .. } | SharedOpKind::Renew { .. }
            ) {
                unheard.entry(owner).or_default().push(op);
            }
        }
    }
    for of_owner in unheard.values_mut() {
        of_owner.sort_by_key(|o| o.invoke);
    }
    let mut showing: HashMap<Lease<'_>, Vec<&SharedOp>> = HashMap::new();
    for &op in ops {
        for h in op.shown() {
            showing.entry((&h.owner, h.token)).or_default().push(op);
        }
    }
    let mut reported = 0;
    for &op in ops {
        for h in op.shown() {
            let lease = (h.owner.as_str(), h.token);
            let earlier = &showing[&lease];
            let Some(first) = earlier.iter().find(|o| o.complete < op.invoke) else {
                continue;
            };
            let shown_until = earlier
                .iter()
                .filter(|o| o.id != op.id && o.invoke < op.complete)
                .flat_map(|o| o.shown())
                .filter(|s| (s.owner.as_str(), s.token) == lease)
                .map(|s| s.expires_at)
                .max()
                .unwrap_or(Micros::MIN);
            // An unheard acquire or renew extends the lease only if it may have run while the
            // lease was live (as far as the known end shows): in invoke order, each such one
            // that is invoked before that end may push it to its latest effect plus its TTL.
            let mut ends = shown_until;
            for o in unheard.get(lease.0).into_iter().flatten() {
                if o.invoke >= op.complete || o.invoke > ends.saturating_add(history.margin_us) {
                    break;
                }
                let ttl = o.kind.ttl_us().unwrap_or(0);
                ends = ends.max(o.latest_effect(history.horizon_us) + ttl);
            }
            if ends.saturating_add(history.margin_us) < op.invoke && reported < REPORTED {
                findings.push(Finding {
                    kind: Kind::SeenAfterExpiry,
                    resource: resource.to_owned(),
                    message: format!(
                        "{} {} token {} (shown by op #{}) could live until {:.3}s at the latest, yet op #{}, invoked at {:.3}s, showed it live",
                        h.owner,
                        h.mode.as_str(),
                        h.token,
                        first.id,
                        history.at(ends),
                        op.id,
                        history.at(op.invoke)
                    ),
                    ops: vec![first.id, op.id],
                });
                reported += 1;
            }
        }
    }
}
