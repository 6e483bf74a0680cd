//! W7 on Redis: a read/write lock in the manner of Redisson's `RReadWriteLock`, written for this
//! benchmark. The lock is one hash: a `mode` field (`read` or `write`) and a field per holder;
//! a reader's field holds the end of its own lease (ms on Redis's clock), and the hash expires
//! with the last lease (the writer's, or the latest reader's). Each operation is one Lua script.
//! A release that frees the lock publishes on the lock's channel; an acquire that may wait tries,
//! and once refused subscribes to that channel and tries again on each message (or when the
//! holders' remaining lease has passed) until its wait is over, as Redisson's
//! `tryLock(wait, lease)` does. No fencing token,
//! and, as in Redisson, no preference for waiting writers: readers keep coming in while one
//! waits.

use std::io;
use std::time::{Duration, Instant};

use super::resp::{Reply, RespConnection};
use crate::workload::LockMode;

/// Takes a shared lease unless a writer holds the lock. KEYS[1]: the lock; ARGV: owner, ttl
/// (ms). 0 when granted, else the writer's remaining lease in ms (at least 1).
const ACQUIRE_SHARED: &str = "\
if redis.call('hget', KEYS[1], 'mode') == 'write' then
  return math.max(redis.call('pttl', KEYS[1]), 1)
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('hset', KEYS[1], 'mode', 'read', ARGV[1], now + tonumber(ARGV[2]))
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0";

/// Takes the lock exclusively when no one holds it (or extends the caller's own write lease).
/// KEYS[1]: the lock; ARGV: owner, ttl (ms). 0 when granted, else the holders' remaining lease.
const ACQUIRE_EXCLUSIVE: &str = "\
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[1]) == 1) then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[1], 'write')
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
return math.max(redis.call('pttl', KEYS[1]), 1)";

/// Ends the caller's shared lease; drops the readers whose leases have ended; the lock expires
/// with the latest lease left, or is deleted (and its freeing published) when none is left.
/// KEYS[1]: the lock, KEYS[2]: its channel; ARGV: owner. 1 when released.
const RELEASE_SHARED: &str = "\
if redis.call('hget', KEYS[1], 'mode') ~= 'read' or redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = 0
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] ~= 'mode' then
    local ends = tonumber(fields[i + 1])
    if ends > now then last = math.max(last, ends) else redis.call('hdel', KEYS[1], fields[i]) end
  end
end
if last == 0 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], 'free')
else
  redis.call('pexpire', KEYS[1], last - now)
end
return 1";

/// Ends the caller's write lease and publishes that the lock is free. KEYS[1]: the lock,
/// KEYS[2]: its channel; ARGV: owner. 1 when released.
const RELEASE_EXCLUSIVE: &str = "\
if redis.call('hget', KEYS[1], 'mode') == 'write' and redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], 'free')
  return 1
end
return 0";

/// The lease every W7 grant asks for, in ms.
const TTL_MS: &str = "30000";

/// A client's read/write scripts and, once it has waited, its subscription.
pub(super) struct ReadWrite {
    addr: String,
    /// The SHA1s of [`ACQUIRE_SHARED`], [`ACQUIRE_EXCLUSIVE`], [`RELEASE_SHARED`] and
    /// [`RELEASE_EXCLUSIVE`].
    shas: [String; 4],
    /// A second connection, subscribed to the channels of the locks this client waited for.
    subscriber: Option<(RespConnection, Vec<String>)>,
}

impl ReadWrite {
    /// Loads the scripts through `conn`; `addr` is where a subscription connects later.
    pub async fn load(conn: &mut RespConnection, addr: &str) -> io::Result<Self> {
        let mut shas = Vec::new();
        for script in [
            ACQUIRE_SHARED,
            ACQUIRE_EXCLUSIVE,
            RELEASE_SHARED,
            RELEASE_EXCLUSIVE,
        ] {
            match conn.command(&["SCRIPT", "LOAD", script]).await? {
                Reply::Bulk(Some(sha)) => shas.push(String::from_utf8_lossy(&sha).into_owned()),
                other => return Err(io::Error::other(format!("SCRIPT LOAD answered {other:?}"))),
            }
        }
        Ok(Self {
            addr: addr.to_owned(),
            shas: shas
                .try_into()
                .map_err(|_| io::Error::other("four scripts"))?,
            subscriber: None,
        })
    }

