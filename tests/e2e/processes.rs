//! Helpers for the tests that run `lockd run`, `lockd elect` and the operator commands as child
//! processes: waiting for one to exit, and telling whether a process still runs.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Waits (generously) for the exit; returns the status code (-1 for a signal) and stderr. Kills
/// the child and fails the test when it has not exited within `within`.
pub fn finish(mut child: Child, within: Duration) -> (i32, String) {
    let status = exit_within(&mut child, within);
    let output = child.wait_with_output().expect("stderr");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Waits for the exit and returns its status; kills the child and fails the test when it has
/// not exited within `within`.
pub fn exit_within(child: &mut Child, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("lockd did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is a process that has not ended (a zombie has run its last instruction: ended).
pub fn is_running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 1..].split_whitespace().next()?;
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}
