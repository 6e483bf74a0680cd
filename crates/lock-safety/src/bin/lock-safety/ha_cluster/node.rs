//! One PostgreSQL server of the high-availability pair: made by initdb or by pg_basebackup from
//! the other, started, promoted, restarted, and killed with everything it forked.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to start, stop or be promoted, and a killed one to let go of its
/// port.
const PATIENCE: Duration = Duration::from_secs(60);

/// One server: its data directory and port are its own for the whole run, whichever role it
/// plays.
pub struct PgNode {
    pub port: u16,
    pub data: PathBuf,
    /// The directory of its socket and its log (owned by the postgres user when we are root).
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
}

impl PgNode {
    pub fn new(dir: &Path, name: &str, port: u16, bin: &Path, as_postgres: bool) -> Self {
        Self {
            port,
            data: dir.join(name),
            dir: dir.to_owned(),
            bin: bin.to_owned(),
            as_postgres,
        }
    }

    /// A PostgreSQL tool, run as the postgres user when we are root (initdb and the server refuse
    /// to run as root).
    fn tool(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        crate::cluster::pg_tool(&self.bin, self.as_postgres, tool, args)
    }

    fn data_arg(&self) -> &str {
        self.data.to_str().expect("utf-8 path")
    }

    /// A new primary's data directory.
    pub fn initdb(&self) -> Result<(), String> {
        let args = ["-D", self.data_arg(), "-U", "postgres", "--auth=trust"];
        self.tool("initdb", &[&args[..], &["--no-sync"]].concat())
    }

    /// Replaces the data directory with a copy of the server on `primary_port`, set up to follow
    /// it (`-R`). pg_basebackup makes the directory itself, owned by the postgres user, mode 0700.
    pub fn clone_from(&self, primary_port: u16) -> Result<(), String> {
        if self.data.exists() {
            std::fs::remove_dir_all(&self.data)
                .map_err(|e| format!("{}: {e}", self.data.display()))?;
        }
        let port = primary_port.to_string();
        self.tool(
            "pg_basebackup",
            &[
                "-R",
                "-D",
                self.data_arg(),
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        )?;
        // Whatever the primary's own settings were, this copy starts without synchronous standbys:
        // promoted before its own standby streams, it must commit alone rather than hang. The
        // pair names its synchronous standby once one streams.
        let auto = self.data.join("postgresql.auto.conf");
        let text =
            std::fs::read_to_string(&auto).map_err(|e| format!("{}: {e}", auto.display()))?;
        let kept: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("synchronous_standby_names"))
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(&auto, kept).map_err(|e| format!("{}: {e}", auto.display()))
    }

    /// pg_ctl with the options every start uses (the same for both roles: the roles swap), and a
    /// log file (without `-l` pg_ctl keeps our pipes open and `output()` never returns).
    fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200 \
             -c wal_level=replica -c max_wal_senders=10 -c hot_standby=on \
             -c wal_retrieve_retry_interval=200ms",
            self.port,
            self.dir.to_string_lossy()
        );
        let log = self.log();
        let log = log.to_string_lossy();
        let mut all = vec!["-D", self.data_arg(), "-o", &options, "-l", &log];
        all.extend_from_slice(args);
        self.tool("pg_ctl", &all)
    }

    /// The server's log file.
    pub fn log(&self) -> PathBuf {
        self.dir.join(format!("port-{}.log", self.port))
    }

    /// Starts the server; a failure says why, from the end of its log.
    pub fn start(&self) -> Result<(), String> {
        self.pg_ctl(&["start", "-w", "-t", "60"]).map_err(|error| {
            let log = std::fs::read_to_string(self.log()).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(8).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!("{error}\nthe end of its log:\n{}", tail.join("\n"))
        })
    }

    /// Restarts the server (fast shutdown: open connections are cut).
    pub fn restart(&self) -> Result<(), String> {
        self.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// Ends a standby's recovery; returns once it accepts writes.
    pub fn promote(&self) -> Result<(), String> {
        self.pg_ctl(&["promote", "-w", "-t", "60"])
    }

    pub fn stop(&self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }

    /// One SQL statement as the superuser; its result unaligned, without headers.
    pub fn query(&self, statement: &str) -> Result<String, String> {
        let output = Command::new("psql")
            .args(["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .args(["-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1"])
            .args(["-c", statement])
            .env("PGCONNECT_TIMEOUT", "2")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(format!(
                "psql -p {} -c {statement:?}: {}",
                self.port,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// Polls `statement` until it answers `want`, for [`PATIENCE`] at the most.
    pub fn wait_for(&self, statement: &str, want: &str) -> Result<(), String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let answer = self.query(statement);
            if answer.as_deref() == Ok(want) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "port {}: {statement:?} answered {answer:?}, not {want:?}, for {} s",
                    self.port,
                    PATIENCE.as_secs()
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// `kill -9` of the postmaster, then of every process it had forked (a backend whose
    /// postmaster died can still answer its client for a while: a read there would show the old
    /// primary's state after the standby took over). The postmaster is stopped first so that it
    /// forks nothing between the listing of its children and its death. Returns how many
    /// processes died, once the port refuses connections.
    pub fn kill9(&self) -> Result<usize, String> {
        let pid_file = self.data.join("postmaster.pid");
        let text = std::fs::read_to_string(&pid_file)
            .map_err(|e| format!("{}: {e}", pid_file.display()))?;
        let pid: i32 = text
            .lines()
            .next()
            .and_then(|line| line.trim().parse().ok())
            .ok_or_else(|| format!("{}: no pid on its first line", pid_file.display()))?;
        // SAFETY: signals to processes of our own cluster, whose pids we just read.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let mut victims = children_of(pid);
        victims.push(pid);
        for &victim in &victims {
            unsafe { libc::kill(victim, libc::SIGKILL) };
        }
        let deadline = Instant::now() + PATIENCE;
        while victims.iter().any(|&victim| alive(victim)) || self.accepts() {
            if Instant::now() > deadline {
                return Err(format!("port {}: still up after kill -9", self.port));
            }
            thread::sleep(Duration::from_millis(5));
        }
        // The socket's lock file names the dead postmaster, which stays a zombie until whoever
        // adopted it reaps it; a server started on this port meanwhile would take it for alive.
        for stale in [
            format!(".s.PGSQL.{}.lock", self.port),
            format!(".s.PGSQL.{}", self.port),
        ] {
            let _ = std::fs::remove_file(self.dir.join(stale));
        }
        Ok(victims.len())
    }

    /// Whether something accepts TCP connections on the server's port.
    fn accepts(&self) -> bool {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
    }
}

/// The processes whose parent is `parent`, from /proc.
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| stat_fields(pid).is_some_and(|(_, ppid)| ppid == parent))
        .collect()
}

/// Alive: not gone and not a zombie (nobody may reap the killed postmaster's remains).
fn alive(pid: i32) -> bool {
    stat_fields(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// The state and parent pid in `/proc/PID/stat` (after the command name, which may hold spaces
/// and parentheses).
fn stat_fields(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_listed_alive_then_dead_once_killed() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("sleep");
        let (me, pid) = (std::process::id() as i32, child.id() as i32);
        assert_eq!(stat_fields(pid).map(|(_, ppid)| ppid), Some(me));
        assert!(children_of(me).contains(&pid));
        assert!(alive(pid));
        unsafe { libc::kill(pid, libc::SIGKILL) };
        // Killed but not reaped yet: a zombie, which counts as dead.
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert!(!alive(pid));
        let _ = child.wait();
        assert!(!alive(pid));
    }
}
