//! `lockd run`: hold a lock (or permits of a semaphore) on a lockd server while a command runs.
//!
//! Acquire (waiting up to `--wait`), spawn the command with `LOCKD_RESOURCE` (or
//! `LOCKD_SEMAPHORE`, `LOCKD_LIMIT`, `LOCKD_PERMITS`), `LOCKD_OWNER` and `LOCKD_FENCING_TOKEN`
//! under a keeper process that owns its whole process tree ([`keeper`]),
//! renew every ttl/3 on a separate thread, stop the tree before the lease can run out when
//! renewals fail, release once the command and everything it left behind have ended, and exit
//! with the command's status (see [`exit`] for the others). No process of the tree runs while
//! another holder could have the lock: its SIGKILL is due at "last successful renewal SENT +
//! ttl - margin", and the keeper kills the tree at once if `lockd run` dies.
//!
//! Several things (locks, and permits beside them), or one with `--session`, are held under one
//! session instead ([`session`]): the same machinery, with the session's keepalive for the
//! renewal and its end for the release ([`kept`]).

pub(crate) mod exit;
mod keeper;
mod kept;
mod owner;
mod renewer;
mod session;
mod supervisor;
pub(crate) mod target;
mod timing;
mod tree;
mod waiting;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use lock_client::{ClientError, LockClient};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::cli::RunArgs;
use kept::Kept;
use renewer::Renewer;
use supervisor::LeaseTrouble;
use timing::LeaseTiming;

pub use keeper::keep;
pub use target::Target;

/// What is held once it is acquired: what to keep alive and give up at the end, the command's
/// environment, when the last successful renewal (or the acquire) was sent, and the renewal
/// thread already at work, with its reports.
struct Holding {
    kept: Kept,
    env: Vec<(String, String)>,
    renewed_at: Instant,
    renewer: Renewer,
    reports: UnboundedReceiver<renewer::Renewal>,
}

/// Runs `lockd run` and returns its exit status.
pub fn run(args: RunArgs) -> ExitCode {
    ExitCode::from(match run_inner(&args) {
        Ok(code) | Err(code) => code,
    })
}

fn run_inner(args: &RunArgs) -> Result<u8, u8> {
    let owner = match &args.owner {
        Some(owner) => owner.clone(),
        None => owner::default_owner().map_err(|error| {
            eprintln!(
                "lockd run: cannot make a default owner (no random bytes: {error}); pass --owner"
            );
            exit::OS_ERROR
        })?,
    };
    let client = args
        .connection
        .client(Duration::from_secs(args.request_timeout));
    let timing = LeaseTiming::new(args.ttl, Duration::from_secs(args.kill_grace));
    let mut targets = args.targets();

    let mut holding = if args.uses_session() {
        session::hold(&client, args, &targets, &owner, timing)?
    } else {
        // clap requires something to hold: one thing here.
        hold_lease(&client, args, targets.swap_remove(0), &owner, timing)?
    };
    let held = holding.kept.describe();
    // A slow (waiting) acquire may have used up much of the lease counted from its sending:
    // renew once so the command starts with a fresh lease.
    if holding.renewed_at.elapsed() > timing.renew_every / 2 {
        let sent_at = Instant::now();
        match holding.kept.renew(&client, args.ttl, timing.renew_timeout) {
            Ok(target::Renewal::Renewed) => holding.renewed_at = sent_at,
            Ok(target::Renewal::Lost { .. }) => {
                eprintln!("lockd run: {held} was lost right after it was acquired");
                return Err(exit::UNAVAILABLE);
            }
            Err(error) => {
                eprintln!("lockd run: cannot renew {held} just acquired: {error}");
                release(&client, &holding.kept);
                return Err(exit::UNAVAILABLE);
            }
        }
    }

    let Holding {
        kept,
        env,
        renewed_at,
        renewer,
        reports,
    } = holding;
    let supervised = supervise(args, &env, timing, renewed_at, reports);
    // No renewal after the release.
    drop(renewer);
    let supervised = match supervised {
        Ok(supervised) => supervised,
        Err(error) => {
            release(&client, &kept);
            let program = args.command[0].to_string_lossy();
            eprintln!("lockd run: cannot run {program:?}: {error}");
            return Err(match error.kind() {
                std::io::ErrorKind::NotFound => exit::NOT_FOUND,
                _ => exit::CANNOT_EXECUTE,
            });
        }
    };
    match supervised.lease_trouble {
        None => release(&client, &kept),
        // Renewals failed: the server is probably unreachable, so do not wait long for it.
        Some(LeaseTrouble::AtRisk) => {
            release_within(&client, &kept, Some(timing.renew_timeout));
        }
        // Not ours any more: a release could only be refused.
        Some(LeaseTrouble::Lost) => {}
        Some(LeaseTrouble::KeeperDied) => release(&client, &kept),
    }
    match supervised.lease_trouble {
        Some(trouble) => {
            let why = match trouble {
                LeaseTrouble::AtRisk => "no renewal succeeded in time",
                LeaseTrouble::Lost => "the lease was lost",
                LeaseTrouble::KeeperDied => "its keeper process died",
            };
            eprintln!(
                "lockd run: the command was stopped because {why} (it ended with {}); failing",
                supervised.status
            );
            Err(exit::LEASE_LOST)
        }
        None => Ok(exit::of_child(supervised.status)),
    }
}

