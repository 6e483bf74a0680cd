//! The semaphore operations of the client: acquire, renew and release permits.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::client::{read_text, retry_after, segment, unexpected};
use crate::{ClientError, LockClient, Released};

/// One holder's grant on a semaphore, as the server describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Permit {
    pub name: String,
    pub owner: String,
    pub permits: u32,
    pub limit: u32,
    pub acquired_at: String,
    pub expires_at: String,
    /// This grant's own token, larger than every token issued before it; pass it downstream.
    pub fencing_token: i64,
    /// The value stored with the grant, when one was set.
    #[serde(default)]
    pub value: Option<serde_json::Value>,
}

/// The answer to an acquire of permits.
#[derive(Debug, Clone, PartialEq)]
pub enum PermitsAcquired {
    /// The caller holds the permits.
    Granted(Permit),
    /// Too few permits were free (after the wait, if one was asked for): `available` of the
    /// limit were. `retry_after_seconds` is the server's `Retry-After` hint, when it gave one.
    Unavailable {
        available: u64,
        retry_after_seconds: Option<u64>,
    },
}

/// The answer to a renew of permits.
#[derive(Debug, Clone, PartialEq)]
pub enum PermitsRenewed {
    /// The grant now runs `ttl` from the server's now; permits, token and `acquired_at` kept.
    Renewed(Permit),
    /// The caller holds no live permit (404): the grant was lost (expired, released, undone).
    NotFound,
}

#[derive(Deserialize)]
struct AcquireBody {
    acquired: bool,
    permit: Option<Permit>,
    available: Option<u64>,
}

pub(crate) fn semaphore_path(name: &str) -> String {
    format!("/semaphores/{}", segment(name))
}

impl LockClient {
    /// Acquires `permits` of semaphore `name` (of `limit`) for `owner` for `ttl_seconds`,
    /// asking the server to hold the request up to `wait_seconds` (sent only when not 0).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer: a 409 (another limit than
    /// the live holders', or other permits than the owner's grant) is a
    /// [`ClientError::Problem`].
    pub fn acquire_permits(
        &self,
        name: &str,
        owner: &str,
        ttl_seconds: u32,
        limit: u32,
        permits: u32,
        wait_seconds: u64,
    ) -> Result<PermitsAcquired, ClientError> {
        let mut body = json!({
            "owner": owner,
            "ttl_seconds": ttl_seconds,
            "limit": limit,
            "permits": permits,
        });
        if wait_seconds > 0 {
            body["wait_seconds"] = json!(wait_seconds);
        }
        self.acquire_permits_sending(name, &body, wait_seconds)
    }

    /// Sends the acquire `body` of semaphore `name`, which may wait `wait_seconds`, and reads
    /// its answer.
    pub(crate) fn acquire_permits_sending(
        &self,
        name: &str,
        body: &serde_json::Value,
        wait_seconds: u64,
    ) -> Result<PermitsAcquired, ClientError> {
        let timeout = self.request_timeout() + Duration::from_secs(wait_seconds);
        let response = self.send("POST", &semaphore_path(name), Some(body), timeout)?;
        let status = response.status();
        let retry_after_seconds = retry_after(&response);
        let text = read_text(response)?;
        if status != 200 {
            return Err(unexpected(status, text));
        }
        match serde_json::from_str::<AcquireBody>(&text) {
            Ok(AcquireBody {
                acquired: true,
                permit: Some(permit),
                ..
            }) => Ok(PermitsAcquired::Granted(permit)),
            Ok(AcquireBody {
                acquired: false,
                available: Some(available),
                ..
            }) => Ok(PermitsAcquired::Unavailable {
                available,
                retry_after_seconds,
            }),
            _ => Err(unexpected(status, text)),
        }
    }

    /// Renews `owner`'s grant on semaphore `name` for `ttl_seconds` from the server's now,
    /// giving up after `timeout`.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 404.
    pub fn renew_permits_within(
        &self,
        name: &str,
        owner: &str,
        ttl_seconds: u32,
        timeout: Duration,
    ) -> Result<PermitsRenewed, ClientError> {
        let body = json!({"owner": owner, "ttl_seconds": ttl_seconds});
        let path = format!("{}/renew", semaphore_path(name));
        match self.exchange("POST", &path, Some(&body), timeout) {
            Ok((200, text)) => serde_json::from_str(&text)
                .map(PermitsRenewed::Renewed)
                .map_err(|_| unexpected(200, text)),
            Err(ClientError::Problem(problem)) if problem.status == 404 => {
                Ok(PermitsRenewed::NotFound)
            }
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Releases `owner`'s grant on semaphore `name`, giving up after `timeout`: `Released`, or
    /// `NotFound` when the owner holds no live permit (never `Forbidden`: other holders are no
    /// conflict).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 404.
    pub fn release_permits_within(
        &self,
        name: &str,
        owner: &str,
        timeout: Duration,
    ) -> Result<Released, ClientError> {
        let body = json!({"owner": owner});
        match self.exchange("DELETE", &semaphore_path(name), Some(&body), timeout) {
            Ok((204, _)) => Ok(Released::Released),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Released::NotFound),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semaphore_names_are_one_escaped_segment() {
        assert_eq!(semaphore_path("export"), "/semaphores/export");
        assert_eq!(semaphore_path("a/b c"), "/semaphores/a%2Fb%20c");
    }
}
