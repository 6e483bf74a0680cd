//! `lockd run`'s side of the keeper (see [`super::keeper`]): starting it, ordering it to signal
//! the command's tree, and hearing its reports.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::ExitStatus;

use tokio::process::Child;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::keeper::Report;

/// The running keeper of one command.
pub struct CommandTree {
    /// The keeper process: it exits once the command's whole tree has ended.
    pub keeper: Child,
    /// Its reports, in order; closed when it has exited.
    pub reports: UnboundedReceiver<Report>,
    /// Orders to the keeper. Closing it (dropping this, or `lockd run` dying) kills the tree.
    pub orders: Orders,
}

/// The pipe on which `lockd run` orders the keeper to signal the tree.
pub struct Orders(File);

impl Orders {
    /// Has the keeper send `signal` to the whole tree; `SIGKILL` kills it until nothing is left.
    pub fn signal(&mut self, signal: libc::c_int) {
        if let Ok(byte) = u8::try_from(signal) {
            // The keeper may already be gone, with the tree: nothing left to signal then.
            let _ = self.0.write_all(&[byte]);
        }
    }

    /// Has the keeper kill the tree by itself at `at` unless a later deadline comes first: the
    /// command dies before the lease can run out even if this process stops (SIGSTOP).
    pub fn kill_by(&mut self, at: std::time::Instant) {
        let now = std::time::Instant::now();
        let now_ns = super::keeper::monotonic_ns();
        let at_ns = match at.checked_duration_since(now) {
            Some(ahead) => {
                now_ns.saturating_add(u64::try_from(ahead.as_nanos()).unwrap_or(u64::MAX))
            }
            None => now_ns.saturating_sub(u64::try_from((now - at).as_nanos()).unwrap_or(0)),
        };
        let _ = self.0.write_all(&super::keeper::deadline_order(at_ns));
    }
}

impl CommandTree {
    /// Starts the keeper, which starts `command` with the environment of this process plus
    /// `env`. The keeper's first report says whether the command runs.
    ///
    /// # Errors
    /// When the pipes or the keeper process cannot be made.
    pub fn spawn(command: &[OsString], env: &[(String, String)]) -> std::io::Result<Self> {
        let (control_read, control_write) = pipe()?;
        let (report_read, report_write) = pipe()?;
        let mut keeper = tokio::process::Command::new(own_binary()?);
        keeper
            .arg("run-keeper")
            .arg("--control-fd")
            .arg(control_read.as_raw_fd().to_string())
            .arg("--report-fd")
            .arg(report_write.as_raw_fd().to_string())
            .arg("--")
            .args(command)
            .envs(env.iter().map(|(name, value)| (name, value)))
            // Away from lockd run's group: a Ctrl-C or a kill of that group reaches lockd run,
            // which forwards it; the keeper must live on to kill the tree if lockd run dies.
            .process_group(0);
        let (keep_read, keep_write) = (control_read.as_raw_fd(), report_write.as_raw_fd());
        // SAFETY: the closure runs in the forked child before exec and only calls the
        // async-signal-safe fcntl, on two descriptors it owns.
        unsafe {
            keeper.pre_exec(move || {
                for fd in [keep_read, keep_write] {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let keeper = keeper
            .spawn()
            .map_err(|e| std::io::Error::other(format!("cannot start the keeper process: {e}")))?;
        // Only the keeper holds these ends now: its exit ends the reports, and lockd run's
        // exit ends the orders.
        drop((control_read, report_write));
        let (reports_tx, reports) = unbounded_channel();
        std::thread::Builder::new()
            .name("lockd-run-keeper-reports".to_owned())
            .spawn(move || {
                for line in BufReader::new(File::from(report_read))
                    .lines()
                    .map_while(Result::ok)
                {
                    match Report::parse(&line) {
                        Some(report) => {
                            if reports_tx.send(report).is_err() {
                                return;
                            }
                        }
                        None => {
                            eprintln!("lockd run: an unexpected report from the keeper: {line:?}")
                        }
                    }
                }
            })?;
        Ok(Self {
            keeper,
            reports,
            orders: Orders(File::from(control_write)),
        })
    }
}

/// The command's status from the raw wait status the keeper reported.
pub fn exit_status(raw: i32) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(raw)
}

/// A pipe whose ends are closed on exec (the keeper clears that on the two it needs).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// This program, to run as the keeper: `/proc/self/exe` works even when the file was replaced
/// (an upgrade) since `lockd run` started.
fn own_binary() -> std::io::Result<std::path::PathBuf> {
    if cfg!(target_os = "linux") {
        Ok("/proc/self/exe".into())
    } else {
        std::env::current_exe()
    }
}
