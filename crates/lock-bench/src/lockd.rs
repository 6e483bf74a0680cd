//! lockd as a benchmarked system: started from the release build, driven over HTTP/1.1
//! keep-alive with the same requests a client library would send.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::http::HttpConnection;
use crate::stats::RunStats;

/// A lockd process, killed when dropped.
pub struct Lockd {
    child: Child,
    pub addr: String,
}

impl Lockd {
    /// Starts `binary` on `database_url` with extra flags and waits until it listens.
    pub fn start(binary: &Path, database_url: &str, extra: &[&str]) -> std::io::Result<Self> {
        let mut child = Command::new(binary)
            .args([
                "--bind",
                "127.0.0.1:0",
                "--database-url",
                database_url,
                "--log",
                "warn",
            ])
            .args(extra)
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

    /// The server's resident memory, in KiB (Linux `/proc`).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
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

fn body(owner: &str, ttl: u32) -> Vec<u8> {
    format!(r#"{{"owner":"{owner}","ttl_seconds":{ttl}}}"#).into_bytes()
}

/// W1: every client acquires and releases its own resource, as fast as it can.
pub async fn uncontended(addr: &str, clients: usize, duration: Duration, tag: &str) -> RunStats {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (addr, tag) = (addr.to_owned(), tag.to_owned());
            tokio::spawn(async move {
                let mut stats = RunStats::default();
                let Ok(mut conn) = HttpConnection::connect(&addr).await else {
                    stats.errors += 1;
                    return stats;
                };
                let owner = format!("bench-{client}");
                let path = format!("/locks/{tag}-{client}");
                let release = format!("{path}?owner={owner}");
                let acquire_body = body(&owner, 30);
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    let granted = match conn.request("POST", &path, Some(&acquire_body)).await {
                        Ok(answer) => answer.status == 200 && answer.body.starts_with(br#"{"acquired":true"#),
                        Err(_) => false,
                    };
                    stats.latencies_us.push(sent.elapsed().as_micros().min(u32::MAX as u128) as u32);
                    let released = granted
                        && matches!(conn.request("DELETE", &release, None).await, Ok(answer) if answer.status == 204);
                    if released {
                        stats.operations += 1;
                    } else {
                        stats.errors += 1;
                        if let Ok(fresh) = HttpConnection::connect(&addr).await {
                            conn = fresh;
                        }
                    }
                }
                stats
            })
        })
        .collect();
    let mut runs = Vec::new();
    for task in tasks {
        runs.push(task.await.unwrap_or_default());
    }
    let mut stats = RunStats::merge(runs);
    stats.elapsed = started.elapsed();
    stats
}

/// W2: every client competes for one resource; a granted client releases at once. Counts grants
/// per client for fairness.
pub async fn contended(addr: &str, clients: usize, duration: Duration, tag: &str) -> RunStats {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let path = format!("/locks/{tag}-hot");
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (addr, path) = (addr.to_owned(), path.clone());
            tokio::spawn(async move {
                let mut stats = RunStats::default();
                let mut grants = 0;
                let Ok(mut conn) = HttpConnection::connect(&addr).await else {
                    stats.errors += 1;
                    stats.per_client.push(0);
                    return stats;
                };
                let owner = format!("bench-{client}");
                let release = format!("{path}?owner={owner}");
                let acquire_body = body(&owner, 30);
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    match conn.request("POST", &path, Some(&acquire_body)).await {
                        Ok(answer) if answer.status == 200 => {
                            stats
                                .latencies_us
                                .push(sent.elapsed().as_micros().min(u32::MAX as u128) as u32);
                            if answer.body.starts_with(br#"{"acquired":true"#) {
                                match conn.request("DELETE", &release, None).await {
                                    Ok(answer) if answer.status == 204 => {
                                        grants += 1;
                                        stats.operations += 1;
                                    }
                                    _ => stats.errors += 1,
                                }
                            }
                        }
                        _ => stats.errors += 1,
                    }
                }
                stats.per_client.push(grants);
                stats
            })
        })
        .collect();
    let mut runs = Vec::new();
    for task in tasks {
        runs.push(task.await.unwrap_or_default());
    }
    let mut stats = RunStats::merge(runs);
    stats.elapsed = started.elapsed();
    stats
}
