//! What the runner prints and writes: the summaries of the histories, the histories themselves
//! and the faults, for people and for `--check`.

use std::collections::BTreeMap;
use std::path::Path;

use lock_safety::permits::{self, PermitHistory, PermitOutcome};
use lock_safety::recorded_history::{self, RecordedHistory};
use lock_safety::{
    multi, shared, History, Mode, MultiHistory, MultiOpKind, MultiOutcome, OpKind, Outcome,
    SharedHistory, SharedOutcome,
};

use crate::faults::{self, Fault};

/// A run's histories: the locks' (resources only ever locked exclusively), the semaphores', the
/// resources locked in both modes, the multi-lock operations whole, and lockd's own history of
/// the locks and elections (none when it was not read).
pub(crate) struct Histories {
    pub(crate) locks: History,
    pub(crate) permits: PermitHistory,
    pub(crate) shared: SharedHistory,
    pub(crate) multi: MultiHistory,
    pub(crate) records: Option<RecordedHistory>,
}

/// Reads a recorded `history.jsonl`, and the `permits.jsonl`, `shared.jsonl`, `multi.jsonl` and
/// `records.jsonl` beside it (empty histories, and no records, when they are missing: runs from
/// before they were recorded).
///
/// # Errors
/// The file that could not be read, and why.
pub(crate) fn read_histories(path: &Path) -> Result<Histories, String> {
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    let locks = lock_safety::history::json::read(&read(path)?)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let beside = |name: &str| Some(path.with_file_name(name)).filter(|p| p.exists());
    let permits = match beside("permits.jsonl") {
        Some(p) => permits::json::read(&read(&p)?).map_err(|e| format!("{}: {e}", p.display()))?,
        None => PermitHistory::new(locks.start, locks.seed),
    };
    let shared = match beside("shared.jsonl") {
        Some(p) => shared::json::read(&read(&p)?).map_err(|e| format!("{}: {e}", p.display()))?,
        None => SharedHistory::new(locks.start, locks.seed),
    };
    let multi = match beside("multi.jsonl") {
        Some(p) => multi::json::read(&read(&p)?).map_err(|e| format!("{}: {e}", p.display()))?,
        None => MultiHistory::new(locks.start, locks.seed),
    };
    let records = match beside("records.jsonl") {
        Some(p) => Some(
            recorded_history::json::read(&read(&p)?)
                .map_err(|e| format!("{}: {e}", p.display()))?,
        ),
        None => None,
    };
    Ok(Histories {
        locks,
        permits,
        shared,
        multi,
        records,
    })
}

pub(crate) fn print_summary(history: &History, events: &[faults::Event]) {
    let mut counts: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for op in &history.ops {
        let kind = match &op.kind {
            OpKind::Acquire {
                wait_seconds: 0, ..
            } => "acquire",
            OpKind::Acquire { .. } => "acquire (waiting)",
            OpKind::Release { .. } => "release",
            OpKind::Renew { .. } => "renew",
            OpKind::Status => "status",
            OpKind::List => "list",
            OpKind::ForceRelease { .. } => "force-release",
            OpKind::OpenSession { .. } => "open session",
            OpKind::KeepAlive { .. } => "keepalive",
            OpKind::EndSession { .. } => "close session",
        };
        let slot = match &op.outcome {
            Outcome::Unknown { .. } => 2,
            Outcome::Failed { .. } => 1,
            _ => 0,
        };
        counts.entry(kind).or_default()[slot] += 1;
    }
    println!("{} operations:", history.ops.len());
    println!(
        "  {:<18} {:>8} {:>8} {:>8}",
        "kind", "answered", "failed", "unknown"
    );
    for (kind, [ok, fail, info]) in &counts {
        println!("  {kind:<18} {ok:>8} {fail:>8} {info:>8}");
    }
    let granted = history
        .ops
        .iter()
        .filter(|op| matches!(op.outcome, Outcome::Granted(_)))
        .count();
    println!(
        "  ({granted} grants acknowledged; 'failed' = a definite 4xx or a refused connection)"
    );
    let mut by_fault: BTreeMap<Fault, usize> = BTreeMap::new();
    for event in events {
        *by_fault.entry(event.fault).or_default() += 1;
    }
    println!("{} faults injected:", events.len());
    for (fault, n) in by_fault {
        println!("  {n:>4} x {}", fault.name());
    }
}

