//! What the benchmark needs of the machine's processes and ports: a free loopback port, waiting
//! for a server to listen, a process's resident memory, and a scratch directory for the run.

use std::io;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A TCP port free right now on 127.0.0.1.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Waits until something accepts connections at `addr`.
pub fn wait_for_port(addr: &str, within: Duration) -> io::Result<()> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(addr).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("nothing listens on {addr}"),
    ))
}

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A scratch directory of this run (database files, Redis and etcd data), under the system's
/// temporary directory.
pub fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lock-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