    /// Takes `lock` in `mode` for `owner`, waiting up to `wait` for a release to free it.
    pub async fn acquire(
        &mut self,
        conn: &mut RespConnection,
        lock: &str,
        owner: &str,
        mode: LockMode,
        wait: Duration,
    ) -> io::Result<bool> {
        let deadline = Instant::now() + wait;
        let sha = match mode {
            LockMode::Shared => self.shas[0].clone(),
            LockMode::Exclusive => self.shas[1].clone(),
        };
        if try_once(conn, &sha, lock, owner).await? == 0 {
            return Ok(true);
        }
        if wait.is_zero() {
            return Ok(false);
        }
        // Refused: listen for releases, then try again (a release between the two tries is
        // seen by the second); what was heard before is old news.
        let channel = channel(lock);
        self.subscribe(&channel).await?.discard_received()?;
        loop {
            let remaining_ms = try_once(conn, &sha, lock, owner).await?;
            if remaining_ms == 0 {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let lease_left = Duration::from_millis(remaining_ms.unsigned_abs());
            let listening = self.subscribe(&channel).await?;
            // A message, or the end of the wait or of the holders' lease: try again.
            let _ = tokio::time::timeout(left.min(lease_left), listening.reply()).await;
        }
    }

    /// Releases `owner`'s lease of `lock`, taken in `mode`.
    pub async fn release(
        &mut self,
        conn: &mut RespConnection,
        lock: &str,
        owner: &str,
        mode: LockMode,
    ) -> io::Result<bool> {
        let sha = match mode {
            LockMode::Shared => &self.shas[2],
            LockMode::Exclusive => &self.shas[3],
        };
        match conn
            .command(&["EVALSHA", sha, "2", lock, &channel(lock), owner])
            .await?
        {
            Reply::Integer(n) => Ok(n == 1),
            other => Err(io::Error::other(format!("EVALSHA answered {other:?}"))),
        }
    }

    /// The subscription connection, subscribed to `channel`.
    async fn subscribe(&mut self, channel: &str) -> io::Result<&mut RespConnection> {
        if self.subscriber.is_none() {
            let conn = RespConnection::connect(&self.addr).await?;
            self.subscriber = Some((conn, Vec::new()));
        }
        let (conn, channels) = self.subscriber.as_mut().expect("connected just now");
        if !channels.iter().any(|c| c == channel) {
            match conn.command(&["SUBSCRIBE", channel]).await? {
                Reply::Array(items) if !items.is_empty() => channels.push(channel.to_owned()),
                other => return Err(io::Error::other(format!("SUBSCRIBE answered {other:?}"))),
            }
        }
        Ok(conn)
    }
}

/// One run of the acquire script `sha`: 0 when granted, else the holders' remaining lease in ms.
async fn try_once(
    conn: &mut RespConnection,
    sha: &str,
    lock: &str,
    owner: &str,
) -> io::Result<i64> {
    match conn
        .command(&["EVALSHA", sha, "1", lock, owner, TTL_MS])
        .await?
    {
        Reply::Integer(remaining_ms) => Ok(remaining_ms),
        other => Err(io::Error::other(format!("EVALSHA answered {other:?}"))),
    }
}

/// Where the freeing of `lock` is published.
fn channel(lock: &str) -> String {
    format!("{lock}:rwlock-free")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::redis::{RedisServer, RedisSystem};
    use crate::workload::{LockClient, LockMode, LockSystem};

    /// Readers share the lock and hold off a writer until the last of them has released; a
    /// writer holds off readers; a waiting writer does not hold off a reader (as in Redisson)
    /// and is woken by the release that frees the lock. Skipped without redis-server.
    #[test]
    fn readers_share_and_a_waiting_writer_is_woken() {
        let dir = std::env::temp_dir().join(format!("lock-bench-rw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let Ok(server) = RedisServer::start(&dir, false) else {
            eprintln!("!!! redis-server could not start: test skipped");
            return;
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let system = RedisSystem {
                addr: server.addr.clone(),
            };
            let (shared, exclusive, now) = (LockMode::Shared, LockMode::Exclusive, Duration::ZERO);
            let mut alice = system.connect(0).await.expect("connect");
            let mut bob = system.connect(1).await.expect("connect");
            let mut carol = system.connect(2).await.expect("connect");
            assert!(alice.acquire_in("r", shared, now).await.unwrap());
            assert!(
                bob.acquire_in("r", shared, now).await.unwrap(),
                "readers share"
            );
            assert!(!carol.acquire_in("r", exclusive, now).await.unwrap());
            assert!(alice.release_in("r", shared).await.unwrap());
            assert!(
                !carol.acquire_in("r", exclusive, now).await.unwrap(),
                "bob reads"
            );
            assert!(bob.release_in("r", shared).await.unwrap());
            assert!(!bob.release_in("r", shared).await.unwrap(), "released");
            assert!(carol.acquire_in("r", exclusive, now).await.unwrap());
            assert!(
                !alice.acquire_in("r", shared, now).await.unwrap(),
                "carol writes"
            );
            assert!(
                !alice.release_in("r", exclusive).await.unwrap(),
                "not alice's"
            );
            assert!(carol.release_in("r", exclusive).await.unwrap());
            assert!(alice.acquire_in("r", shared, now).await.unwrap());
            let (waited, ()) = tokio::join!(
                carol.acquire_in("r", exclusive, Duration::from_secs(5)),
                async {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    assert!(
                        bob.acquire_in("r", shared, now).await.unwrap(),
                        "no preference"
                    );
                    assert!(alice.release_in("r", shared).await.unwrap());
                    assert!(bob.release_in("r", shared).await.unwrap());
                }
            );
            assert!(waited.unwrap(), "the last release woke the writer");
        });
        drop(server);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
