//! Fence checks: is a fencing token a live holder's right now, as the lock server sees it? For a
//! resource that cannot store tokens and asks before each write it protects (docs/fencing.md).

use serde::Deserialize;

use crate::client::{lock_path, unexpected};
use crate::permits::semaphore_path;
use crate::{ClientError, Lease, LockClient, Permit};

/// The server's verdict on a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fence<H> {
    /// The token is a live holder's: that holder's lease (or grant).
    Valid(H),
    /// No live lease has the token. `current` is the newest live holder's token, or `None` when
    /// no one holds the lock or semaphore.
    Stale { current: Option<i64> },
}

impl<H> Fence<H> {
    /// Whether the token was a live holder's.
    pub fn is_valid(&self) -> bool {
        matches!(self, Fence::Valid(_))
    }
}

#[derive(Deserialize)]
struct Body<H> {
    valid: bool,
    #[serde(alias = "permit")]
    lock: Option<H>,
    #[serde(default)]
    current: Option<i64>,
}

impl LockClient {
    /// Whether `token` is the fencing token of a live lease on lock `resource` right now (for a
    /// shared lock, any live holder's).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (422 for a token that is not
    /// positive).
    pub fn check_fence(&self, resource: &str, token: i64) -> Result<Fence<Lease>, ClientError> {
        self.fence(&lock_path(resource), token)
    }

    /// Whether `token` is the fencing token of a live grant of semaphore `name` right now.
    ///
    /// # Errors
    /// As [`LockClient::check_fence`].
    pub fn check_permit_fence(&self, name: &str, token: i64) -> Result<Fence<Permit>, ClientError> {
        self.fence(&semaphore_path(name), token)
    }

    fn fence<H: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        token: i64,
    ) -> Result<Fence<H>, ClientError> {
        let path = format!("{path}/fence?token={token}");
        let (status, text) = self.exchange("GET", &path, None, self.request_timeout())?;
        let body: Body<H> = match serde_json::from_str(&text) {
            Ok(body) if status == 200 => body,
            _ => return Err(unexpected(status, text)),
        };
        match (body.valid, body.lock) {
            (true, Some(holder)) => Ok(Fence::Valid(holder)),
            (false, _) => Ok(Fence::Stale {
                current: body.current,
            }),
            (true, None) => Err(unexpected(status, text)),
        }
    }
}
