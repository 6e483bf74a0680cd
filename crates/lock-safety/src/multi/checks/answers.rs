//! A granted set's answer: every lock asked, in request order, for the set's owner, in the mode
//! asked, each with its own fencing token. An answer that lists fewer locks (or others) says the
//! set was granted while some of its locks were not.

use super::{Finding, Kind, REPORTED};
use crate::multi::{MultiHistory, MultiOp, MultiOpKind, MultiOutcome};

/// Every set answered granted whose answer is not the whole set as asked.
pub(super) fn incomplete_grants(multi: &MultiHistory, findings: &mut Vec<Finding>) {
    let mut reported = 0;
    for op in &multi.ops {
        let Some(why) = what_is_missing(op) else {
            continue;
        };
        if reported < REPORTED {
            findings.push(Finding {
                kind: Kind::IncompleteGrant,
                set: op.id,
                message: format!("multi op #{} was answered granted, but {why}", op.id),
                ops: Vec::new(),
            });
            reported += 1;
        }
    }
}

/// What is wrong with a granted answer, if anything.
fn what_is_missing(op: &MultiOp) -> Option<String> {
    let (MultiOpKind::AcquireAll { owner, locks, .. }, MultiOutcome::Granted(holders)) =
        (&op.kind, &op.outcome)
    else {
        return None;
    };
    for (i, (resource, mode)) in locks.iter().enumerate() {
        let Some(h) = holders.get(i) else {
            let missing: Vec<&str> = locks[i..].iter().map(|(r, _)| r.as_str()).collect();
            return Some(format!(
                "its answer lists {} locks of the {} asked: {} missing",
                holders.len(),
                locks.len(),
                missing.join(", ")
            ));
        };
        if &h.resource != resource {
            return Some(format!(
                "its answer's lock {} is {} where {resource} was asked (request order)",
                i + 1,
                h.resource
            ));
        }
        if &h.owner != owner || h.mode != *mode {
            return Some(format!(
                "its answer shows {resource} granted to {} {} where {owner} asked it {}",
                h.owner,
                h.mode.as_str(),
                mode.as_str()
            ));
        }
    }
    if holders.len() > locks.len() {
        return Some(format!(
            "its answer lists {} locks for the {} asked",
            holders.len(),
            locks.len()
        ));
    }
    let twice = holders
        .iter()
        .enumerate()
        .find(|(i, a)| holders[i + 1..].iter().any(|b| a.token == b.token));
    twice.map(|(_, h)| {
        format!(
            "two of its locks show one token, {}, yet each lock has its own",
            h.token
        )
    })
}
