//! The verdict of a run (or of a recorded one): every check on every history, the summary, each
//! violation with its slice of history, and the exit code.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use lock_safety::permits;
use lock_safety::recorded_history::{self, RecordedHistory};
use lock_safety::{check, multi, shared};

use crate::faults;
use crate::output::{
    fault_lines, print_multi_summary, print_permit_summary, print_shared_summary, print_summary,
    Histories,
};
use crate::{semaphores, Args};

/// Checks the histories, prints the summary and the verdict, and says how the process exits.
pub(crate) fn verdict(
    histories: &Histories,
    budget: u64,
    events: &[faults::Event],
    fault_errors: &[String],
    backend: &str,
    args: &Args,
) -> ExitCode {
    let (history, permit_history, shared_history) =
        (&histories.locks, &histories.permits, &histories.shared);
    let seed = history.seed;
    print_summary(history, events);
    print_permit_summary(permit_history);
    print_shared_summary(shared_history);
    print_multi_summary(&histories.multi);
    for error in fault_errors {
        println!("!!! fault injection stopped early: {error}");
    }
    let checked = Instant::now();
    let report = check(history, budget);
    let permit_report = permits::checks::check(permit_history);
    let permit_findings = permit_report.findings;
    let shared_report = shared::checks::check(shared_history);
    let multi_report = multi::checks::check(&histories.multi, history, shared_history);
    let multi_findings = multi_report.findings;
    let record_findings = histories
        .records
        .as_ref()
        .map_or_else(Vec::new, |recorded| {
            recorded_history::checks::check(history, recorded)
        });
    let violations = report.violations()
        + permit_findings.len()
        + shared_report.findings.len()
        + multi_findings.len()
        + record_findings.len();
    println!(
        "checked in {:.1} s: {} resources, {} locked in both modes, {} multi-lock operations, {} semaphores, {} violations, {} unknown, at most {} states searched per resource",
        checked.elapsed().as_secs_f64(),
        report.partitions.len(),
        shared_report.readers.len(),
        histories.multi.ops.len(),
        permit_history.names.len(),
        violations,
        report.unknown(),
        report.max_states()
    );
    print!("{}", report.render(history));
    for (name, peak) in &permit_report.peaks {
        println!(
            "semaphore {name:<23} at most {peak} permits surely held at once (limit {})",
            semaphores::LIMIT
        );
    }
    print!(
        "{}",
        permits::report::render(permit_history, &permit_findings)
    );
    for (resource, readers) in &shared_report.readers {
        println!("resource {resource:<24} at most {readers} readers surely held it at once");
    }
    print!(
        "{}",
        shared::report::render(shared_history, &shared_report.findings)
    );
    let seen = multi_report.coverage;
    println!(
        "multi-locks: {} sets granted, {} seen granted by another client before their answer, {} answers judged while two locks of a set were surely held",
        seen.sets, seen.seen_before_answer, seen.answers_judged
    );
    print!(
        "{}",
        multi::report::render(&histories.multi, history, shared_history, &multi_findings)
    );
    let unread = histories.records.as_ref().map_or(0, |r| r.unread.len());
    if let Some(recorded) = &histories.records {
        print_records(recorded);
        print!(
            "{}",
            recorded_history::report::render(history, recorded, &record_findings)
        );
    }
    if violations > 0 {
        print!("faults injected:\n{}", fault_lines(history, events));
        if backend == "recorded" {
            println!("FAILED: {violations} violations (seed {seed})");
            return ExitCode::from(1);
        }
        println!(
            "FAILED: {violations} violations (backend {backend}, seed {}); rerun: lock-safety --backend {backend} --seed {} --seconds {} --instances {} --clients {} --resources {}{}{}{}{}{}",
            seed,
            seed,
            args.seconds,
            args.instances,
            args.clients,
            args.resources,
            if args.no_shared { " --no-shared" } else { "" },
            if args.no_multi { " --no-multi" } else { "" },
            if args.no_elections { " --no-elections" } else { "" },
            if args.no_lock_delay { " --no-lock-delay" } else { "" },
            if args.no_force_release {
                " --no-force-release"
            } else {
                ""
            }
        );
        return ExitCode::from(1);
    }
    if report.unknown() > 0 || !fault_errors.is_empty() || unread > 0 {
        println!(
            "!!! NOT PASSED: {} resources could not be decided within the budget{}{} (seed {seed})",
            report.unknown(),
            if fault_errors.is_empty() {
                ""
            } else {
                ", and fault injection failed"
            },
            if unread == 0 {
                String::new()
            } else {
                format!(", and lockd's history of {unread} resources could not be read")
            }
        );
        return ExitCode::from(3);
    }
    println!("passed: 0 violations (backend {backend}, seed {seed})");
    ExitCode::SUCCESS
}

/// One line: the records of lockd's history by event; then each name that could not be read.
fn print_records(recorded: &RecordedHistory) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in recorded.names.values() {
        for record in &name.records {
            *counts.entry(record.event.as_str()).or_default() += 1;
        }
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "lockd's history: {} records of {} locks and elections: {}",
        recorded.records(),
        recorded.names.len(),
        counts.join(", ")
    );
    for (name, why) in &recorded.unread {
        println!("!!! lockd's history of {name} could not be read: {why}");
    }
}
