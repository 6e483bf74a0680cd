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

mod exit;
mod keeper;
mod owner;
mod renewer;
mod supervisor;
pub(crate) mod target;
mod timing;
mod tree;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use lock_client::{ClientConfig, ClientError, LockClient};

use crate::cli::RunArgs;
use renewer::Renewer;
use supervisor::{Forwarded, LeaseTrouble};
use target::{Acquisition, Renewal};
use timing::LeaseTiming;

pub use keeper::keep;
pub use target::Target;

/// The longest `wait_seconds` sent in one acquire (the server's default maximum); a longer
/// `--wait` takes several requests. A server that refuses the field's value (a lower maximum)
/// is polled instead.
const MAX_WAIT_PER_REQUEST: u64 = 60;
/// Pause between attempts when the server answered "held" before the wait was over (a server
/// without waiting answers at once) and gave no `Retry-After`.
const POLL_EVERY: Duration = Duration::from_millis(250);

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
    let mut config = ClientConfig::new(args.server.clone());
    config.api_key = args.api_key.clone().filter(|key| !key.is_empty());
    config.request_timeout = Duration::from_secs(args.request_timeout);
    let client = LockClient::new(&config);
    let timing = LeaseTiming::new(args.ttl, Duration::from_secs(args.kill_grace));
    let target = args.target();
    let held = target.describe();

    let (token, mut renewed_at) = acquire(&client, args, &target, &owner)?;
    // A slow (waiting) acquire may have used up much of the lease counted from its sending:
    // renew once so the command starts with a fresh lease.
    if renewed_at.elapsed() > timing.renew_every / 2 {
        let sent_at = Instant::now();
        match target.renew(&client, &owner, args.ttl, timing.renew_timeout) {
            Ok(Renewal::Renewed) => renewed_at = sent_at,
            Ok(Renewal::Lost { .. }) => {
                eprintln!("lockd run: {held} was lost right after it was acquired");
                return Err(exit::UNAVAILABLE);
            }
            Err(error) => {
                eprintln!("lockd run: cannot renew {held} just acquired: {error}");
                release(&client, &target, &owner);
                return Err(exit::UNAVAILABLE);
            }
        }
    }

    let supervised = supervise(&client, args, &target, &owner, token, timing, renewed_at);
    let supervised = match supervised {
        Ok(supervised) => supervised,
        Err(error) => {
            release(&client, &target, &owner);
            let program = args.command[0].to_string_lossy();
            eprintln!("lockd run: cannot run {program:?}: {error}");
            return Err(match error.kind() {
                std::io::ErrorKind::NotFound => exit::NOT_FOUND,
                _ => exit::CANNOT_EXECUTE,
            });
        }
    };
    match supervised.lease_trouble {
        None => release(&client, &target, &owner),
        // Renewals failed: the server is probably unreachable, so do not wait long for it.
        Some(LeaseTrouble::AtRisk) => {
            release_within(&client, &target, &owner, Some(timing.renew_timeout));
        }
        // Not ours any more: a release could only be refused.
        Some(LeaseTrouble::Lost) => {}
        Some(LeaseTrouble::KeeperDied) => release(&client, &target, &owner),
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

/// Acquires the lock (or the permits), retrying "held" answers until the wait is over. Returns
/// the fencing token and when the granting request was sent.
fn acquire(
    client: &LockClient,
    args: &RunArgs,
    target: &Target,
    owner: &str,
) -> Result<(i64, Instant), u8> {
    let deadline = Instant::now() + Duration::from_secs(args.wait);
    let mut max_wait_per_request = MAX_WAIT_PER_REQUEST;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up, so that the first request asks for the whole `--wait`.
        let wait_seconds = left
            .as_millis()
            .div_ceil(1_000)
            .try_into()
            .unwrap_or(u64::MAX)
            .min(max_wait_per_request);
        let sent_at = Instant::now();
        match target.acquire(client, owner, args.ttl, wait_seconds) {
            Ok(Acquisition::Granted { token }) => return Ok((token, sent_at)),
            Ok(Acquisition::NotGranted {
                retry_after_seconds,
            }) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    eprintln!(
                        "{}: {} {}{}",
                        target.program(),
                        target.describe(),
                        target.not_granted(),
                        if args.wait > 0 {
                            format!(" (waited {} s)", args.wait)
                        } else {
                            String::new()
                        }
                    );
                    return Err(exit::NOT_ACQUIRED);
                }
                let hint = retry_after_seconds.map_or(POLL_EVERY, Duration::from_secs);
                std::thread::sleep(hint.min(POLL_EVERY).min(left));
            }
            // A server configured with a lower --max-wait-seconds: poll instead.
            Err(ClientError::Problem(problem))
                if wait_seconds > 0 && problem.errors.iter().any(|e| e.field == "wait_seconds") =>
            {
                max_wait_per_request = 0;
            }
            Err(error) => return Err(refused(&error)),
        }
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
    client: &LockClient,
    args: &RunArgs,
    target: &Target,
    owner: &str,
    token: i64,
    timing: LeaseTiming,
    renewed_at: Instant,
) -> std::io::Result<supervisor::Supervised> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let signals = Forwarded::register()?;
        let env = target.env(owner, token);
        let (reports_tx, reports) = tokio::sync::mpsc::unbounded_channel();
        let _renewer = Renewer::start(
            client.clone(),
            target.clone(),
            owner.to_owned(),
            args.ttl,
            timing,
            reports_tx,
        )?;
        supervisor::supervise(&args.command, &env, timing, renewed_at, reports, signals).await
    })
}

/// Releases the lock (or the permits), reporting a failure (the lease then ends at its expiry).
fn release(client: &LockClient, target: &Target, owner: &str) {
    release_within(client, target, owner, None);
}

/// [`release`] with a shorter timeout than the client's, if given.
fn release_within(client: &LockClient, target: &Target, owner: &str, timeout: Option<Duration>) {
    if let Err(error) = target.release(client, owner, timeout) {
        eprintln!(
            "lockd run: could not release {} (it expires by itself): {error}",
            target.describe()
        );
    }
}
