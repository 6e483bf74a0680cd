//! Redis as a lock: `SET key owner NX PX ttl` to acquire, a Lua compare-and-delete to release
//! (the pattern Redis documents for a single-instance lock). Spoken in RESP over TCP.

use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::workload::{LockClient, LockSystem};

const RELEASE_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// A redis-server started for the benchmark, killed when dropped.
pub struct RedisServer {
    child: Child,
    pub addr: String,
}

impl RedisServer {
    /// Starts redis-server on a free port; with `fsync_always`, every write is appended to the
    /// AOF and fsynced before the answer (`appendfsync always`), else nothing is persisted.
    pub fn start(dir: &Path, fsync_always: bool) -> io::Result<Self> {
        let port = crate::process::free_port()?;
        let mut command = Command::new("redis-server");
        command
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if fsync_always {
            command.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            command.args(["--appendonly", "no"]);
        }
        let child = command.spawn()?;
        let addr = format!("127.0.0.1:{port}");
        crate::process::wait_for_port(&addr, Duration::from_secs(10))?;
        Ok(Self { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct RedisSystem {
    pub addr: String,
}

pub struct RedisClient {
    stream: TcpStream,
    owner: String,
    script_sha: String,
    buffer: Vec<u8>,
}

impl LockSystem for RedisSystem {
    type Client = RedisClient;

    async fn connect(&self, client: usize) -> io::Result<RedisClient> {
        let stream = TcpStream::connect(&self.addr).await?;
        stream.set_nodelay(true)?;
        let mut client = RedisClient {
            stream,
            owner: format!("bench-{client}-{}", Instant::now().elapsed().as_nanos()),
            script_sha: String::new(),
            buffer: Vec::new(),
        };
        match client.command(&["SCRIPT", "LOAD", RELEASE_SCRIPT]).await? {
            Reply::Bulk(Some(sha)) => {
                client.script_sha = String::from_utf8_lossy(&sha).into_owned()
            }
            other => return Err(io::Error::other(format!("SCRIPT LOAD answered {other:?}"))),
        }
        Ok(client)
    }
}

impl LockClient for RedisClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        let owner = self.owner.clone();
        match self
            .command(&["SET", resource, &owner, "NX", "PX", "30000"])
            .await?
        {
            Reply::Simple(ok) if ok == "OK" => Ok(true),
            Reply::Bulk(None) => Ok(false),
            other => Err(io::Error::other(format!("SET answered {other:?}"))),
        }
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        let (sha, owner) = (self.script_sha.clone(), self.owner.clone());
        match self
            .command(&["EVALSHA", &sha, "1", resource, &owner])
            .await?
        {
            Reply::Integer(n) => Ok(n == 1),
            other => Err(io::Error::other(format!("EVALSHA answered {other:?}"))),
        }
    }

    async fn status(&mut self, resource: &str) -> io::Result<bool> {
        match self.command(&["PTTL", resource]).await? {
            Reply::Integer(_) => Ok(true),
            other => Err(io::Error::other(format!("PTTL answered {other:?}"))),
        }
    }
}

#[derive(Debug)]
enum Reply {
    Simple(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
}

impl RedisClient {
    async fn command(&mut self, args: &[&str]) -> io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&out).await?;
        loop {
            if let Some((reply, used)) = parse(&self.buffer)? {
                self.buffer.drain(..used);
                return Ok(reply);
            }
            let mut chunk = [0u8; 4096];
            let read = self.stream.read(&mut chunk).await?;
            if read == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "redis closed"));
            }
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }
}

/// One complete RESP reply at the start of `buffer`, and its length.
fn parse(buffer: &[u8]) -> io::Result<Option<(Reply, usize)>> {
    let Some(line_end) = buffer.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = std::str::from_utf8(&buffer[1..line_end]).map_err(io::Error::other)?;
    let after = line_end + 2;
    match buffer.first() {
        Some(b'+') => Ok(Some((Reply::Simple(line.to_owned()), after))),
        Some(b'-') => Err(io::Error::other(format!("redis error: {line}"))),
        Some(b':') => Ok(Some((
            Reply::Integer(line.parse().map_err(io::Error::other)?),
            after,
        ))),
        Some(b'$') => {
            let length: i64 = line.parse().map_err(io::Error::other)?;
            if length < 0 {
                return Ok(Some((Reply::Bulk(None), after)));
            }
            let end = after + length as usize;
            if buffer.len() < end + 2 {
                return Ok(None);
            }
            Ok(Some((
                Reply::Bulk(Some(buffer[after..end].to_vec())),
                end + 2,
            )))
        }
        _ => Err(io::Error::other("unexpected RESP reply")),
    }
}
