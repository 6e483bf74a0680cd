//! Every record is explained by a request of its owner on this lock: each request makes at most
//! one change to one name, so the records of an owner that its answered requests do not account
//! for can be no more than its requests left unknown (which may have made one each, or none).
//! A `granted` or `re-granted` record is accounted for by an acquire answered granted with its
//! token; a `released` one by a release answered 204 (of a session's hold: also by a close of the
//! session answered 204); a `renewed` one by a renewal answered, or by
//! an acquire (a re-grant in the same millisecond moves only the end); an `undone` one only by an
//! acquire left unknown (lockd undoes only grants nobody heard of). Expiries are nobody's request,
//! and force-releases are matched by their reasons (`acknowledged.rs`).

use std::collections::BTreeMap;

use super::{op_owner, some_ids, Found, Kind, Subject};
use crate::history::{Op, OpKind, Outcome};
use crate::recorded_history::{Event, Record};

/// Grants and re-grants, per owner: those beyond what its granted answers account for, token by
/// token, are at most its acquires left unknown.
pub(super) fn grants(subject: &Subject<'_>, found: &mut Found<'_>) {
    let mut by_owner: BTreeMap<&str, BTreeMap<i64, Vec<&Record>>> = BTreeMap::new();
    for r in &subject.records {
        if matches!(r.event, Event::Granted | Event::Regranted) {
            by_owner
                .entry(&r.owner)
                .or_default()
                .entry(r.token)
                .or_default()
                .push(r);
        }
    }
    for (owner, tokens) in by_owner {
        let acquires = |pick: &dyn Fn(&Op) -> bool| -> Vec<usize> {
            subject
                .ops
                .iter()
                .filter(|op| {
                    matches!(op.kind, OpKind::Acquire { .. })
                        && op_owner(op) == Some(owner)
                        && pick(op)
                })
                .map(|op| op.id)
                .collect()
        };
        let unknown = acquires(&|op| op.outcome.is_unknown());
        let mut beyond: Vec<&Record> = Vec::new();
        for (token, records) in tokens {
            let answered =
                acquires(&|op| matches!(&op.outcome, Outcome::Granted(l) if l.token == token));
            beyond.extend(records.iter().skip(answered.len()));
        }
        if beyond.len() <= unknown.len() {
            continue;
        }
        let ids: Vec<i64> = beyond.iter().map(|r| r.id).collect();
        let message = match (beyond.as_slice(), unknown.len()) {
            ([r], 0) => format!(
                "record {} says {owner} was {} token {}, but no acquire of {owner} was answered granted with that token or left unknown",
                r.id,
                r.event.as_str(),
                r.token
            ),
            _ => format!(
                "{} granted or re-granted records of {owner} (records {}) are more than its acquires answered granted with their tokens account for, and only {} acquires of {owner} were left unknown{}",
                beyond.len(),
                some_ids(&ids),
                unknown.len(),
                if unknown.is_empty() {
                    String::new()
                } else {
                    format!(" (ops {})", some_ids(&unknown))
                }
            ),
        };
        found.report(Kind::Unexplained, message, unknown, ids);
    }
}

/// Whether `op` may have made a record of `event` of its owner.
fn may_make(event: Event, op: &Op) -> bool {
    let unknown = op.outcome.is_unknown();
    match (event, &op.kind) {
        (Event::Released, OpKind::Release { .. } | OpKind::EndSession { .. }) => {
            unknown || op.outcome == Outcome::Released
        }
        (Event::Renewed, OpKind::Renew { .. }) => {
            unknown || matches!(op.outcome, Outcome::Renewed(_))
        }
        (Event::Renewed, OpKind::Acquire { .. }) => {
            unknown || matches!(op.outcome, Outcome::Granted(_))
        }
        (Event::Undone, OpKind::Acquire { .. }) => unknown,
        _ => false,
    }
}

/// Releases, renewals and undos, per owner: at most the requests of the owner that may have made
/// them.
pub(super) fn by_count(subject: &Subject<'_>, found: &mut Found<'_>) {
    for (event, what) in [
        (Event::Released, "releases answered 204 or left unknown"),
        (
            Event::Renewed,
            "renewals or acquires answered or left unknown",
        ),
        (Event::Undone, "acquires left unknown"),
    ] {
        let mut by_owner: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
        for r in subject.records.iter().filter(|r| r.event == event) {
            by_owner.entry(&r.owner).or_default().push(r.id);
        }
        for (owner, records) in by_owner {
            let ops: Vec<usize> = subject
                .ops
                .iter()
                .filter(|op| op_owner(op) == Some(owner) && may_make(event, op))
                .map(|op| op.id)
                .collect();
            if records.len() > ops.len() {
                found.report(
                    Kind::Unexplained,
                    format!(
                        "the history has {} {} records of {owner} (records {}), but {owner} had only {} {what}{}",
                        records.len(),
                        event.as_str(),
                        some_ids(&records),
                        ops.len(),
                        if ops.is_empty() {
                            String::new()
                        } else {
                            format!(" (ops {})", some_ids(&ops))
                        }
                    ),
                    ops,
                    records,
                );
            }
        }
    }
}
