//! The supervisor of `lockd run`: runs the command, keeps the lease's deadlines from the
//! renewal reports, stops the command before the lease can run out, and forwards the signals
//! `lockd run` receives.

use std::process::ExitStatus;
use std::time::Instant;

use tokio::process::{Child, Command};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::sleep_until;

use super::renewer::Renewal;
use super::timing::LeaseTiming;

/// How the command ended.
#[derive(Debug)]
pub struct Supervised {
    pub status: ExitStatus,
    /// Why the command was stopped for the lease's sake, if it was: then `lockd run` fails
    /// whatever the command's status.
    pub lease_trouble: Option<LeaseTrouble>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseTrouble {
    /// No renewal succeeded for ttl minus the margin and the grace: SIGTERM, then SIGKILL.
    AtRisk,
    /// The server said the lock is not ours any more: SIGKILL at once.
    Lost,
}

/// The signals forwarded to the command. Registered before it is spawned, so none is missed
/// (and none of them kills `lockd run` itself, which must release the lock afterwards).
pub struct Forwarded {
    terminate: Signal,
    interrupt: Signal,
    hangup: Signal,
    quit: Signal,
}

impl Forwarded {
    pub fn register() -> std::io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }
}

/// Spawns `command` and supervises it until it exits.
///
/// # Errors
/// The spawn error when the command cannot be started (nothing runs then).
pub async fn supervise(
    mut command: Command,
    timing: LeaseTiming,
    mut renewed_at: Instant,
    mut reports: UnboundedReceiver<Renewal>,
    mut signals: Forwarded,
) -> std::io::Result<Supervised> {
    let mut child = command.spawn()?;
    let mut lease_trouble = None;
    let mut term_sent = false;
    let mut kill_sent = false;
    let mut reports_open = true;
    let status = loop {
        let term_at = timing.term_at(renewed_at);
        let kill_at = timing.kill_at(renewed_at);
        tokio::select! {
            biased;
            status = child.wait() => break status?,
            report = reports.recv(), if reports_open => match report {
                Some(Renewal::Renewed { sent_at }) => renewed_at = renewed_at.max(sent_at),
                Some(Renewal::Failed(error)) => {
                    let left = timing.term_at(renewed_at).saturating_duration_since(Instant::now());
                    eprintln!("lockd run: renewal failed ({error}); the command is stopped in {:.1} s unless a renewal succeeds", left.as_secs_f64());
                }
                Some(Renewal::Lost { forbidden }) => {
                    let whose = if forbidden { "another owner holds the lock" } else { "the lock is gone (expired or released)" };
                    eprintln!("lockd run: the lease was lost: {whose}; killing the command (SIGKILL)");
                    lease_trouble = Some(LeaseTrouble::Lost);
                    kill_sent = true;
                    reports_open = false;
                    send(&child, libc::SIGKILL);
                }
                None => reports_open = false,
            },
            () = sleep_until(term_at.into()), if !term_sent && !kill_sent => {
                eprintln!(
                    "lockd run: no renewal succeeded for {:.1} s of the {} s lease; stopping the command (SIGTERM, SIGKILL in {:.1} s)",
                    renewed_at.elapsed().as_secs_f64(), timing.ttl.as_secs(), timing.kill_grace.as_secs_f64()
                );
                lease_trouble.get_or_insert(LeaseTrouble::AtRisk);
                term_sent = true;
                send(&child, libc::SIGTERM);
            },
            () = sleep_until(kill_at.into()), if term_sent && !kill_sent => {
                eprintln!("lockd run: the command did not stop after SIGTERM; killing it (SIGKILL)");
                kill_sent = true;
                send(&child, libc::SIGKILL);
            },
            Some(()) = signals.terminate.recv() => send(&child, libc::SIGTERM),
            Some(()) = signals.interrupt.recv() => send(&child, libc::SIGINT),
            Some(()) = signals.hangup.recv() => send(&child, libc::SIGHUP),
            Some(()) = signals.quit.recv() => send(&child, libc::SIGQUIT),
        }
    };
    Ok(Supervised {
        status,
        lease_trouble,
    })
}

/// Sends `signal` to the command's process group (the command and what it started), if the
/// command has not been reaped (its pid, which is the group's id, is then still its own).
fn send(child: &Child, signal: libc::c_int) {
    if let Some(pid) = child.id().and_then(|pid| libc::pid_t::try_from(pid).ok()) {
        // SAFETY: kill(2) has no memory-safety preconditions; -pid names the process group the
        // unreaped command leads.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}
