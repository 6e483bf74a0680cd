//! What the process asks of the kernel at start-up so that a burst of clients is served, not
//! stalled: the soft limit of open files raised to the hard one (every connection is a
//! descriptor; at the soft limit new connections wait in the backlog until some close), the
//! connections served at once kept below it ([`connection_budget`]), and a
//! listen backlog of [`LISTEN_BACKLOG`] instead of the standard library's 128 (a 2,000-connection
//! burst saw connect p99 of 1.1 s with 128: the kernel drops the SYNs of a full queue, and clients
//! resend them a second later).

use std::net::TcpListener;
use std::os::fd::AsRawFd;

/// Connections the kernel queues before lockd accepts them (the kernel caps it at
/// `net.core.somaxconn`, 4096 by default since Linux 5.4).
pub const LISTEN_BACKLOG: i32 = 4096;

/// The soft limit of open files before and after [`raise_open_files`], and the hard one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    pub before: u64,
    pub now: u64,
    pub hard: u64,
}

/// Connections served at once by default: the soft limit of open files less a reserve (an
/// eighth, at least 64) for the database pool, the files and the connections being shed, so
/// that a connection over the budget can still be accepted, answered 503 and closed, and
/// `/healthz` still answered, instead of waiting in the backlog.
pub fn connection_budget(open_files: u64) -> usize {
    let reserve = (open_files / 8).max(64);
    let budget = open_files.saturating_sub(reserve).max(1);
    usize::try_from(budget).unwrap_or(usize::MAX)
}

/// The soft limit of open files now.
///
/// # Errors
/// When it cannot be read.
pub fn open_files() -> std::io::Result<u64> {
    Ok(open_files_limit()?.rlim_cur)
}

/// The soft and hard limits of open files.
fn open_files_limit() -> std::io::Result<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for the call to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(limit)
}

/// Raises the soft limit of open files to the hard limit.
///
/// # Errors
/// When the limits cannot be read or set (the soft limit is then as it was).
pub fn raise_open_files() -> std::io::Result<OpenFiles> {
    let mut limit = open_files_limit()?;
    let before = limit.rlim_cur;
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: `limit` is a valid rlimit, with the soft limit at most the hard one.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(OpenFiles {
        before,
        now: limit.rlim_cur,
        hard: limit.rlim_max,
    })
}

/// Listens again on `listener` with a backlog of [`LISTEN_BACKLOG`] (Linux updates the backlog
/// of a listening socket in place).
///
/// # Errors
/// When `listen` fails.
pub fn deepen_backlog(listener: &TcpListener) -> std::io::Result<()> {
    // SAFETY: the descriptor is a bound, listening socket that `listener` owns for the call.
    if unsafe { libc::listen(listener.as_raw_fd(), LISTEN_BACKLOG) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::connection_budget;

    #[test]
    fn the_budget_keeps_an_eighth_and_at_least_64_descriptors_back() {
        assert_eq!(connection_budget(256), 192);
        assert_eq!(connection_budget(1024), 896);
        assert_eq!(connection_budget(1_048_576), 917_504);
        assert_eq!(connection_budget(64), 1);
        assert_eq!(connection_budget(0), 1);
    }
}
