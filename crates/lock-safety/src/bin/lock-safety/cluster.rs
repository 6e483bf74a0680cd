//! The system under test: a database (a SQLite file, a private PostgreSQL cluster behind a proxy,
//! or a PostgreSQL primary with its synchronous standby) and several `lockd` instances on it,
//! which the fault injector kills, restarts and pauses, and which the clients reach by their
//! current addresses.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, RwLock};
use std::thread;
use std::time::Duration;

use lock_safety::proxy::Proxy;

use crate::ha_cluster::PgPair;

/// A private PostgreSQL cluster (initdb + pg_ctl on a free port), so it can be restarted and its
/// commits slowed without touching anyone else's server. Stopped and removed when dropped.
pub struct PgCluster {
    pub data: PathBuf,
    pub port: u16,
    bin: PathBuf,
    as_postgres: bool,
    _dir: tempfile::TempDir,
}

impl PgCluster {
    /// Makes and starts a cluster in a temporary directory.
    pub fn start(bin: &Path) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("lock-safety-pg")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        // initdb refuses to run as root: run the cluster as the postgres user then.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let data = dir.path().join("data");
        if as_postgres {
            run(Command::new("chown").args(["-R", "postgres:", &dir.path().to_string_lossy()]))?;
        }
        let port = free_port();
        let cluster = Self {
            data,
            port,
            bin: bin.to_owned(),
            as_postgres,
            _dir: dir,
        };
        cluster.pg(
            "initdb",
            &[
                "-D",
                &cluster.data.to_string_lossy(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ],
        )?;
        cluster.pg_ctl(&["start", "-w", "-t", "60"])?;
        Ok(cluster)
    }

    fn pg(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        pg_tool(&self.bin, self.as_postgres, tool, args)
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200",
            self.port,
            self.data
                .parent()
                .expect("data dir parent")
                .to_string_lossy()
        );
        let mut all = vec![
            "-D",
            self.data.to_str().expect("utf-8 path"),
            "-o",
            &options,
        ];
        all.push("-l");
        let log = self.data.parent().expect("parent").join("postgres.log");
        let log = log.to_string_lossy().into_owned();
        all.push(&log);
        all.extend_from_slice(args);
        self.pg("pg_ctl", &all)
    }

    /// Restarts the server (fast shutdown: open connections are cut).
    pub fn restart(&self) -> Result<(), String> {
        self.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// Runs one SQL statement as the superuser.
    pub fn sql(&self, statement: &str) -> Result<(), String> {
        run(Command::new("psql").args([
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            statement,
        ]))
    }

    pub fn url(&self, port: u16) -> String {
        format!("postgres://postgres@127.0.0.1:{port}/postgres")
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }
}

/// Runs a command to its end.
///
/// # Errors
/// The command, its exit status and its output, when it failed.
/// Runs a PostgreSQL tool of `bin`, as the postgres user when `as_postgres` (initdb and the
/// server refuse to run as root).
pub fn pg_tool(bin: &Path, as_postgres: bool, tool: &str, args: &[&str]) -> Result<(), String> {
    let program = bin.join(tool);
    let mut command = if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&program);
        c
    } else {
        Command::new(&program)
    };
    command.args(args);
    run(&mut command)
}

pub fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Where lockd's database is.
pub enum Database {
    Sqlite {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
    Postgres {
        cluster: PgCluster,
        proxy: Proxy,
    },
    /// A primary and its synchronous standby, reached directly (no proxy) by a multi-host URL.
    PostgresHa {
        pair: PgPair,
    },
}

impl Database {
    pub fn url(&self) -> String {
        match self {
            Database::Sqlite { path, .. } => format!("sqlite://{}", path.to_string_lossy()),
            Database::Postgres { cluster, proxy } => cluster.url(proxy.port()),
            Database::PostgresHa { pair } => pair.url(),
        }
    }
}

/// One running lockd.
struct Instance {
    child: Child,
    paused: bool,
}

/// The lockd instances. `bases` holds each one's address while it runs.
pub struct Fleet {
    binary: PathBuf,
    database_url: String,
    log_dir: PathBuf,
    instances: Mutex<Vec<Option<Instance>>>,
    bases: RwLock<Vec<Option<String>>>,
}

impl Fleet {
    /// Starts `count` instances one after the other (so that only the first migrates).
    pub fn start(
        binary: &Path,
        database_url: &str,
        count: usize,
        log_dir: &Path,
    ) -> Result<Self, String> {
        let fleet = Self {
            binary: binary.to_owned(),
            database_url: database_url.to_owned(),
            log_dir: log_dir.to_owned(),
            instances: Mutex::new((0..count).map(|_| None).collect()),
            bases: RwLock::new(vec![None; count]),
        };
        for i in 0..count {
            fleet.launch(i)?;
        }
        Ok(fleet)
    }

    pub fn len(&self) -> usize {
        self.bases.read().expect("bases").len()
    }

    /// The address of instance `i`, if it runs.
    pub fn base(&self, i: usize) -> Option<String> {
        self.bases.read().expect("bases")[i].clone()
    }

    fn launch(&self, i: usize) -> Result<(), String> {
        let log_path = self.log_dir.join(format!("lockd-{i}.log"));
        let mut log = File::options()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let mut child = Command::new(&self.binary)
            .args(["serve", "--bind", "127.0.0.1:0", "--database-url"])
            .arg(&self.database_url)
            .args(["--max-wait-seconds", "10"])
            .env("LOCKD_LOG", "warn")
            .env_remove("DATABASE_URL")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", self.binary.display()))?;
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(log, "{line}");
                if !sent {
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        let _ = tx.send(addr.trim().to_owned());
                        sent = true;
                    }
                }
            }
        });
        let base = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(base) => base,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "lockd instance {i} did not start listening; see {}",
                    log_path.display()
                ));
            }
        };
        self.instances.lock().expect("instances")[i] = Some(Instance {
            child,
            paused: false,
        });
        self.bases.write().expect("bases")[i] = Some(base);
        Ok(())
    }

    /// `kill -9` of instance `i`; it is down until [`Fleet::restart`].
    pub fn kill9(&self, i: usize) {
        self.bases.write().expect("bases")[i] = None;
        if let Some(mut instance) = self.instances.lock().expect("instances")[i].take() {
            let _ = instance.child.kill();
            let _ = instance.child.wait();
        }
    }

    /// Starts instance `i` again after a kill.
    pub fn restart(&self, i: usize) -> Result<(), String> {
        self.launch(i)
    }

    /// SIGSTOP (`true`) or SIGCONT (`false`) to instance `i`.
    pub fn pause(&self, i: usize, stop: bool) {
        let mut instances = self.instances.lock().expect("instances");
        if let Some(instance) = instances[i].as_mut() {
            let signal = if stop { libc::SIGSTOP } else { libc::SIGCONT };
            unsafe {
                libc::kill(instance.child.id() as libc::pid_t, signal);
            }
            instance.paused = stop;
        }
    }

    /// Resumes every paused instance and starts every killed one.
    pub fn heal(&self) -> Result<(), String> {
        for i in 0..self.len() {
            self.pause(i, false);
            if self.base(i).is_none() {
                self.restart(i)?;
            }
        }
        Ok(())
    }

    /// Kills every instance.
    pub fn stop(&self) {
        for i in 0..self.len() {
            self.pause(i, false);
            self.kill9(i);
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop();
    }
}
