//! Measuring one started system on its workloads: a warm-up, the timed runs, the CPU and memory
//! probes, one line of progress on stderr and one [`Measurement`] per workload in the report.
//! The sessions' comparisons on one lockd (W8, W1S) are in `measure/sessions.rs`.

mod sessions;

use std::time::{Duration, Instant};

use crate::cpu::CpuSample;
use crate::handoff;
use crate::lockd::Lockd;
use crate::plan::Plan;
use crate::process::rss_kib;
use crate::read_write;
use crate::report::{Measurement, ReadWrite, Report};
use crate::stats::RunStats;
use crate::table::{Instance, Workload};
use crate::workload::{self, LockSystem};

/// Handoffs measured per run of W5.
const HANDOFFS_PER_RUN: usize = 100;

/// Handoffs of the warm-up before W5's runs.
const HANDOFFS_TO_WARM_UP: usize = 10;

/// What to watch of a measured system: its server process and, if any, the database server's
/// processes (by command name).
#[derive(Debug, Clone, Copy, Default)]
pub struct Probe {
    pub pid: Option<u32>,
    pub database: Option<&'static str>,
}

/// One system's measurements: its name in the report and the workloads to run on it.
pub struct Measure<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub plan: &'a Plan,
    pub name: &'a str,
    pub workloads: &'a [Workload],
}

impl Measure<'_> {
    /// W1 to W4, W6 and W7 on `system`, one after another (W8 and W1S are
    /// [`Measure::sessions`]'s).
    ///
    /// # Panics
    /// On W5, which needs two lockd instances ([`Measure::handoffs`]).
    pub fn throughput<S: LockSystem>(&self, system: &S, probe: Probe, report: &mut Report) {
        let (plan, clients) = (self.plan, self.plan.clients);
        for &workload in self.workloads {
            if workload.compares_sessions() {
                continue;
            }
            let label = workload.label();
            // Resource names come from the tag: keep them plain in a URL path.
            let slug: String = label
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let run = |tag: String, duration: Duration| -> RunStats {
                self.runtime.block_on(async {
                    match workload {
                        Workload::W1 | Workload::W3 { .. } => {
                            workload::uncontended(system, clients, duration, &tag).await
                        }
                        Workload::W2 => workload::contended(system, clients, duration, &tag).await,
                        Workload::W4 => workload::reads(system, clients, duration, &tag).await,
                        Workload::W6 => workload::semaphores(system, clients, duration, &tag).await,
                        Workload::W7 => {
                            read_write::read_write(system, clients, duration, &tag).await
                        }
                        Workload::W5 { .. } => panic!("W5 needs two lockd instances"),
                        Workload::W8 | Workload::W1S => unreachable!("skipped above"),
                    }
                })
            };
            let started = Instant::now();
            let _ = run(format!("warm-{slug}"), plan.warmup);
            let before = CpuSample::take(probe.pid, probe.database);
            let runs: Vec<RunStats> = (0..plan.runs)
                .map(|i| run(format!("{slug}-{i}"), plan.duration))
                .collect();
            let operations: u64 = runs.iter().map(|r| r.operations).sum();
            let cpu =
                CpuSample::take(probe.pid, probe.database).per_operation_us(&before, operations);
            let rss = probe.pid.and_then(rss_kib);
            let mut measurement = Measurement::from_runs(self.name, &label, &runs, rss);
            measurement.read_write =
                (workload == Workload::W7).then(|| ReadWrite::from_runs(&runs));
            // Only a long-lived server process can be measured: the raw ceilings' database
            // backends live and die with their connections, whose CPU time /proc no longer shows
            // afterwards.
            measurement.cpu_us = probe.pid.map(|_| cpu);
            eprintln!(
                "{} {label}: {:.0}/s (spread {:.0}), p50 {:.2} ms, p99 {:.2} ms, errors {} [{:.0?}]",
                self.name,
                measurement.per_second,
                measurement.spread,
                measurement.p50_ms,
                measurement.p99_ms,
                measurement.errors,
                started.elapsed()
            );
            if let Some(rw) = measurement.read_write {
                eprintln!(
                    "{} {label}: granted {} of {} shared and {} of {} exclusive acquires, \
                     exclusive p99 {:.2} ms",
                    self.name,
                    rw.shared_granted,
                    rw.shared_asked,
                    rw.exclusive_granted,
                    rw.exclusive_asked,
                    rw.exclusive_p99_ms
                );
            }
            report.add(measurement);
        }
    }

    /// W5 on two lockd processes sharing one database: the holder on `first`, the waiter on
    /// `first` or on `second`.
    ///
    /// # Panics
    /// On any workload but W5.
    pub fn handoffs(&self, first: &Lockd, second: &Lockd, report: &mut Report) {
        for &workload in self.workloads {
            let Workload::W5 { waiter } = workload else {
                panic!("{workload:?} is not measured on a pair of lockd instances");
            };
            let label = workload.label();
            let (waiter_addr, slug) = match waiter {
                Instance::Same => (&first.addr, "same"),
                Instance::Other => (&second.addr, "other"),
            };
            let started = Instant::now();
            let _ = self.runtime.block_on(handoff::handoffs(
                &first.addr,
                waiter_addr,
                HANDOFFS_TO_WARM_UP,
                &format!("warm-{slug}"),
            ));
            let runs: Vec<RunStats> = (0..self.plan.runs)
                .map(|i| {
                    self.runtime.block_on(handoff::handoffs(
                        &first.addr,
                        waiter_addr,
                        HANDOFFS_PER_RUN,
                        &format!("w5-{slug}-{i}"),
                    ))
                })
                .collect();
            let measurement =
                Measurement::from_runs(self.name, &label, &runs, rss_kib(first.pid()));
            eprintln!(
                "{} {label}: {} handoffs, p50 {:.2} ms, p99 {:.2} ms, errors {} [{:.0?}]",
                self.name,
                measurement.operations,
                measurement.p50_ms,
                measurement.p99_ms,
                measurement.errors,
                started.elapsed()
            );
            report.add(measurement);
        }
    }
}
