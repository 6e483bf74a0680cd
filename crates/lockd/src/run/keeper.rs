//! The keeper: a small process between `lockd run` and the command, which owns the command's
//! whole process tree.
//!
//! `lockd run` starts it (its own binary again, as the hidden `lockd run-keeper`) in a process
//! group of its own. The keeper
//! - is a child subreaper (`PR_SET_CHILD_SUBREAPER`): every process the command's tree
//!   orphans (a background job whose parent exited, a double fork, a `setsid` daemon) is
//!   reparented to it rather than to init, so it can wait for and kill them all;
//! - spawns the command in a new process group, with `PR_SET_PDEATHSIG` so that it dies with
//!   the keeper;
//! - reports to `lockd run` on a pipe: the command's pid, then its exit status;
//! - exits only once the whole tree has ended: the command and every process reparented to it
//!   (`waitpid` answers `ECHILD`). `lockd run` releases the lock only after that exit;
//! - takes orders on another pipe: a byte is a signal number for the whole tree (the command's
//!   group, and every process reparented to the keeper with its group); `SIGKILL` means "kill
//!   the tree until nothing is left". A zero byte and 8 more (big-endian) set the kill deadline:
//!   an instant of `CLOCK_MONOTONIC` in nanoseconds, which `lockd run` moves on with every
//!   successful renewal. Once it passes the keeper kills the tree by itself, so the command dies
//!   before the lease can run out even when `lockd run` is frozen (SIGSTOP, a stalled machine
//!   thread) and cannot order it;
//! - treats the end of that pipe as `lockd run`'s death (the kernel closes it whatever killed
//!   `lockd run`, SIGKILL included, and with no race with the keeper's start): nothing renews
//!   the lease any more, so it kills the tree at once.
//!
//! It is single-threaded and blocking, so forking and signalling need no care about threads.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::ExitCode;
use std::time::Duration;

use super::exit;
use crate::cli::KeeperArgs;

/// How often the keeper looks for ended processes and orders when nothing wakes it sooner.
const TICK: Duration = Duration::from_millis(10);

/// What the keeper reports, one line each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The command runs with this pid, which is also its process group's id.
    Spawned(i32),
    /// The command could not be started: this `errno`. The keeper then exits.
    SpawnFailed(i32),
    /// The command (not the rest of the tree) ended with this raw wait status.
    Exited(i32),
}

impl Report {
    pub fn to_line(self) -> String {
        match self {
            Report::Spawned(pid) => format!("spawned {pid}\n"),
            Report::SpawnFailed(errno) => format!("spawn-failed {errno}\n"),
            Report::Exited(status) => format!("exited {status}\n"),
        }
    }

    pub fn parse(line: &str) -> Option<Self> {
        let (kind, value) = line.trim_end().split_once(' ')?;
        let value = value.parse().ok()?;
        match kind {
            "spawned" => Some(Report::Spawned(value)),
            "spawn-failed" => Some(Report::SpawnFailed(value)),
            "exited" => Some(Report::Exited(value)),
            _ => None,
        }
    }
}

/// Runs the keeper; returns when the command's whole tree has ended.
pub fn keep(args: KeeperArgs) -> ExitCode {
    // SAFETY: lockd run passed these two descriptors to this process for it alone.
    let (mut control, mut report) = unsafe {
        (
            File::from_raw_fd(args.control_fd),
            File::from_raw_fd(args.report_fd),
        )
    };
    for fd in [control.as_raw_fd(), report.as_raw_fd()] {
        // The command must not inherit them: lockd run sees its death by the end of `control`.
        // SAFETY: fcntl on descriptors this process owns.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    if let Err(error) = become_subreaper() {
        eprintln!("lockd run: cannot keep the command's process tree: {error}");
        return ExitCode::from(exit::CANNOT_EXECUTE);
    }
    let mut keeper = Keeper {
        group: None,
        command_pid: None,
        killing: false,
        kill_deadline_ns: None,
        pending: Vec::new(),
    };
    // lockd run may already be gone: then nothing may start.
    keeper.read_orders(&mut control, Duration::ZERO);
    if keeper.killing {
        return ExitCode::from(exit::LEASE_LOST);
    }
    let mut command = std::process::Command::new(&args.command[0]);
    command.args(&args.command[1..]).process_group(0);
    die_with_parent(&mut command);
    match command.spawn() {
        Ok(child) => {
            let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
            keeper.group = Some(pid);
            keeper.command_pid = Some(pid);
            // Reaped below with waitpid(-1), like every other process of the tree.
            drop(child);
            send(&mut report, Report::Spawned(pid));
        }
        Err(error) => {
            send(
                &mut report,
                Report::SpawnFailed(error.raw_os_error().unwrap_or(libc::ENOEXEC)),
            );
            return ExitCode::SUCCESS;
        }
    }
    loop {
        if keeper.reap(&mut report) {
            return ExitCode::SUCCESS;
        }
        if keeper
            .kill_deadline_ns
            .is_some_and(|deadline| monotonic_ns() >= deadline)
            && !keeper.killing
        {
            eprintln!("lockd run: no renewal reached the keeper before the kill deadline (lockd run frozen?); killing the command (SIGKILL)");
            keeper.killing = true;
        }
        if keeper.killing {
            keeper.signal_tree(libc::SIGKILL);
            std::thread::sleep(TICK);
        } else {
            keeper.read_orders(&mut control, TICK);
        }
    }
}

