//! Redis as a lock: `SET key owner NX PX ttl` to acquire, a Lua compare-and-delete to release
//! (the pattern Redis documents for a single-instance lock). Spoken in RESP over TCP. W7's
//! read/write lock is in `redis/read_write.rs`.

mod read_write;
mod resp;

use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use self::read_write::ReadWrite;
use self::resp::{Reply, RespConnection};
use crate::workload::{LockClient, LockMode, LockSystem};

const RELEASE_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// A semaphore in the manner of Redisson's `RPermitExpirableSemaphore`: the semaphore is a
/// sorted set of its permits (member: the holder, score: the lease's end in ms on Redis's
/// clock), and one Lua script drops the ended ones and takes a permit when fewer than the limit
/// are held (or extends the caller's own). No fencing token, as in Redisson. KEYS[1]: the
/// semaphore; ARGV: owner, limit, ttl (ms).
const ACQUIRE_PERMIT_SCRIPT: &str = "\
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if redis.call('zscore', KEYS[1], ARGV[1]) or redis.call('zcard', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('zadd', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('pexpire', KEYS[1], tonumber(ARGV[3]))
  return 1
end
return 0";

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
    conn: RespConnection,
    addr: String,
    owner: String,
    script_sha: String,
    permit_sha: String,
    /// W7's scripts and waiting, set up on first use.
    read_write: Option<ReadWrite>,
}

impl LockSystem for RedisSystem {
    type Client = RedisClient;

    async fn connect(&self, client: usize) -> io::Result<RedisClient> {
        let mut client = RedisClient {
            conn: RespConnection::connect(&self.addr).await?,
            addr: self.addr.clone(),
            owner: format!("bench-{client}-{}", Instant::now().elapsed().as_nanos()),
            script_sha: String::new(),
            permit_sha: String::new(),
            read_write: None,
        };
        match client
            .command(&["SCRIPT", "LOAD", ACQUIRE_PERMIT_SCRIPT])
            .await?
        {
            Reply::Bulk(Some(sha)) => {
                client.permit_sha = String::from_utf8_lossy(&sha).into_owned()
            }
            other => return Err(io::Error::other(format!("SCRIPT LOAD answered {other:?}"))),
        }
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

    async fn acquire_permit(&mut self, semaphore: &str, limit: u32) -> io::Result<bool> {
        let (sha, owner) = (self.permit_sha.clone(), self.owner.clone());
        let limit = limit.to_string();
        match self
            .command(&["EVALSHA", &sha, "1", semaphore, &owner, &limit, "30000"])
            .await?
        {
            Reply::Integer(n) => Ok(n == 1),
            other => Err(io::Error::other(format!("EVALSHA answered {other:?}"))),
        }
    }

    async fn release_permit(&mut self, semaphore: &str) -> io::Result<bool> {
        let owner = self.owner.clone();
        match self.command(&["ZREM", semaphore, &owner]).await? {
            Reply::Integer(n) => Ok(n == 1),
            other => Err(io::Error::other(format!("ZREM answered {other:?}"))),
        }
    }

    async fn acquire_in(
        &mut self,
        resource: &str,
        mode: LockMode,
        wait: Duration,
    ) -> io::Result<bool> {
        let (conn, owner, read_write) = self.read_write().await?;
        read_write.acquire(conn, resource, owner, mode, wait).await
    }

    async fn release_in(&mut self, resource: &str, mode: LockMode) -> io::Result<bool> {
        let (conn, owner, read_write) = self.read_write().await?;
        read_write.release(conn, resource, owner, mode).await
    }

    async fn status(&mut self, resource: &str) -> io::Result<bool> {
        match self.command(&["PTTL", resource]).await? {
            Reply::Integer(_) => Ok(true),
            other => Err(io::Error::other(format!("PTTL answered {other:?}"))),
        }
    }
}

impl RedisClient {
    async fn command(&mut self, args: &[&str]) -> io::Result<Reply> {
        self.conn.command(args).await
    }

    /// The connection, the owner and W7's scripts (loaded on first use).
    async fn read_write(&mut self) -> io::Result<(&mut RespConnection, &str, &mut ReadWrite)> {
        if self.read_write.is_none() {
            let loaded = ReadWrite::load(&mut self.conn, &self.addr).await?;
            self.read_write = Some(loaded);
        }
        let read_write = self.read_write.as_mut().expect("loaded just now");
        Ok((&mut self.conn, &self.owner, read_write))
    }
}