/// Writes the histories, one operation a line (lockd's records one a line, oldest first per
/// resource), and the faults, for reading after the run.
pub(crate) fn write_history(histories: &Histories, events: &[faults::Event], out: &Path) {
    let (history, permit_history) = (&histories.locks, &histories.permits);
    let text: String = history
        .ops
        .iter()
        .map(|op| history.describe(op) + "\n")
        .collect();
    let _ = std::fs::write(out.join("history.txt"), text);
    let _ = std::fs::write(
        out.join("history.jsonl"),
        lock_safety::history::json::write(history),
    );
    let _ = std::fs::write(out.join("faults.txt"), fault_lines(history, events));
    let text: String = permit_history
        .ops
        .iter()
        .map(|op| permit_history.describe(op) + "\n")
        .collect();
    let _ = std::fs::write(out.join("permits.txt"), text);
    let _ = std::fs::write(
        out.join("permits.jsonl"),
        permits::json::write(permit_history),
    );
    let shared_history = &histories.shared;
    let text: String = shared_history
        .ops
        .iter()
        .map(|op| shared_history.describe(op) + "\n")
        .collect();
    let _ = std::fs::write(out.join("shared.txt"), text);
    let _ = std::fs::write(
        out.join("shared.jsonl"),
        shared::json::write(shared_history),
    );
    let multi_history = &histories.multi;
    let text: String = multi_history
        .ops
        .iter()
        .map(|op| multi_history.describe(op) + "\n")
        .collect();
    let _ = std::fs::write(out.join("multi.txt"), text);
    let _ = std::fs::write(out.join("multi.jsonl"), multi::json::write(multi_history));
    if let Some(recorded) = &histories.records {
        let mut text = String::new();
        for (resource, name) in &recorded.names {
            let mut records: Vec<_> = name.records.iter().collect();
            records.sort_by_key(|r| r.id);
            for record in records {
                text.push_str(&format!(
                    "{resource} {}\n",
                    recorded_history::describe(record, history.start)
                ));
            }
        }
        let _ = std::fs::write(out.join("records.txt"), text);
        let _ = std::fs::write(
            out.join("records.jsonl"),
            recorded_history::json::write(recorded),
        );
    }
}

/// One line: the multi-lock operations by kind and outcome (sets granted by size).
pub(crate) fn print_multi_summary(history: &MultiHistory) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for op in &history.ops {
        let outcome = match (&op.kind, &op.outcome) {
            (_, MultiOutcome::Granted(locks)) => format!("sets of {} granted", locks.len()),
            (_, MultiOutcome::Unavailable(_)) => "sets not granted".to_owned(),
            (_, MultiOutcome::Results(_)) => "releases answered".to_owned(),
            (MultiOpKind::AcquireAll { .. }, MultiOutcome::Failed { .. }) => {
                "sets failed".to_owned()
            }
            (MultiOpKind::ReleaseAll { .. }, MultiOutcome::Failed { .. }) => {
                "releases failed".to_owned()
            }
            (MultiOpKind::AcquireAll { .. }, MultiOutcome::Unknown { .. }) => {
                "sets unknown".to_owned()
            }
            (MultiOpKind::ReleaseAll { .. }, MultiOutcome::Unknown { .. }) => {
                "releases unknown".to_owned()
            }
        };
        *counts.entry(outcome).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    if counts.is_empty() {
        println!("0 multi-lock operations");
    } else {
        println!(
            "{} multi-lock operations: {}",
            history.ops.len(),
            counts.join(", ")
        );
    }
}

/// One line: the semaphore operations by outcome.
pub(crate) fn print_permit_summary(history: &PermitHistory) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for op in &history.ops {
        let outcome = match &op.outcome {
            PermitOutcome::Granted(_) => "granted",
            PermitOutcome::Unavailable => "unavailable",
            PermitOutcome::Conflict { .. } => "conflict",
            PermitOutcome::Released => "released",
            PermitOutcome::Renewed(_) => "renewed",
            PermitOutcome::Seen(_) => "status",
            PermitOutcome::NotFound => "not found",
            PermitOutcome::Failed { .. } => "failed",
            PermitOutcome::Unknown { .. } => "unknown",
        };
        *counts.entry(outcome).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "{} semaphore operations: {}",
        history.ops.len(),
        counts.join(", ")
    );
}

/// One line: the operations on the resources locked in both modes, by outcome (grants by mode).
pub(crate) fn print_shared_summary(history: &SharedHistory) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for op in &history.ops {
        let outcome = match &op.outcome {
            SharedOutcome::Granted(h) if h.mode == Mode::Shared => "granted shared",
            SharedOutcome::Granted(_) => "granted exclusive",
            SharedOutcome::Held => "not granted",
            SharedOutcome::ModeMismatch => "mode mismatch",
            SharedOutcome::Released => "released",
            SharedOutcome::Renewed(_) => "renewed",
            SharedOutcome::Seen(_) => "status",
            SharedOutcome::Forbidden => "forbidden",
            SharedOutcome::NotFound => "not found",
            SharedOutcome::Failed { .. } => "failed",
            SharedOutcome::Unknown { .. } => "unknown",
        };
        *counts.entry(outcome).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "{} operations on resources locked in both modes: {}",
        history.ops.len(),
        counts.join(", ")
    );
}

pub(crate) fn fault_lines(history: &History, events: &[faults::Event]) -> String {
    let at = |t: i64| (t - history.start) as f64 / 1e6;
    events
        .iter()
        .map(|e| {
            format!(
                "[{:.3}s .. {:.3}s] {}: {}\n",
                at(e.from),
                at(e.to),
                e.fault.name(),
                e.detail
            )
        })
        .collect()
}