/// Acquires `target` on a lease of its own (waiting up to `--wait`), and starts renewing it.
fn hold_lease(
    client: &LockClient,
    args: &RunArgs,
    target: Target,
    owner: &str,
    timing: LeaseTiming,
) -> Result<Holding, u8> {
    let deadline = Instant::now() + Duration::from_secs(args.wait);
    let acquired = waiting::acquire_until(deadline, |wait_seconds| {
        target.acquire(client, owner, args.ttl, wait_seconds)
    });
    let (token, renewed_at) = match acquired {
        Ok(Ok(granted)) => granted,
        Ok(Err(_)) => {
            not_acquired(&target, args.wait);
            return Err(exit::NOT_ACQUIRED);
        }
        Err(error) => return Err(refused(&error)),
    };
    let env = target.env(owner, token);
    let kept = Kept::Lease {
        target,
        owner: owner.to_owned(),
    };
    let (renewer, reports) = start_renewer(client, &kept, args.ttl, timing)?;
    Ok(Holding {
        kept,
        env,
        renewed_at,
        renewer,
        reports,
    })
}

/// Starts renewing `kept`; when no thread can be started, gives it up at once.
fn start_renewer(
    client: &LockClient,
    kept: &Kept,
    ttl: u32,
    timing: LeaseTiming,
) -> Result<(Renewer, UnboundedReceiver<renewer::Renewal>), u8> {
    Renewer::start(client.clone(), kept.clone(), ttl, timing).map_err(|error| {
        eprintln!("lockd run: cannot start renewing: {error}");
        release(client, kept);
        exit::CANNOT_EXECUTE
    })
}

/// Says that `target` was not had within `--wait` (`wait` seconds).
fn not_acquired(target: &Target, wait: u64) {
    eprintln!(
        "{}: {} {}{}",
        target.program(),
        target.describe(),
        target.not_granted(),
        waited(wait)
    );
}

/// `" (waited N s)"` after a wait, nothing without one.
fn waited(wait: u64) -> String {
    if wait > 0 {
        format!(" (waited {wait} s)")
    } else {
        String::new()
    }
}

/// The exit status and message for an acquire the server refused or never answered.
fn refused(error: &ClientError) -> u8 {
    let code = match error.status() {
        None => exit::UNAVAILABLE,
        Some(401) => exit::UNAUTHORIZED,
        Some(400 | 422) => exit::INVALID_INPUT,
        // A semaphore acquire with another limit or other permits than the live grants'.
        Some(409) => exit::INVALID_INPUT,
        Some(_) => exit::UNAVAILABLE,
    };
    eprintln!("lockd run: {error}");
    code
}

fn supervise(
    args: &RunArgs,
    env: &[(String, String)],
    timing: LeaseTiming,
    renewed_at: Instant,
    reports: UnboundedReceiver<renewer::Renewal>,
) -> std::io::Result<supervisor::Supervised> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let signals = supervisor::Forwarded::register()?;
        supervisor::supervise(&args.command, env, timing, renewed_at, reports, signals).await
    })
}

/// Releases the lock (or the permits), or ends the session, reporting a failure (the lease then
/// ends at its expiry).
fn release(client: &LockClient, kept: &Kept) {
    release_within(client, kept, None);
}

/// [`release`] with a shorter timeout than the client's, if given.
fn release_within(client: &LockClient, kept: &Kept, timeout: Option<Duration>) {
    if let Err(error) = kept.release(client, timeout) {
        eprintln!(
            "lockd run: could not release {} (it expires by itself): {error}",
            kept.describe()
        );
    }
}
