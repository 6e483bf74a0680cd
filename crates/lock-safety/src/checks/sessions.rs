//! Sessions: one session's holds, on every resource, end together with it, and an ended session
//! never lives again. Each check uses only what the clocks prove.
//!
//! A session is surely over:
//! - once an answer said so: its close answered 204 or 404, a keepalive or an acquire under it
//!   answered 404;
//! - once one of its holds was taken over: a lease of another owner, with a larger token, shown
//!   on a resource where the session was granted a lease it never released itself and that no
//!   force-release can have ended (so the session ended, and every hold with it);
//! - after its last possible end: every end its opening and keepalives answered (plus the
//!   margin), or, for one left unanswered, the session's TTL after the latest instant it may
//!   have run.
//!
//! After that, no keepalive, close or acquire under it may succeed (a keepalive never revives a
//! session), and no read may show one of its holds live (no hold of an ended session is seen
//! again; its holds ended together).

use std::collections::{BTreeMap, HashMap};

use super::{Finding, Kind};
use crate::history::{is_session_owner, History, Lease, Micros, Op, OpKind, Outcome};
use crate::op_line::seconds;

/// At most this many findings of a kind for one session.
const REPORTED: usize = 3;

/// Every session of the history.
pub(super) fn sessions(history: &History, findings: &mut Vec<Finding>) {
    let mut by_session: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in &history.ops {
        if let Some(owner) = session_of(op) {
            by_session.entry(owner).or_default().push(op);
        }
    }
    let shown = shown_leases(history);
    for (session, ops) in by_session {
        let ended = surely_ended(history, session, &ops, &shown);
        let mut reported: HashMap<Kind, usize> = HashMap::new();
        let mut report = |kind: Kind, message: String, ops: Vec<usize>| {
            let count = reported.entry(kind).or_default();
            if *count < REPORTED {
                *count += 1;
                findings.push(Finding {
                    kind,
                    resource: session.to_owned(),
                    message,
                    ops,
                });
            }
        };
        // What showed the session live, and when it did.
        let lived = ops
            .iter()
            .filter(|op| succeeded(op))
            .map(|op| (*op, None))
            .chain(
                shown
                    .iter()
                    .filter(|(_, lease)| lease.owner == session)
                    .map(|(op, lease)| (*op, Some(*lease))),
            );
        for (op, lease) in lived {
            let what = match lease {
                Some(lease) => format!(
                    "op #{} showed its hold on {} (token {}) live",
                    op.id, lease.resource, lease.token
                ),
                None => format!("op #{} succeeded", op.id),
            };
            if let Some((at, proof)) = ended {
                if op.invoke > at {
                    let kind = if lease.is_some() {
                        Kind::SessionHoldAfterEnd
                    } else {
                        Kind::SessionRevived
                    };
                    report(
                        kind,
                        format!(
                            "{session} was proved over by op #{proof}, yet {what} (invoked after)"
                        ),
                        vec![proof, op.id],
                    );
                    continue;
                }
            }
            let (end, made_by) = latest_end(history, &ops, op);
            if op.invoke > end {
                let kind = if lease.is_some() {
                    Kind::SessionHoldAfterEnd
                } else {
                    Kind::SessionRevived
                };
                let by = made_by.map_or("no keepalive".to_owned(), |id| format!("op #{id}"));
                report(
                    kind,
                    format!(
                        "{session} could live until {} at the latest ({by}), yet {what}, invoked after",
                        seconds(end, history.start)
                    ),
                    made_by.into_iter().chain([op.id]).collect(),
                );
            }
        }
    }
}

/// The session an operation acts under or on, if any.
fn session_of(op: &Op) -> Option<&str> {
    match &op.kind {
        OpKind::OpenSession { owner, .. }
        | OpKind::KeepAlive { owner, .. }
        | OpKind::EndSession { owner }
        | OpKind::Acquire { owner, .. }
        | OpKind::Release { owner }
            if is_session_owner(owner) =>
        {
            Some(owner)
        }
        _ => None,
    }
}

