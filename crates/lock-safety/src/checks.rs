//! Direct checks of the classic ways a lock fails, each with a plain message. They need no
//! search, so they also judge a partition whose search ran out of budget. Every check only uses
//! what the clocks prove: an answer's effect happened between its invoke and its completion, a
//! lease is surely held from the completion of the answer that showed it until the earlier of
//! its `expires_at` (less the margin) and the invoke of anything its owner did next on the
//! resource that might have ended or shortened it.

use std::collections::HashMap;

use crate::history::{History, Lease, Micros, Op, OpKind, Outcome};

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Two acknowledged holds of different leases overlap in time.
    DoubleGrant,
    /// A token smaller than one seen before, or one token shown for two owners.
    TokenRegression,
    /// A lease seen live after an answer proved it over (released, expired, replaced).
    Revived,
    /// A status read or listing, made while an acknowledged lease was surely held, did not show it.
    LostAcknowledgement,
    /// A lease whose grant no acquire of its owner can explain: its `acquired_at` lies outside
    /// every granted or unknown acquire of that owner (a grant after a definite refusal, say).
    PhantomGrant,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::DoubleGrant => "two acknowledged holds overlap",
            Kind::TokenRegression => "fencing tokens went backwards or were reused",
            Kind::Revived => "an ended lease was seen live again",
            Kind::LostAcknowledgement => "an acknowledged lease was not seen by a later read",
            Kind::PhantomGrant => "a lease was granted that no request of its owner explains",
        }
    }
}

/// One finding: its kind, a sentence, and the operations that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub resource: String,
    pub message: String,
    pub ops: Vec<usize>,
}

/// A lease as one definite answer showed it, on one resource.
#[derive(Debug, Clone)]
struct Seen<'a> {
    op: &'a Op,
    lease: &'a Lease,
    /// Whether the answer was the owner's own grant or renew (an acknowledged hold).
    acknowledged: bool,
}

/// What one definite answer proves was not live at its instant.
#[derive(Debug, Clone, Copy)]
enum Ended<'a> {
    /// Nothing was live (404, a listing without the resource).
    Everything,
    /// Only this token was live.
    AllBut(i64),
    /// The owner's lease was not live (403, held by another, or released by the owner: 204).
    OwnerOf(&'a str),
}

/// Runs every direct check on every resource of the history.
pub fn run(history: &History) -> Vec<Finding> {
    let mut findings = Vec::new();
    for resource in &history.resources {
        let (seen, ended) = observations(history, resource);
        let owner_ops: Vec<&Op> = history
            .ops
            .iter()
            .filter(|op| &op.resource == resource && may_end_a_lease(op))
            .collect();
        let holds = holds(history, &seen, &owner_ops);
        double_grants(resource, &holds, &mut findings);
        token_order(resource, &seen, &mut findings);
        revivals(resource, &seen, &ended, &mut findings);
        lost_acknowledgements(resource, &holds, &ended, &mut findings);
        phantom_grants(history, resource, &seen, &mut findings);
        phantom_releases(history, resource, &ended, &mut findings);
    }
    findings
}

/// Whether an operation may have ended or shortened a lease of its owner.
fn may_end_a_lease(op: &Op) -> bool {
    matches!(
        op.kind,
        OpKind::Acquire { .. } | OpKind::Release { .. } | OpKind::Renew { .. }
    ) && !matches!(op.outcome, Outcome::Failed { .. })
}

fn op_owner(op: &Op) -> Option<&str> {
    match &op.kind {
        OpKind::Acquire { owner, .. } | OpKind::Release { owner } | OpKind::Renew { owner, .. } => {
            Some(owner)
        }
        _ => None,
    }
}

fn observations<'a>(
    history: &'a History,
    resource: &str,
) -> (Vec<Seen<'a>>, Vec<(&'a Op, Ended<'a>)>) {
    let mut seen = Vec::new();
    let mut ended = Vec::new();
    for op in &history.ops {
        match &op.outcome {
            Outcome::Listed(leases) => {
                match leases.iter().find(|l| l.resource == resource) {
                    Some(lease) => {
                        seen.push(Seen {
                            op,
                            lease,
                            acknowledged: false,
                        });
                        ended.push((op, Ended::AllBut(lease.token)));
                    }
                    None => ended.push((op, Ended::Everything)),
                }
                continue;
            }
            _ if op.resource != resource => continue,
            Outcome::Granted(lease) | Outcome::Renewed(lease) => {
                seen.push(Seen {
                    op,
                    lease,
                    acknowledged: true,
                });
                ended.push((op, Ended::AllBut(lease.token)));
            }
            Outcome::Seen(Some(lease)) => {
                seen.push(Seen {
                    op,
                    lease,
                    acknowledged: false,
                });
                ended.push((op, Ended::AllBut(lease.token)));
            }
            Outcome::Seen(None) | Outcome::NotFound => ended.push((op, Ended::Everything)),
            Outcome::Forbidden | Outcome::Held | Outcome::Released => {
                if let Some(owner) = op_owner(op) {
                    ended.push((op, Ended::OwnerOf(owner)));
                }
            }
            _ => {}
        }
    }
    (seen, ended)
}

/// An interval in which a lease was surely held.
#[derive(Debug, Clone)]
struct Hold<'a> {
    from: Micros,
    until: Micros,
    seen: Seen<'a>,
    /// The operation whose invoke cut the hold short, if any.
    cut_by: Option<usize>,
}

