//! A multi-lock operation split into the per-resource operations it amounts to, one per
//! resource, for the lock history (the resources only ever locked exclusively) and the
//! shared-lock history (the resources locked in both modes).

use crate::history::{Lease, Op, OpKind, Outcome};
use crate::shared::{Mode, SharedOp, SharedOpKind, SharedOutcome};

use super::{MultiOp, MultiOpKind, MultiOutcome, Released};

/// The per-resource operations of one multi-lock operation (ids not yet assigned), each with the
/// client, invoke and completion of the whole operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub locks: Vec<Op>,
    pub shared: Vec<SharedOp>,
}

/// One resource's part of an operation: what was asked and what the answer says of it.
enum Part {
    Acquire(Mode, Answer),
    Release(Answer),
}

/// What the whole answer says about one resource.
enum Answer {
    /// Granted this lease (owner, mode and resource as asked).
    Granted(crate::shared::Holder),
    /// Named unavailable: could not be granted at one instant of the request.
    Held,
    Released,
    Forbidden,
    NotFound,
    /// May have happened or not.
    Unknown(String),
}

/// Splits `op` into its per-resource operations: a resource of `shared_resources` goes to the
/// shared-lock history, any other to the lock history (which knows exclusive leases only: the
/// runner asks those resources exclusively, and a lock asked shared there is recorded unknown).
///
/// A granted lock is a granted acquire; a lock an `acquired: false` names is an acquire answered
/// "held" (it was unavailable to the owner at the instant the set was decided); a lock it does not
/// name was not touched and is left out; a granted answer that does not show a lock as asked
/// leaves that lock unknown. Each result of a `DELETE /locks` is that release's answer (a result
/// missing is unknown). An unknown operation is unknown on every resource; a failed one (a 4xx,
/// a refused connection) changed nothing and is left out.
pub fn split(op: &MultiOp, shared_resources: &[String]) -> Split {
    let mut out = Split::default();
    for (resource, part) in parts(op) {
        if shared_resources.iter().any(|r| r == resource) {
            out.shared.push(shared_op(op, resource, part));
        } else {
            out.locks.push(lock_op(op, resource, part));
        }
    }
    out
}

fn parts(op: &MultiOp) -> Vec<(&str, Part)> {
    let unknown = |why: &str| Answer::Unknown(why.to_owned());
    match (&op.kind, &op.outcome) {
        (_, MultiOutcome::Failed { .. }) => Vec::new(),
        (MultiOpKind::AcquireAll { locks, .. }, outcome) => locks
            .iter()
            .filter_map(|(resource, mode)| {
                let answer = match outcome {
                    MultiOutcome::Granted(holders) => {
                        match holders.iter().find(|h| &h.resource == resource) {
                            Some(h) if h.owner == op.kind.owner() && h.mode == *mode => {
                                Answer::Granted(h.clone())
                            }
                            _ => unknown("the set's grant did not show this lock as asked"),
                        }
                    }
                    MultiOutcome::Unavailable(names) if names.contains(resource) => Answer::Held,
                    MultiOutcome::Unavailable(_) => return None,
                    MultiOutcome::Unknown { why } => unknown(why),
                    _ => unknown("an answer of another request"),
                };
                Some((resource.as_str(), Part::Acquire(*mode, answer)))
            })
            .collect(),
        (MultiOpKind::ReleaseAll { resources, .. }, outcome) => resources
            .iter()
            .map(|resource| {
                let answer = match outcome {
                    MultiOutcome::Results(results) => {
                        match results.iter().find(|(r, _)| r == resource) {
                            Some((_, Released::Released)) => Answer::Released,
                            Some((_, Released::Forbidden)) => Answer::Forbidden,
                            Some((_, Released::NotFound)) => Answer::NotFound,
                            None => unknown("the answer named no result for this lock"),
                        }
                    }
                    MultiOutcome::Unknown { why } => unknown(why),
                    _ => unknown("an answer of another request"),
                };
                (resource.as_str(), Part::Release(answer))
            })
            .collect(),
    }
}

fn shared_op(op: &MultiOp, resource: &str, part: Part) -> SharedOp {
    let owner = op.kind.owner().to_owned();
    let (kind, answer) = match part {
        Part::Acquire(mode, answer) => {
            let (ttl_seconds, wait_seconds) = ttl_and_wait(&op.kind);
            let kind = SharedOpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds,
                mode,
            };
            (kind, answer)
        }
        Part::Release(answer) => (SharedOpKind::Release { owner }, answer),
    };
    let outcome = match answer {
        Answer::Granted(holder) => SharedOutcome::Granted(holder),
        Answer::Held => SharedOutcome::Held,
        Answer::Released => SharedOutcome::Released,
        Answer::Forbidden => SharedOutcome::Forbidden,
        Answer::NotFound => SharedOutcome::NotFound,
        Answer::Unknown(why) => SharedOutcome::Unknown { why },
    };
    SharedOp {
        id: 0,
        client: op.client,
        resource: resource.to_owned(),
        kind,
        invoke: op.invoke,
        complete: op.complete,
        outcome,
    }
}

fn lock_op(op: &MultiOp, resource: &str, part: Part) -> Op {
    let owner = op.kind.owner().to_owned();
    let (kind, answer) = match part {
        Part::Acquire(mode, answer) => {
            let (ttl_seconds, wait_seconds) = ttl_and_wait(&op.kind);
            let kind = OpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds,
            };
            let answer = match (mode, answer) {
                (Mode::Shared, _) => Answer::Unknown(
                    "a shared lock on a resource of the exclusive lock history".to_owned(),
                ),
                (Mode::Exclusive, answer) => answer,
            };
            (kind, answer)
        }
        Part::Release(answer) => (OpKind::Release { owner }, answer),
    };
    let outcome = match answer {
        Answer::Granted(h) => Outcome::Granted(Lease {
            resource: h.resource,
            owner: h.owner,
            token: h.token,
            acquired_at: h.acquired_at,
            expires_at: h.expires_at,
        }),
        Answer::Held => Outcome::Held,
        Answer::Released => Outcome::Released,
        Answer::Forbidden => Outcome::Forbidden,
        Answer::NotFound => Outcome::NotFound,
        Answer::Unknown(why) => Outcome::Unknown { why },
    };
    Op {
        id: 0,
        client: op.client,
        resource: resource.to_owned(),
        kind,
        invoke: op.invoke,
        complete: op.complete,
        outcome,
    }
}

fn ttl_and_wait(kind: &MultiOpKind) -> (u32, u32) {
    match kind {
        MultiOpKind::AcquireAll {
            ttl_seconds,
            wait_seconds,
            ..
        } => (*ttl_seconds, *wait_seconds),
        MultiOpKind::ReleaseAll { .. } => (0, 0),
    }
}