struct Keeper {
    /// The command's process group (its pid), once it runs.
    group: Option<i32>,
    /// The command's pid until it has been reaped.
    command_pid: Option<i32>,
    /// SIGKILL was ordered or lockd run is gone: kill the tree until nothing is left.
    killing: bool,
    /// When to kill the tree unless `lockd run` moves it on (`CLOCK_MONOTONIC`, ns).
    kill_deadline_ns: Option<u64>,
    /// The bytes of a deadline order read so far.
    pending: Vec<u8>,
}

impl Keeper {
    /// Reaps every ended child; reports the command's end. True once nothing is left.
    fn reap(&mut self, report: &mut File) -> bool {
        loop {
            let mut status = 0;
            // SAFETY: waitpid with a valid pointer to an int.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            match pid {
                0 => return false,
                -1 => {
                    let error = std::io::Error::last_os_error();
                    match error.raw_os_error() {
                        Some(libc::EINTR) => continue,
                        // ECHILD: the command and everything it left have ended.
                        _ => return true,
                    }
                }
                pid if Some(pid) == self.command_pid => {
                    self.command_pid = None;
                    send(report, Report::Exited(status));
                }
                _ => {}
            }
        }
    }

    /// Waits up to `timeout` for orders and carries them out.
    fn read_orders(&mut self, control: &mut File, timeout: Duration) {
        let mut poll = libc::pollfd {
            fd: control.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready <= 0 {
            return;
        }
        let mut orders = [0u8; 64];
        match control.read(&mut orders) {
            // The end of the pipe: lockd run is gone, and the lease with it.
            Ok(0) => self.killing = true,
            Ok(n) => {
                for &byte in &orders[..n] {
                    if !self.pending.is_empty() || byte == DEADLINE {
                        self.pending.push(byte);
                        if let Some(deadline) = deadline_of(&self.pending) {
                            self.kill_deadline_ns = Some(deadline);
                            self.pending.clear();
                        }
                        continue;
                    }
                    let signal = libc::c_int::from(byte);
                    if signal == libc::SIGKILL {
                        self.killing = true;
                    }
                    self.signal_tree(signal);
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => self.killing = true,
        }
    }

    /// Sends `signal` to the command's process group and to every process reparented to the
    /// keeper, and to the group each of them leads (a `setsid` or `setpgid` job). Processes
    /// further down that left the group are reached once their parent has died (they are then
    /// reparented to the keeper): the SIGKILL loop repeats until nothing is left.
    fn signal_tree(&self, signal: libc::c_int) {
        if let Some(group) = self.group {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(-group, signal) };
        }
        for child in children_of(std::process::id()) {
            // SAFETY: as above; -child names only a group that `child` created.
            unsafe {
                libc::kill(child, signal);
                libc::kill(-child, signal);
            }
        }
    }
}

/// The first byte of a deadline order (no signal is numbered 0).
pub const DEADLINE: u8 = 0;

/// The order that sets the kill deadline to `deadline_ns` (`CLOCK_MONOTONIC`).
pub fn deadline_order(deadline_ns: u64) -> [u8; 9] {
    let mut order = [DEADLINE; 9];
    order[1..].copy_from_slice(&deadline_ns.to_be_bytes());
    order
}

/// The deadline of a whole deadline order (`None` while bytes are missing).
fn deadline_of(order: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = order.get(1..9)?.try_into().ok()?;
    Some(u64::from_be_bytes(bytes))
}

/// Now on `CLOCK_MONOTONIC`, in nanoseconds: the clock of `std::time::Instant` on Linux, and
/// the same in every process of the machine.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// Writes one report; lockd run may be gone, which the control pipe tells.
fn send(report: &mut File, what: Report) {
    let _ = report.write_all(what.to_line().as_bytes());
}

/// The pids whose parent is `parent`, from `/proc` (`/proc/PID/stat`, field 4).
fn children_of(parent: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parent_in_stat(&stat))
                == Some(parent)
        })
        .collect()
}

/// The parent pid in a `/proc/PID/stat` line: the second field after the command name, which
/// is in parentheses and may itself contain spaces and parentheses.
fn parent_in_stat(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Without a subreaper, processes the command orphans go to init: the keeper still waits for
/// and signals the command's process group.
#[cfg(not(target_os = "linux"))]
fn become_subreaper() -> std::io::Result<()> {
    Ok(())
}

/// Asks the kernel to SIGKILL the command if the keeper dies (SIGKILL, the OOM killer).
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut std::process::Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only calls the
    // async-signal-safe prctl, getppid and _exit.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The keeper may have died before the prctl: then nothing will signal us.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(exit::LEASE_LOST.into());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut std::process::Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        for report in [
            Report::Spawned(42),
            Report::SpawnFailed(libc::ENOENT),
            Report::Exited(0x0300),
        ] {
            assert_eq!(Report::parse(&report.to_line()), Some(report));
        }
        assert_eq!(Report::parse("nonsense"), None);
    }

    #[test]
    fn deadline_orders_round_trip_in_pieces() {
        let order = deadline_order(0x0102_0304_0506_0708);
        assert_eq!(order[0], DEADLINE);
        assert_eq!(deadline_of(&order[..5]), None);
        assert_eq!(deadline_of(&order), Some(0x0102_0304_0506_0708));
        assert!(monotonic_ns() > 0);
    }

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_in_stat("77 (a) b (c)) S 12 77 77 0"), Some(12));
        assert_eq!(parent_in_stat("1 (init) S 0 1 1"), Some(0));
        assert_eq!(parent_in_stat("garbage"), None);
    }
}
