//! lockd as a benchmarked system: started from the release build, driven over HTTP/1.1
//! keep-alive with the same requests a client library would send.

pub mod session;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::http::HttpConnection;
use crate::workload::{LockClient, LockMode, LockSystem};

/// A lockd process, killed when dropped.
pub struct Lockd {
    child: Child,
    pub addr: String,
}

impl Lockd {
    /// Starts `binary` on `database_url` with extra flags and waits until it listens.
    pub fn start(binary: &Path, database_url: &str, extra: &[&str]) -> std::io::Result<Self> {
        let mut command = Command::new(binary);
        command
            .args(["--bind", "127.0.0.1:0", "--database-url", database_url])
            .args(extra);
        Self::spawn(command)
    }

    /// Starts the HTTP ceiling server (this benchmark binary, serving fixed answers).
    pub fn start_ceiling() -> std::io::Result<Self> {
        let mut command = Command::new(std::env::current_exe()?);
        command.arg(crate::ceiling::SERVE_FLAG);
        Self::spawn(command)
    }

    /// Spawns a server that prints `listening on http://ADDR` on stderr, and waits for that line.
    fn spawn(mut command: Command) -> std::io::Result<Self> {
        let mut child = command
            // lockd's defaults, but for the log level: at the default (info) the audit log writes
            // a line per grant and release; `--lockd-args "--log info"` measures with it on.
            .env("LOCKD_LOG", "warn")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let addr = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(url) = line.strip_prefix("listening on http://") {
                        break url.trim().to_owned();
                    }
                }
                _ => {
                    let _ = child.kill();
                    return Err(std::io::Error::other("lockd exited before listening"));
                }
            }
        };
        // Keep draining stderr so lockd never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(Self { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Lockd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn release_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("target/release/lockd")
}

/// lockd over HTTP/1.1 keep-alive.
pub struct LockdSystem {
    pub addr: String,
}

pub struct LockdClient {
    conn: HttpConnection,
    owner: String,
    acquire_body: Vec<u8>,
    /// W6's acquire body (the limit is the same for every semaphore of a run).
    permit_body: Option<Vec<u8>>,
}

impl LockSystem for LockdSystem {
    type Client = LockdClient;

    async fn connect(&self, client: usize) -> std::io::Result<LockdClient> {
        let owner = format!("bench-{client}");
        Ok(LockdClient {
            conn: HttpConnection::connect(&self.addr).await?,
            acquire_body: format!(r#"{{"owner":"{owner}","ttl_seconds":30}}"#).into_bytes(),
            permit_body: None,
            owner,
        })
    }
}

impl LockClient for LockdClient {
    async fn acquire(&mut self, resource: &str) -> std::io::Result<bool> {
        let answer = self
            .conn
            .request(
                "POST",
                &format!("/locks/{resource}"),
                Some(&self.acquire_body),
            )
            .await?;
        match answer.status {
            200 => Ok(answer.body.starts_with(br#"{"acquired":true"#)),
            status => Err(std::io::Error::other(format!("acquire answered {status}"))),
        }
    }

    async fn release(&mut self, resource: &str) -> std::io::Result<bool> {
        let path = format!("/locks/{resource}?owner={}", self.owner);
        Ok(self.conn.request("DELETE", &path, None).await?.status == 204)
    }

    async fn acquire_permit(&mut self, semaphore: &str, limit: u32) -> std::io::Result<bool> {
        let owner = &self.owner;
        let body = self.permit_body.get_or_insert_with(|| {
            format!(r#"{{"owner":"{owner}","ttl_seconds":30,"limit":{limit}}}"#).into_bytes()
        });
        let answer = self
            .conn
            .request("POST", &format!("/semaphores/{semaphore}"), Some(body))
            .await?;
        match answer.status {
            200 => Ok(answer.body.starts_with(br#"{"acquired":true"#)),
            status => Err(std::io::Error::other(format!(
                "semaphore acquire answered {status}"
            ))),
        }
    }

    async fn release_permit(&mut self, semaphore: &str) -> std::io::Result<bool> {
        let path = format!("/semaphores/{semaphore}?owner={}", self.owner);
        Ok(self.conn.request("DELETE", &path, None).await?.status == 204)
    }

    async fn acquire_in(
        &mut self,
        resource: &str,
        mode: LockMode,
        wait: std::time::Duration,
    ) -> std::io::Result<bool> {
        let mode = match mode {
            LockMode::Shared => "shared",
            LockMode::Exclusive => "exclusive",
        };
        let wait = match wait.as_secs() {
            0 => String::new(),
            seconds => format!(r#","wait_seconds":{seconds}"#),
        };
        let body = format!(
            r#"{{"owner":"{}","ttl_seconds":30,"mode":"{mode}"{wait}}}"#,
            self.owner
        );
        let answer = self
            .conn
            .request("POST", &format!("/locks/{resource}"), Some(body.as_bytes()))
            .await?;
        match answer.status {
            200 => Ok(answer.body.starts_with(br#"{"acquired":true"#)),
            status => Err(std::io::Error::other(format!(
                "{mode} acquire answered {status}"
            ))),
        }
    }

    /// lockd releases a lease of either mode with the same request.
    async fn release_in(&mut self, resource: &str, _: LockMode) -> std::io::Result<bool> {
        self.release(resource).await
    }

    async fn status(&mut self, resource: &str) -> std::io::Result<bool> {
        Ok(self
            .conn
            .request("GET", &format!("/locks/{resource}"), None)
            .await?
            .status
            == 200)
    }
}
