//! The sessions' comparisons on one started lockd, each in one run of the benchmark with the two
//! sides alternating run by run (ABBA, as `--baseline` does), so that a machine that slows down or
//! speeds up weighs on both alike:
//! - W8: holds kept alive by a session against the same holds renewed one by one;
//! - W1S: W1 under a session against plain W1.

use std::time::{Duration, Instant};

use super::Measure;
use crate::cpu::{self, CpuSample};
use crate::kept_alive::{self, Keeping, KeptRun, Target};
use crate::lockd::session::LockdSessionSystem;
use crate::lockd::{Lockd, LockdSystem};
use crate::report::{KeptAlive, KeptFigures, Report, SessionCycles};
use crate::stats::{median, RunStats};
use crate::table::{Backend, Workload};
use crate::workload;

/// How long a W1S session lives beyond the run it serves (it needs no keepalive).
const SESSION_SLACK: Duration = Duration::from_secs(30);

/// Whether run `run` of an ABBA series measures side A first.
fn a_first(run: usize) -> bool {
    run % 2 == 0
}

impl Measure<'_> {
    /// W8 and W1S on `server`, a lockd on `backend` whose database is at `database_url` (other
    /// workloads are [`Measure::throughput`]'s).
    pub fn sessions(
        &self,
        server: &Lockd,
        backend: Backend,
        database_url: &str,
        report: &mut Report,
    ) {
        for &workload in self.workloads {
            match workload {
                Workload::W8 => {
                    let target = Target {
                        addr: &server.addr,
                        pid: server.pid(),
                        backend,
                        database_url,
                    };
                    self.kept_alive(&target, report);
                }
                Workload::W1S => self.session_cycles(server, database_url, report),
                _ => {}
            }
        }
    }

    /// W8: the runs of both ways of keeping the holds alive, alternating.
    fn kept_alive(&self, target: &Target<'_>, report: &mut Report) {
        let started = Instant::now();
        let (mut by_session, mut one_by_one): (Vec<KeptRun>, Vec<KeptRun>) = (vec![], vec![]);
        for run in 0..self.plan.runs {
            let order = if a_first(run) {
                [Keeping::Session, Keeping::OneByOne]
            } else {
                [Keeping::OneByOne, Keeping::Session]
            };
            for keeping in order {
                let measured = self.runtime.block_on(kept_alive::run(
                    target,
                    keeping,
                    self.plan.clients,
                    self.plan.duration,
                    &format!("w8-{run}"),
                ));
                let kept = match measured {
                    Ok(kept) => kept,
                    Err(e) => {
                        eprintln!("!!! {} W8 {keeping:?}: not measured ({e})", self.name);
                        continue;
                    }
                };
                eprintln!(
                    "{} W8 {keeping:?}: {:.0} {}/s written; alone: keepalive or renew p99 {:.2} ms, \
                     round p99 {:.2} ms, {:.0} µs lockd CPU a round; beside the cycles: \
                     keepalive or renew p99 {:.2} ms, round p99 {:.2} ms, {:.0} cycles/s, \
                     cycle p99 {:.2} ms; failures {}",
                    self.name,
                    kept.writes_per_second,
                    kept.unit.name(),
                    p99_ms(&kept.alone.requests_us),
                    p99_ms(&kept.alone.rounds_us),
                    kept.cpu_per_round_us.0,
                    p99_ms(&kept.beside.requests_us),
                    p99_ms(&kept.beside.rounds_us),
                    kept.cycles.per_second(),
                    kept.cycles.percentile_ms(99.0),
                    kept.failures + kept.cycles.errors,
                );
                match keeping {
                    Keeping::Session => by_session.push(kept),
                    Keeping::OneByOne => one_by_one.push(kept),
                }
            }
        }
        let (Some(first), false) = (by_session.first(), one_by_one.is_empty()) else {
            return;
        };
        let kept = KeptAlive {
            system: self.name.to_owned(),
            holders: self.plan.clients,
            unit: first.unit,
            session: KeptFigures::from_runs(&by_session),
            one_by_one: KeptFigures::from_runs(&one_by_one),
        };
        eprintln!(
            "{} W8: writes {:.3}× by a session, keepalive p99 {:.2} ms against renew p99 {:.2} ms \
             (round {:.2} ms), cycles' p99 {:.2} against {:.2} ms [{:.0?}]",
            self.name,
            kept.session.writes_per_second / kept.one_by_one.writes_per_second,
            kept.session.request_p99_ms,
            kept.one_by_one.request_p99_ms,
            kept.one_by_one.round_p99_ms,
            kept.session.cycle_p99_ms,
            kept.one_by_one.cycle_p99_ms,
            started.elapsed()
        );
        report.add_kept_alive(kept);
    }

    /// W1S: plain W1 and W1 under a session, alternating, on one lockd.
    fn session_cycles(&self, server: &Lockd, database_url: &str, report: &mut Report) {
        let started = Instant::now();
        let (plan, clients, pid) = (self.plan, self.plan.clients, server.pid());
        let database = cpu::database_name(database_url);
        let plain = LockdSystem {
            addr: server.addr.clone(),
        };
        let under = LockdSessionSystem::new(
            &server.addr,
            (plan.duration.max(plan.warmup) + SESSION_SLACK).as_secs(),
        );
        // One side's run: its stats, the sessions it could not end, and the CPU per cycle.
        let once = |session: bool, tag: String, duration: Duration| {
            let before = CpuSample::take_serving(pid, database);
            let stats = self.runtime.block_on(async {
                if session {
                    workload::uncontended(&under, clients, duration, &tag).await
                } else {
                    workload::uncontended(&plain, clients, duration, &tag).await
                }
            });
            let after = CpuSample::take_serving(pid, database);
            let unclosed = self.runtime.block_on(under.close_all());
            let (lockd_us, database_us, _) = after.per_operation_us(&before, stats.operations);
            (stats, unclosed, (lockd_us, database_us))
        };
        let _ = once(false, "w1s-warm-plain".to_owned(), plan.warmup);
        let _ = once(true, "w1s-warm-session".to_owned(), plan.warmup);
        let mut sides: [Vec<(RunStats, (f64, f64))>; 2] = [vec![], vec![]];
        let mut errors = 0;
        for run in 0..plan.runs {
            let order = if a_first(run) {
                [false, true]
            } else {
                [true, false]
            };
            for session in order {
                let (stats, unclosed, cpu) =
                    once(session, format!("w1s-{run}-{session}"), plan.duration);
                eprintln!(
                    "{} {}: {:.0} cycles/s, p99 {:.2} ms, lockd {:.0} µs/cycle ({} errors)",
                    self.name,
                    if session { "W1S" } else { "W1 (beside W1S)" },
                    stats.per_second(),
                    stats.percentile_ms(99.0),
                    cpu.0,
                    stats.errors + unclosed
                );
                errors += stats.errors + unclosed;
                sides[usize::from(session)].push((stats, cpu));
            }
        }
        let [plain_runs, session_runs] = sides;
        let summary = |runs: &[(RunStats, (f64, f64))]| {
            let rates: Vec<f64> = runs.iter().map(|(s, _)| s.per_second()).collect();
            let cpu = |which: fn(&(f64, f64)) -> f64| {
                median(&runs.iter().map(|(_, c)| which(c)).collect::<Vec<_>>())
            };
            let all = RunStats::merge(runs.iter().map(|(s, _)| s.clone()));
            (rates, (cpu(|c| c.0), cpu(|c| c.1)), all.percentile_ms(99.0))
        };
        let (plain_rates, plain_cpu_us, plain_p99_ms) = summary(&plain_runs);
        let (session_rates, session_cpu_us, session_p99_ms) = summary(&session_runs);
        let cycles = SessionCycles {
            system: self.name.to_owned(),
            plain: plain_rates,
            session: session_rates,
            plain_cpu_us,
            session_cpu_us,
            plain_p99_ms,
            session_p99_ms,
            errors,
        };
        eprintln!(
            "{} W1S: {:.3}× of W1's cycles/s (medians {:.0} and {:.0}) [{:.0?}]",
            self.name,
            median(&cycles.session) / median(&cycles.plain),
            median(&cycles.session),
            median(&cycles.plain),
            started.elapsed()
        );
        report.add_session_cycles(cycles);
    }
}

fn p99_ms(latencies_us: &[u32]) -> f64 {
    f64::from(crate::stats::percentile(latencies_us, 99.0)) / 1000.0
}
