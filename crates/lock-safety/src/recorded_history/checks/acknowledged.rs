//! What the clients saw answered, in the records: a change that was answered is committed, and
//! its record with it. Every lease an answer showed live was granted (a `granted` record of its
//! owner and token); each value of its `acquired_at` an answer showed was set by a grant or
//! re-grant, each value of its `expires_at` by one of those or a renewal (a session's hold's by a
//! keepalive of the session too, which records nothing of the hold), each with its record
//! (a change that changes nothing, a re-grant in the same millisecond say, writes none, so values
//! are counted, not answers); every release answered 204 has its `released` record; and a
//! force-release's records are those its answer listed, with its reason (none for a 404).

use std::collections::{BTreeMap, BTreeSet};

use super::{some_ids, Found, Kind, Subject};
use crate::history::{is_session_owner, Micros, OpKind, Outcome};
use crate::recorded_history::{Event, Record};

/// The records of `owner`'s lease `token` with one of `events`.
fn records_of<'a>(
    subject: &Subject<'a>,
    owner: &str,
    token: i64,
    events: &[Event],
) -> Vec<&'a Record> {
    subject
        .records
        .iter()
        .copied()
        .filter(|r| r.owner == owner && r.token == token && events.contains(&r.event))
        .collect()
}

/// Every lease an answer showed live has its `granted` record.
pub(super) fn grants_shown(subject: &Subject<'_>, found: &mut Found<'_>) {
    let mut reported = BTreeSet::new();
    for (op, lease) in &subject.shown {
        let key = (lease.owner.as_str(), lease.token);
        if reported.contains(&key)
            || !records_of(subject, key.0, key.1, &[Event::Granted]).is_empty()
        {
            continue;
        }
        reported.insert(key);
        found.report(
            Kind::Unrecorded,
            format!(
                "op #{} showed {} holding token {}, but the history has no granted record of that lease",
                op.id, lease.owner, lease.token
            ),
            vec![op.id],
            Vec::new(),
        );
    }
}

/// Each distinct `acquired_at` and `expires_at` shown for a lease was written by a change that
/// has its record.
pub(super) fn values_shown(subject: &Subject<'_>, found: &mut Found<'_>) {
    // Per lease: each value shown, with the first answer that showed it.
    type Values = BTreeMap<Micros, usize>;
    let mut by_lease: BTreeMap<(&str, i64), (Values, Values)> = BTreeMap::new();
    for (op, lease) in &subject.shown {
        let (acquired, expires) = by_lease
            .entry((lease.owner.as_str(), lease.token))
            .or_default();
        acquired.entry(lease.acquired_at).or_insert(op.id);
        expires.entry(lease.expires_at).or_insert(op.id);
    }
    for ((owner, token), (acquired, expires)) in by_lease {
        let grants = records_of(subject, owner, token, &[Event::Granted, Event::Regranted]);
        let changes = records_of(
            subject,
            owner,
            token,
            &[Event::Granted, Event::Regranted, Event::Renewed],
        );
        // A lease with no granted record at all is reported by `grants_shown`.
        if grants.iter().all(|r| r.event != Event::Granted) {
            continue;
        }
        for (values, records, what, made_by) in [
            (&acquired, &grants, "acquired_at", "granted or re-granted"),
            (
                &expires,
                &changes,
                "expires_at",
                "granted, re-granted or renewed",
            ),
        ] {
            // A session's keepalive moves every hold's `expires_at` with one write of the
            // session, and no record of any hold.
            if what == "expires_at" && is_session_owner(owner) {
                continue;
            }
            if values.len() > records.len() {
                let ops: Vec<usize> = values.values().copied().collect();
                found.report(
                    Kind::Unrecorded,
                    format!(
                        "answers showed {owner}'s lease token {token} with {} different {what} values (first shown by ops {}), but the history has only {} {made_by} records of it",
                        values.len(),
                        some_ids(&ops),
                        records.len()
                    ),
                    ops,
                    records.iter().map(|r| r.id).collect(),
                );
            }
        }
    }
}

/// Every release answered 204 has its `released` record (counted per owner: the answer names no
/// token).
pub(super) fn releases(subject: &Subject<'_>, found: &mut Found<'_>) {
    let mut answered: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for op in &subject.ops {
        if let (OpKind::Release { owner }, Outcome::Released) = (&op.kind, &op.outcome) {
            answered.entry(owner).or_default().push(op.id);
        }
    }
    for (owner, ops) in answered {
        let records: Vec<i64> = subject
            .records
            .iter()
            .filter(|r| r.owner == owner && r.event == Event::Released)
            .map(|r| r.id)
            .collect();
        if ops.len() > records.len() {
            found.report(
                Kind::Unrecorded,
                format!(
                    "{} releases by {owner} were answered 204 (ops {}), but the history has only {} released records of {owner}",
                    ops.len(),
                    some_ids(&ops),
                    records.len()
                ),
                ops,
                records,
            );
        }
    }
}

/// A force-release's records (those with its reason, unique in the run) are exactly the leases
/// its 200 listed, none for a 404 or a refusal; an unanswered one may have made some or none. A
/// record with a reason no force-release of this lock sent is nobody's.
pub(super) fn force_releases(subject: &Subject<'_>, found: &mut Found<'_>) {
    let mut sent = BTreeSet::new();
    for op in &subject.ops {
        let OpKind::ForceRelease { reason } = &op.kind else {
            continue;
        };
        sent.insert(reason.as_str());
        let records: Vec<&Record> = subject
            .records
            .iter()
            .copied()
            .filter(|r| r.reason.as_deref() == Some(reason.as_str()))
            .collect();
        let recorded: BTreeSet<(&str, i64)> = records
            .iter()
            .map(|r| (r.owner.as_str(), r.token))
            .collect();
        let answer = match &op.outcome {
            Outcome::Unknown { .. } => continue,
            Outcome::ForceReleased(ended) => {
                let listed: BTreeSet<(&str, i64)> =
                    ended.iter().map(|e| (e.owner.as_str(), e.token)).collect();
                if listed == recorded && records.len() == listed.len() {
                    continue;
                }
                format!("was answered 200 ending {}", leases(&listed))
            }
            _ if records.is_empty() => continue,
            Outcome::NotFound => "was answered 404 (nothing held)".to_owned(),
            _ => "was refused (no effect)".to_owned(),
        };
        found.report(
            Kind::ForceMismatch,
            format!(
                "op #{} (reason {reason:?}) {answer}, but the records with that reason end {}",
                op.id,
                if records.is_empty() {
                    "nothing".to_owned()
                } else {
                    records
                        .iter()
                        .map(|r| format!("{} token {} (record {})", r.owner, r.token, r.id))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            vec![op.id],
            records.iter().map(|r| r.id).collect(),
        );
    }
    for r in &subject.records {
        if let Some(reason) = r.reason.as_deref().filter(|reason| !sent.contains(reason)) {
            found.report(
                Kind::ForceMismatch,
                format!(
                    "record {} force-released {} token {} with the reason {reason:?}, which no force-release of this lock sent",
                    r.id, r.owner, r.token
                ),
                Vec::new(),
                vec![r.id],
            );
        }
    }
}

fn leases(set: &BTreeSet<(&str, i64)>) -> String {
    if set.is_empty() {
        return "nothing".to_owned();
    }
    set.iter()
        .map(|(owner, token)| format!("{owner} token {token}"))
        .collect::<Vec<_>>()
        .join(", ")
}
