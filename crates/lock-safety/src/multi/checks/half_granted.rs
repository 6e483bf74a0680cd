//! A set granted by halves: one of its locks proved not held by its owner at an instant when the
//! set had surely been granted and another of its locks was surely held.
//!
//! When was a granted set surely granted? Its answer's completion, at the latest; earlier, once
//! another client has seen one of its leases: a lease with the token and `acquired_at` of the
//! set's answer that no other acquire of the owner can have made is the set's grant, and since the
//! set was granted whole, every lock of it was then held. (Not `acquired_at` itself: the grant
//! becomes visible when its transaction commits, which a stalled commit delays well past the
//! instant it read.) From that instant each lock is surely held until the earlier of its
//! `expires_at` less the margin and the invoke of anything its owner did on that resource that may
//! have ended, shortened or restarted it (the set's own part excepted; a definite "held", 403, 404
//! or 409 changed nothing), or of a force-release that may have ended it. An answer invoked after that instant and completed while the lock and
//! another of the set's were still surely held must not prove the lock not held by the owner: a
//! status or listing without its lease, another writer granted, a 404, or "held" or 403 to the
//! owner.

use std::collections::HashMap;

use super::{Finding, Kind, REPORTED};
use crate::history::Micros;
use crate::multi::view::{OpRef, Step};
use crate::multi::{MultiHistory, MultiOp, MultiOpKind, MultiOutcome};
use crate::shared::Holder;

/// One lock of a granted set, with what its resource's history says of it.
struct Lock<'a> {
    holder: &'a Holder,
    steps: &'a [Step<'a>],
    /// Until when it is surely held (exclusive), and what cut it short.
    until: Micros,
    cut_by: Option<OpRef>,
}

/// How much the history let the check see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Sets of two locks or more answered granted (as asked).
    pub sets: usize,
    /// Of those, the sets another client saw granted before their answer came.
    pub seen_before_answer: usize,
    /// Answers that could prove a lock not held (reads, grants, refusals, 403s, 404s), made while
    /// that lock and another of its set were surely held.
    pub answers_judged: usize,
}

/// Every granted set checked; at most one finding each.
pub(super) fn half_granted(
    multi: &MultiHistory,
    steps: &HashMap<&str, Vec<Step<'_>>>,
    findings: &mut Vec<Finding>,
) -> Coverage {
    let mut coverage = Coverage::default();
    for set in &multi.ops {
        let finding = check_set(multi, steps, set, &mut coverage);
        if let (Some(finding), true) = (finding, findings.len() < REPORTED) {
            findings.push(finding);
        }
    }
    coverage
}

/// Whether `step` is the set's own part of its resource's history (same client, same invoke: a
/// client does one operation at a time).
fn own(set: &MultiOp, step: &Step<'_>) -> bool {
    step.client == set.client && step.invoke == set.invoke
}

fn check_set(
    multi: &MultiHistory,
    steps: &HashMap<&str, Vec<Step<'_>>>,
    set: &MultiOp,
    coverage: &mut Coverage,
) -> Option<Finding> {
    let (MultiOpKind::AcquireAll { owner, locks, .. }, MultiOutcome::Granted(holders)) =
        (&set.kind, &set.outcome)
    else {
        return None;
    };
    let margin = multi.margin_us;
    // The locks shown as asked (an answer showing others is the incomplete-grant check's).
    let locks: Vec<Lock<'_>> = locks
        .iter()
        .filter_map(|(resource, mode)| {
            let holder = holders.iter().find(|h| &h.resource == resource)?;
            (&holder.owner == owner && holder.mode == *mode).then_some(holder)
        })
        .map(|holder| {
            let steps = steps.get(holder.resource.as_str()).map_or(&[][..], |s| s);
            let mut lock = Lock {
                holder,
                steps,
                until: holder.expires_at - margin,
                cut_by: None,
            };
            for step in steps {
                if step.may_end(owner, holder.token)
                    && !own(set, step)
                    && step.latest_effect > set.invoke
                    && step.invoke < lock.until
                {
                    lock.until = step.invoke;
                    lock.cut_by = Some(step.op);
                }
            }
            lock
        })
        .collect();
    if locks.len() < 2 {
        return None;
    }
    // The earliest completion of an answer showing one of the set's own leases, or the set's.
    let (granted_by, pin) = locks
        .iter()
        .filter(|lock| made_only_by(set, lock, margin))
        .flat_map(|lock| {
            lock.steps
                .iter()
                .filter(|step| !own(set, step) && step.complete > set.invoke)
                .filter(|step| {
                    step.shown.iter().any(|s| {
                        s.owner == owner
                            && s.token == lock.holder.token
                            && s.acquired_at == lock.holder.acquired_at
                    })
                })
                .map(|step| (step.complete, Some((step.op, lock.holder))))
        })
        .chain(std::iter::once((set.complete, None)))
        .min_by_key(|(at, _)| *at)?;
    coverage.sets += 1;
    coverage.seen_before_answer += usize::from(pin.is_some());
    for (j, lock) in locks.iter().enumerate() {
        let (token, mode) = (lock.holder.token, lock.holder.mode);
        for step in lock.steps {
            if own(set, step) || step.invoke <= granted_by || step.complete >= lock.until {
                continue;
            }
            let Some(proof) = &step.proof else { continue };
            let Some(other) = locks
                .iter()
                .enumerate()
                .find(|(i, o)| *i != j && step.complete < o.until)
                .map(|(_, o)| o)
            else {
                continue;
            };
            coverage.answers_judged += 1;
            if !proof.ends(owner, token, mode) {
                continue;
            }
            let since = match pin {
                Some((op, h)) => format!(
                    "{op} completed at {:.3}s showing {} token {} as the set granted it",
                    multi.at(granted_by),
                    h.resource,
                    h.token
                ),
                None => format!("its answer completed at {:.3}s", multi.at(granted_by)),
            };
            let held = |l: &Lock<'_>| {
                format!(
                    "{} token {} surely held until {}",
                    l.holder.resource,
                    l.holder.token,
                    l.cut_by
                        .map_or_else(|| "its expiry".to_owned(), |op| op.to_string())
                )
            };
            return Some(Finding {
                kind: Kind::HalfGranted,
                set: set.id,
                message: format!(
                    "multi op #{} granted {owner} its locks together, surely by the time {since}; {}, yet {} (invoked at {:.3}s, completed at {:.3}s) proved {} token {} not held by {owner} ({})",
                    set.id,
                    held(other),
                    step.op,
                    multi.at(step.invoke),
                    multi.at(step.complete),
                    lock.holder.resource,
                    token,
                    held(lock)
                ),
                ops: pin.map(|(op, _)| op).into_iter().chain([step.op]).collect(),
            });
        }
    }
    None
}

/// Whether no acquire of the owner but the set's own part (one answered granted or left unknown,
/// whose time, widened by the margin, covers the lease's `acquired_at`) can have made the lease
/// the set's answer shows for `lock`: then a lease with its token and `acquired_at` is the set's.
fn made_only_by(set: &MultiOp, lock: &Lock<'_>, margin: Micros) -> bool {
    let at = lock.holder.acquired_at;
    !lock.steps.iter().any(|step| {
        step.owner == Some(lock.holder.owner.as_str())
            && step.may_grant
            && !own(set, step)
            && step.invoke - margin <= at
            && at <= step.latest_effect + margin
    })
}
