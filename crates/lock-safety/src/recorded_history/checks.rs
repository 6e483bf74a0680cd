//! Checks of lockd's durable history of each lock (and election) of a run, against the life of a
//! lease and against the lock history the clients recorded. The records are the server's word
//! for every change: one lease at a time, tokens that grow, every acknowledged change present,
//! every record explained by a request.
//!
//! Unknown outcomes keep each rule sound: a record is required only for an answer the client got
//! (a change answered is committed, and its record with it), and a record no answered request
//! explains is held against the server only when no request of its owner left unknown could
//! have made it (each request makes at most one change to a name). Expiries are recorded late (at
//! the next write of the name, or at a sweep), so the last lease of a run may have no end record.

mod acknowledged;
mod explained;
mod lifecycle;

#[cfg(test)]
mod tests;

use super::{Record, RecordedHistory};
use crate::history::{History, Lease, Micros, Op, OpKind, Outcome};

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The pages were not newest first, or repeated a record.
    OutOfOrder,
    /// A record of another name or kind, a reader's record on a lock only ever held exclusively,
    /// a reason where none goes or none where one must.
    Foreign,
    /// A granted record's token is not larger than an earlier granted record's.
    TokenOrder,
    /// A lease granted while the one before had no end record.
    Overlap,
    /// A record of a lease that was not the live one in the recorded history.
    NotLive,
    /// An expiry recorded at an instant an answer showed the lease still live.
    EarlyExpiry,
    /// A change a client saw answered that has no record.
    Unrecorded,
    /// A force-release whose records do not match its answer, or a record of one nobody sent.
    ForceMismatch,
    /// A record that no request explains.
    Unexplained,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::OutOfOrder => "the recorded history was not read newest first, once each",
            Kind::Foreign => "a record that does not belong to this lock's history",
            Kind::TokenOrder => "fencing tokens of granted records did not increase",
            Kind::Overlap => "two leases overlap in the recorded history",
            Kind::NotLive => "a record of a lease that was not live in the recorded history",
            Kind::EarlyExpiry => "an expiry was recorded before the lease's end",
            Kind::Unrecorded => "an acknowledged change has no record",
            Kind::ForceMismatch => "a force-release's records do not match its answer",
            Kind::Unexplained => "a record that no request explains",
        }
    }
}

/// One finding: its kind, the resource, a sentence, the operations and the records that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub resource: String,
    pub message: String,
    pub ops: Vec<usize>,
    pub records: Vec<i64>,
}

/// At most this many findings of one kind on one resource are reported: one is enough to fail, a
/// few show whether it is a pattern.
const REPORTED: usize = 5;

/// One resource: its records, and what the clients did and saw there.
struct Subject<'a> {
    resource: &'a str,
    /// What its records should say they are: `lock` or `election`.
    kind: &'a str,
    /// As lockd answered them, newest first.
    answered: &'a [Record],
    /// Oldest first, each once.
    records: Vec<&'a Record>,
    /// Its operations (listings apart), and every session's close, in history order.
    ops: Vec<&'a Op>,
    /// Every lease a definite answer showed live on it (grants, renewals, statuses, listings).
    shown: Vec<(&'a Op, &'a Lease)>,
    margin: Micros,
    /// The instant the run started (times are printed relative to it).
    start: Micros,
}

impl<'a> Subject<'a> {
    fn new(history: &'a History, resource: &'a str, kind: &'a str, answered: &'a [Record]) -> Self {
        let mut records: Vec<&Record> = answered.iter().collect();
        records.sort_by_key(|r| r.id);
        records.dedup_by_key(|r| r.id);
        let ops = history
            .ops
            .iter()
            // A session's close releases its hold here too, with no operation on the name.
            .filter(|op| {
                (op.resource == resource && op.kind != OpKind::List)
                    || matches!(op.kind, OpKind::EndSession { .. })
            })
            .collect();
        let shown = history
            .ops
            .iter()
            .filter_map(|op| match &op.outcome {
                Outcome::Granted(l) | Outcome::Renewed(l) | Outcome::Seen(Some(l))
                    if op.resource == resource =>
                {
                    Some((op, l))
                }
                Outcome::Listed(ls) => ls.iter().find(|l| l.resource == resource).map(|l| (op, l)),
                _ => None,
            })
            .collect();
        Self {
            resource,
            kind,
            answered,
            records,
            ops,
            shown,
            margin: history.margin_us,
            start: history.start,
        }
    }
}

/// The findings of one resource, at most [`REPORTED`] of a kind.
struct Found<'a> {
    resource: &'a str,
    findings: Vec<Finding>,
}

impl Found<'_> {
    fn report(&mut self, kind: Kind, message: String, ops: Vec<usize>, records: Vec<i64>) {
        if self.findings.iter().filter(|f| f.kind == kind).count() < REPORTED {
            self.findings.push(Finding {
                kind,
                resource: self.resource.to_owned(),
                message,
                ops,
                records,
            });
        }
    }
}

/// Runs every check on every resource of `history` whose records were read.
pub fn check(history: &History, recorded: &RecordedHistory) -> Vec<Finding> {
    let mut findings = Vec::new();
    for resource in &history.resources {
        let Some(name) = recorded.names.get(resource) else {
            continue;
        };
        let subject = Subject::new(history, resource, &name.kind, &name.records);
        let mut found = Found {
            resource,
            findings: Vec::new(),
        };
        lifecycle::page_order(&subject, &mut found);
        lifecycle::foreign_records(&subject, &mut found);
        lifecycle::lease_lives(&subject, &mut found);
        lifecycle::early_expiries(&subject, &mut found);
        acknowledged::grants_shown(&subject, &mut found);
        acknowledged::values_shown(&subject, &mut found);
        acknowledged::releases(&subject, &mut found);
        acknowledged::force_releases(&subject, &mut found);
        explained::grants(&subject, &mut found);
        explained::by_count(&subject, &mut found);
        findings.extend(found.findings);
    }
    findings
}

/// The owner of an operation that names one.
fn op_owner(op: &Op) -> Option<&str> {
    match &op.kind {
        OpKind::Acquire { owner, .. }
        | OpKind::Release { owner }
        | OpKind::Renew { owner, .. }
        | OpKind::OpenSession { owner, .. }
        | OpKind::KeepAlive { owner, .. }
        | OpKind::EndSession { owner } => Some(owner),
        OpKind::Status | OpKind::List | OpKind::ForceRelease { .. } => None,
    }
}

/// A few ids for a message, with how many more there are.
fn some_ids<T: std::fmt::Display>(ids: &[T]) -> String {
    let shown: Vec<String> = ids.iter().take(5).map(|id| format!("#{id}")).collect();
    match ids.len() {
        0..=5 => shown.join(", "),
        n => format!("{} and {} more", shown.join(", "), n - 5),
    }
}
