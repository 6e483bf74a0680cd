//! The exit statuses of `lockd run` besides the command's own (sysexits.h where one fits).

use std::process::ExitStatus;

/// The server refused the resource, owner, ttl or wait (422): EX_USAGE.
pub const INVALID_INPUT: u8 = 64;
/// The server is unreachable, answered 5xx or something this client does not understand:
/// EX_UNAVAILABLE.
pub const UNAVAILABLE: u8 = 69;
/// The lease was at risk or lost while the command ran, and the command was stopped (even if
/// it then exited 0).
pub const LEASE_LOST: u8 = 70;
/// The operating system gave no random bytes for the default owner: EX_OSERR.
pub const OS_ERROR: u8 = 71;
/// The lock was not acquired within --wait: EX_TEMPFAIL.
pub const NOT_ACQUIRED: u8 = 75;
/// The API key was refused (401): EX_NOPERM.
pub const UNAUTHORIZED: u8 = 77;
/// The command exists but cannot be run (as in shells).
pub const CANNOT_EXECUTE: u8 = 126;
/// The command was not found (as in shells).
pub const NOT_FOUND: u8 = 127;

/// The command's status as a shell reports it: its exit code, or 128 + the signal that ended it.
pub fn of_child(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}
