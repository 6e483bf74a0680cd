//! The supervisor of `lockd run`: runs the command under its keeper, keeps the lease's
//! deadlines from the renewal reports, stops the command's whole process tree before the lease
//! can run out, and forwards the signals `lockd run` receives.

use std::ffi::OsString;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::sleep_until;

use super::keeper::Report;
use super::renewer::Renewal;
use super::timing::LeaseTiming;
use super::tree::{exit_status, CommandTree};

/// How long after the command's exit `lockd run` says that it waits for what the command left.
const LEFTOVERS_NOTE_AFTER: Duration = Duration::from_secs(1);

/// How the command ended.
#[derive(Debug)]
pub struct Supervised {
    /// The command's own status (not that of what it left behind).
    pub status: ExitStatus,
    /// Why the command was stopped for the lease's sake, if it was: then `lockd run` fails
    /// whatever the command's status.
    pub lease_trouble: Option<LeaseTrouble>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseTrouble {
    /// No renewal succeeded for ttl minus the margin and the grace: SIGTERM, then SIGKILL.
    AtRisk,
    /// The server said the lock (the session) is not ours any more: SIGKILL at once.
    Lost,
    /// The keeper process was killed, so the command's tree could not be followed: its
    /// process group got SIGKILL.
    KeeperDied,
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

/// Starts `command` under its keeper and supervises the whole tree until it has ended: the
/// command and every process it left behind (see [`super::keeper`]). The deadlines and the
/// forwarded signals apply to the whole tree until then.
///
/// # Errors
/// The spawn error when the command cannot be started (nothing runs then), or why the keeper
/// could not be started.
pub async fn supervise(
    command: &[OsString],
    env: &[(String, String)],
    timing: LeaseTiming,
    mut renewed_at: Instant,
    mut reports: UnboundedReceiver<Renewal>,
    mut signals: Forwarded,
) -> std::io::Result<Supervised> {
    let CommandTree {
        mut keeper,
        reports: mut tree_reports,
        mut orders,
    } = CommandTree::spawn(command, env)?;
    // The keeper's own deadline, moved on with every renewal: it kills the tree by itself at the
    // instant this process would, should this process be frozen (SIGSTOP) and unable to.
    orders.kill_by(timing.kill_at(renewed_at));
    let group = match tree_reports.recv().await {
        Some(Report::Spawned(pid)) => pid,
        Some(Report::SpawnFailed(errno)) => {
            let _ = keeper.wait().await;
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        other => {
            let keeper_status = keeper.wait().await?;
            return Err(std::io::Error::other(format!(
                "the keeper process ended ({keeper_status}) before the command started ({other:?})"
            )));
        }
    };
    let mut command_status = None;
    let mut lease_trouble = None;
    let mut term_sent = false;
    let mut kill_sent = false;
    let mut reports_open = true;
    let mut tree_reports_open = true;
    // When to say that the lock stays held for what the command left behind.
    let mut leftovers_note_at: Option<Instant> = None;
    let keeper_status = loop {
        let term_at = timing.term_at(renewed_at);
        let kill_at = timing.kill_at(renewed_at);
        tokio::select! {
            biased;
            status = keeper.wait() => break status?,
            report = tree_reports.recv(), if tree_reports_open => match report {
                Some(Report::Exited(raw)) => {
                    command_status = Some(exit_status(raw));
                    leftovers_note_at = Some(Instant::now() + LEFTOVERS_NOTE_AFTER);
                }
                Some(other) => eprintln!("lockd run: an unexpected report from the keeper: {other:?}"),
                None => tree_reports_open = false,
            },
            report = reports.recv(), if reports_open => match report {
                Some(Renewal::Renewed { sent_at }) => {
                    renewed_at = renewed_at.max(sent_at);
                    orders.kill_by(timing.kill_at(renewed_at));
                }
                Some(Renewal::Failed(error)) => {
                    let left = timing.term_at(renewed_at).saturating_duration_since(Instant::now());
                    eprintln!("lockd run: renewal failed ({error}); the command is stopped in {:.1} s unless a renewal succeeds", left.as_secs_f64());
                }
                Some(Renewal::Lost { why }) => {
                    eprintln!("lockd run: the lease was lost: {why}; killing the command (SIGKILL)");
                    lease_trouble = Some(LeaseTrouble::Lost);
                    kill_sent = true;
                    reports_open = false;
                    orders.signal(libc::SIGKILL);
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
                orders.signal(libc::SIGTERM);
            },
            () = sleep_until(kill_at.into()), if term_sent && !kill_sent => {
                eprintln!("lockd run: the command did not stop after SIGTERM; killing it (SIGKILL)");
                kill_sent = true;
                orders.signal(libc::SIGKILL);
            },
            () = sleep_until(leftovers_note_at.unwrap_or(kill_at).into()), if leftovers_note_at.is_some() => {
                leftovers_note_at = None;
                eprintln!("lockd run: the command has exited; the lock stays held until the processes it left behind have ended");
            },
            Some(()) = signals.terminate.recv() => orders.signal(libc::SIGTERM),
            Some(()) = signals.interrupt.recv() => orders.signal(libc::SIGINT),
            Some(()) = signals.hangup.recv() => orders.signal(libc::SIGHUP),
            Some(()) = signals.quit.recv() => orders.signal(libc::SIGQUIT),
        }
    };
    // A report written just before the keeper exited may still be on its way.
    while let Some(report) = tree_reports.recv().await {
        if let Report::Exited(raw) = report {
            command_status = Some(exit_status(raw));
        }
    }
    let status = match command_status {
        Some(status) => status,
        None => {
            // The keeper was killed: the command got SIGKILL with it (PDEATHSIG); so does its
            // group. Processes that left the group may survive this one case.
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            eprintln!("lockd run: the keeper of the command's processes died ({keeper_status}); killed the command's process group");
            lease_trouble = Some(LeaseTrouble::KeeperDied);
            keeper_status
        }
    };
    Ok(Supervised {
        status,
        lease_trouble,
    })
}
