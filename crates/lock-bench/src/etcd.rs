//! etcd as a lock, through its v3 JSON gateway, the way its own `etcdctl lock` works: grant a
//! lease, lock with it, unlock, revoke the lease. etcd's lock call waits until the lock is free.

use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::http::HttpConnection;
use crate::workload::{LockClient, LockSystem};

/// An etcd server started for the benchmark (single member, data in `dir`), killed when dropped.
pub struct EtcdServer {
    child: Child,
    pub addr: String,
}

impl EtcdServer {
    pub fn start(dir: &Path) -> io::Result<Self> {
        let (client_port, peer_port) = (crate::process::free_port()?, crate::process::free_port()?);
        let client = format!("http://127.0.0.1:{client_port}");
        let peer = format!("http://127.0.0.1:{peer_port}");
        let child = Command::new("etcd")
            .args(["--name", "bench"])
            .arg("--data-dir")
            .arg(dir.join("etcd"))
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args([
                "--initial-cluster",
                &format!("bench={peer}"),
                "--log-level",
                "error",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let addr = format!("127.0.0.1:{client_port}");
        crate::process::wait_for_port(&addr, Duration::from_secs(20))?;
        Ok(Self { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct EtcdSystem {
    pub addr: String,
}

pub struct EtcdClient {
    conn: HttpConnection,
    lease: Option<String>,
    key: Option<String>,
}

impl LockSystem for EtcdSystem {
    type Client = EtcdClient;

    async fn connect(&self, _client: usize) -> io::Result<EtcdClient> {
        Ok(EtcdClient {
            conn: HttpConnection::connect(&self.addr).await?,
            lease: None,
            key: None,
        })
    }
}

impl EtcdClient {
    async fn call(&mut self, path: &str, body: Value) -> io::Result<Value> {
        let answer = self
            .conn
            .request("POST", path, Some(body.to_string().as_bytes()))
            .await?;
        if answer.status != 200 {
            return Err(io::Error::other(format!(
                "{path} answered {}",
                answer.status
            )));
        }
        serde_json::from_slice(&answer.body).map_err(io::Error::other)
    }
}

impl LockClient for EtcdClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        let lease = self.call("/v3/lease/grant", json!({"TTL": 30})).await?;
        let id = lease["ID"]
            .as_str()
            .ok_or_else(|| io::Error::other("no lease ID"))?
            .to_owned();
        let locked = self
            .call(
                "/v3/lock/lock",
                json!({"name": base64(resource.as_bytes()), "lease": id}),
            )
            .await?;
        let key = locked["key"]
            .as_str()
            .ok_or_else(|| io::Error::other("no lock key"))?
            .to_owned();
        self.lease = Some(id);
        self.key = Some(key);
        Ok(true)
    }

    async fn release(&mut self, _resource: &str) -> io::Result<bool> {
        let (Some(key), Some(lease)) = (self.key.take(), self.lease.take()) else {
            return Ok(false);
        };
        self.call("/v3/lock/unlock", json!({"key": key})).await?;
        self.call("/v3/lease/revoke", json!({"ID": lease})).await?;
        Ok(true)
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc_4648() {
        for (raw, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(raw.as_bytes()), encoded);
        }
    }
}