fn holds<'a>(history: &History, seen: &[Seen<'a>], owner_ops: &[&Op]) -> Vec<Hold<'a>> {
    let mut holds = Vec::new();
    for s in seen.iter().filter(|s| s.acknowledged) {
        let mut until = s.lease.expires_at - history.margin_us;
        let mut cut_by = None;
        for other in owner_ops {
            if other.id == s.op.id || op_owner(other) != Some(s.lease.owner.as_str()) {
                continue;
            }
            // Anything of the owner's still able to take effect after this answer's invoke.
            let latest = if other.outcome.is_unknown() {
                other.complete.saturating_add(history.horizon_us)
            } else {
                other.complete
            };
            if latest > s.op.invoke && other.invoke < until {
                until = other.invoke;
                cut_by = Some(other.id);
            }
        }
        if s.op.complete < until {
            holds.push(Hold {
                from: s.op.complete,
                until,
                seen: s.clone(),
                cut_by,
            });
        }
    }
    holds.sort_by_key(|h| h.from);
    holds
}

fn double_grants(resource: &str, holds: &[Hold<'_>], findings: &mut Vec<Finding>) {
    for (i, a) in holds.iter().enumerate() {
        for b in &holds[i + 1..] {
            if b.from >= a.until {
                continue;
            }
            let same = a.seen.lease.owner == b.seen.lease.owner
                && a.seen.lease.token == b.seen.lease.token;
            if !same && a.from < b.until {
                findings.push(Finding {
                    kind: Kind::DoubleGrant,
                    resource: resource.to_owned(),
                    message: format!(
                        "{} (token {}) was surely held from op #{}'s answer until {}, and {} (token {}) from op #{}'s answer: both at once",
                        a.seen.lease.owner,
                        a.seen.lease.token,
                        a.seen.op.id,
                        a.cut_by.map_or("its expiry".to_owned(), |id| format!("op #{id}")),
                        b.seen.lease.owner,
                        b.seen.lease.token,
                        b.seen.op.id,
                    ),
                    ops: vec![a.seen.op.id, b.seen.op.id],
                });
            }
        }
    }
}

fn token_order(resource: &str, seen: &[Seen<'_>], findings: &mut Vec<Finding>) {
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

fn revivals(
    resource: &str,
    seen: &[Seen<'_>],
    ended: &[(&Op, Ended<'_>)],
    findings: &mut Vec<Finding>,
) {
    // For each token: its owner and the first completion of an answer that showed it.
    let mut first: HashMap<i64, (&str, Micros, usize)> = HashMap::new();
    for s in seen {
        let entry = first
            .entry(s.lease.token)
            .or_insert((&s.lease.owner, s.op.complete, s.op.id));
        if s.op.complete < entry.1 {
            *entry = (&s.lease.owner, s.op.complete, s.op.id);
        }
    }
    // The earliest completion of an answer, invoked after the token was surely granted, that
    // proved it not live.
    let mut over: HashMap<i64, (Micros, usize)> = HashMap::new();
    for (&token, &(owner, shown, _)) in &first {
        for (op, what) in ended {
            if op.invoke <= shown {
                continue;
            }
            let ends = match what {
                Ended::Everything => true,
                Ended::AllBut(live) => *live != token,
                Ended::OwnerOf(o) => *o == owner,
            };
            if ends && over.get(&token).is_none_or(|&(at, _)| op.complete < at) {
                over.insert(token, (op.complete, op.id));
            }
        }
    }
    let mut reported = 0;
    for s in seen {
        if let Some(&(at, ender)) = over.get(&s.lease.token) {
            if s.op.invoke > at && reported < 5 {
                let (_, _, shown_by) = first[&s.lease.token];
                findings.push(Finding {
                    kind: Kind::Revived,
                    resource: resource.to_owned(),
                    message: format!(
                        "token {} ({}), shown by op #{}, was proved not live by op #{}, yet op #{} (invoked after) showed it live",
                        s.lease.token, s.lease.owner, shown_by, ender, s.op.id
                    ),
                    ops: vec![shown_by, ender, s.op.id],
                });
                reported += 1;
            }
        }
    }
}

fn lost_acknowledgements(
    resource: &str,
    holds: &[Hold<'_>],
    ended: &[(&Op, Ended<'_>)],
    findings: &mut Vec<Finding>,
) {
    let mut reported = 0;
    for hold in holds {
        for (op, what) in ended {
            if op.invoke <= hold.from || op.complete >= hold.until {
                continue;
            }
            let misses = match what {
                Ended::Everything => true,
                Ended::AllBut(live) => *live != hold.seen.lease.token,
                // A 403 or a refusal of the holder itself, or a 204 of someone else.
                Ended::OwnerOf(owner) => *owner == hold.seen.lease.owner,
            };
            if misses && reported < 5 {
                findings.push(Finding {
                    kind: Kind::LostAcknowledgement,
                    resource: resource.to_owned(),
                    message: format!(
                        "{} (token {}) was surely held from op #{}'s answer until {}, but op #{} in between did not see it",
                        hold.seen.lease.owner,
                        hold.seen.lease.token,
                        hold.seen.op.id,
                        hold.cut_by.map_or("its expiry".to_owned(), |id| format!("op #{id}")),
                        op.id
                    ),
                    ops: vec![hold.seen.op.id, op.id],
                });
                reported += 1;
            }
        }
    }
}

/// Every lease shown was (re)granted, at its `acquired_at` on the server's clock, by an acquire of
/// its owner answered "granted" or left unknown, whose time covers that instant: from its invoke
/// to its completion (plus the horizon when unknown), widened by the margin. (A renew keeps
/// `acquired_at`; only an acquire sets it.)
fn phantom_grants(
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
fn phantom_releases(
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
                    Ended::Everything => true,
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