/// Whether the operation's answer says the session lived at its instant.
fn succeeded(op: &Op) -> bool {
    matches!(
        (&op.kind, &op.outcome),
        (OpKind::KeepAlive { .. }, Outcome::Kept { .. })
            | (OpKind::EndSession { .. }, Outcome::Released)
            | (OpKind::Acquire { .. }, Outcome::Granted(_))
    )
}

/// Every lease an answer showed live, with the answer.
fn shown_leases(history: &History) -> Vec<(&Op, &Lease)> {
    let mut shown = Vec::new();
    for op in &history.ops {
        match &op.outcome {
            Outcome::Granted(l) | Outcome::Renewed(l) | Outcome::Seen(Some(l)) => {
                shown.push((op, l))
            }
            Outcome::Listed(ls) => shown.extend(ls.iter().map(|l| (op, l))),
            _ => {}
        }
    }
    shown
}

/// The earliest instant the session was surely over, and the operation that proves it.
fn surely_ended(
    history: &History,
    session: &str,
    ops: &[&Op],
    shown: &[(&Op, &Lease)],
) -> Option<(Micros, usize)> {
    let mut ended: Option<(Micros, usize)> = None;
    let mut note = |at: Micros, id: usize| {
        if ended.is_none_or(|(earliest, _)| at < earliest) {
            ended = Some((at, id));
        }
    };
    for op in ops {
        let over = matches!(
            (&op.kind, &op.outcome),
            (
                OpKind::EndSession { .. },
                Outcome::Released | Outcome::NotFound
            ) | (OpKind::KeepAlive { .. }, Outcome::NotFound)
                | (OpKind::Acquire { .. }, Outcome::Failed { status: 404 })
        );
        if over {
            note(op.complete, op.id);
        }
    }
    // Taken over: a hold the session was granted, never released by itself, no force-release
    // near, shown replaced by another owner's lease with a larger token.
    for grant in ops {
        let Outcome::Granted(held) = &grant.outcome else {
            continue;
        };
        let resource = held.resource.as_str();
        let released = ops
            .iter()
            .any(|op| op.resource == resource && matches!(op.kind, OpKind::Release { .. }));
        if released {
            continue;
        }
        for (op, lease) in shown {
            if lease.resource != resource
                || lease.owner == session
                || lease.token <= held.token
                || op.invoke < grant.invoke
            {
                continue;
            }
            // A force-release may have ended the hold if it may have run between the grant and
            // this answer.
            let forced = history.ops.iter().any(|force| {
                let latest = if force.outcome.is_unknown() {
                    force.complete.saturating_add(history.horizon_us)
                } else {
                    force.complete
                };
                force.resource == resource
                    && matches!(force.kind, OpKind::ForceRelease { .. })
                    && force.invoke < op.complete
                    && latest > grant.invoke
            });
            if !forced {
                note(op.complete, op.id);
            }
        }
    }
    ended
}

/// The latest instant the session may have lived until when `at` took effect, given what else
/// was invoked before `at` completed: every end an opening or keepalive answered (plus the
/// margin), and for one left unanswered its TTL after the latest instant it may have run. With
/// the operation that gave it.
fn latest_end(history: &History, ops: &[&Op], at: &Op) -> (Micros, Option<usize>) {
    let by = at.complete;
    let mut latest = (Micros::MIN, None);
    for op in ops.iter().filter(|op| op.invoke < by && op.id != at.id) {
        let ttl = match &op.kind {
            OpKind::OpenSession { ttl_seconds, .. } | OpKind::KeepAlive { ttl_seconds, .. } => {
                i64::from(*ttl_seconds) * 1_000_000
            }
            _ => continue,
        };
        let end = match &op.outcome {
            Outcome::Kept { expires_at } => expires_at + history.margin_us,
            Outcome::Unknown { .. } => op
                .complete
                .saturating_add(history.horizon_us)
                .min(by)
                .saturating_add(ttl)
                .saturating_add(history.margin_us),
            _ => continue,
        };
        if end > latest.0 {
            latest = (end, Some(op.id));
        }
    }
    latest
}
