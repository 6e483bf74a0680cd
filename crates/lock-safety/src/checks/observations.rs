//! What each definite answer shows about one resource: the leases it saw live, and what it proves
//! was not live at its instant.

use crate::history::{is_session_owner, History, Lease, Op, OpKind, Outcome};

/// A lease as one definite answer showed it, on one resource.
#[derive(Debug, Clone)]
pub(super) struct Seen<'a> {
    pub(super) op: &'a Op,
    pub(super) lease: &'a Lease,
    /// Whether the answer was the owner's own grant or renew (an acknowledged hold).
    pub(super) acknowledged: bool,
}

/// What one definite answer proves was not live at its instant.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ended<'a> {
    /// Nothing was live (404, a listing without the resource).
    Everything,
    /// Only this token was live.
    AllBut(i64),
    /// The owner's lease was not live (403, held by another, or released by the owner: 204).
    OwnerOf(&'a str),
    /// A force-release ended this token, the only live lease at its instant: nothing was live
    /// right after.
    Forced(i64),
}

/// Whether a force-release may have ended the lease `token` of `owner`: unanswered, or answered
/// with that lease among those it ended (any other answer says it did not).
pub(super) fn may_force_end(op: &Op, owner: &str, token: i64) -> bool {
    match &op.outcome {
        Outcome::Unknown { .. } => true,
        Outcome::ForceReleased(ended) => ended.iter().any(|e| e.owner == owner && e.token == token),
        _ => false,
    }
}

/// Whether an operation may have ended or shortened a lease of its owner (a session's close ends
/// every hold of the session, on any resource).
pub(super) fn may_end_a_lease(op: &Op) -> bool {
    matches!(
        op.kind,
        OpKind::Acquire { .. }
            | OpKind::Release { .. }
            | OpKind::Renew { .. }
            | OpKind::EndSession { .. }
    ) && !matches!(op.outcome, Outcome::Failed { .. })
}

pub(super) fn op_owner(op: &Op) -> Option<&str> {
    match &op.kind {
        OpKind::Acquire { owner, .. }
        | OpKind::Release { owner }
        | OpKind::Renew { owner, .. }
        | OpKind::EndSession { owner } => Some(owner),
        _ => None,
    }
}

/// The session of a release under a session.
pub(crate) fn session_release(op: &Op) -> Option<&str> {
    match &op.kind {
        OpKind::Release { owner } if is_session_owner(owner) => Some(owner),
        _ => None,
    }
}

pub(super) fn observations<'a>(
    history: &'a History,
    resource: &str,
) -> (Vec<Seen<'a>>, Vec<(&'a Op, Ended<'a>)>) {
    let mut seen = Vec::new();
    let mut ended = Vec::new();
    for op in &history.ops {
        match &op.outcome {
            // A listing covers the resources under its prefix (the op's resource) only.
            Outcome::Listed(_) if !resource.starts_with(op.resource.as_str()) => continue,
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
            Outcome::NotFound => match session_release(op) {
                // An ended session's release finds no hold of it, whoever holds the place.
                Some(session) => ended.push((op, Ended::OwnerOf(session))),
                None => ended.push((op, Ended::Everything)),
            },
            Outcome::Seen(None) => ended.push((op, Ended::Everything)),
            // Several leases at once are the search's to judge; none is what a 404 says.
            Outcome::ForceReleased(leases) => match leases.as_slice() {
                [one] => ended.push((op, Ended::Forced(one.token))),
                [] => ended.push((op, Ended::Everything)),
                _ => {}
            },
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
