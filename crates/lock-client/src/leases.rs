//! Leases in either mode and with a value: acquire and renew with them, and the status of a lock
//! however it is held.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::client::{lock_path, read_text, retry_after, unexpected};
use crate::{Acquired, ClientError, Lease, LockClient, Mode, Renewed};

/// What an acquire asks for besides its owner and lease length. The default is v1's acquire:
/// exclusive, answered at once, no value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcquireOptions {
    /// The mode to hold the lock in (sent only when `Shared`).
    pub mode: Mode,
    /// How long the server may hold the request until the lock is granted (sent only when not
    /// 0); the request's timeout grows by as much.
    pub wait_seconds: u64,
    /// Stored with the lease: any JSON value whose compact text is at most 4096 bytes. `None`
    /// keeps the value of a lease the owner holds already (a re-grant) and sets none on a new one.
    pub value: Option<Value>,
}

impl AcquireOptions {
    /// A shared (read) lease, answered at once, no value.
    pub fn shared() -> Self {
        Self {
            mode: Mode::Shared,
            ..Self::default()
        }
    }

    /// The same options, waiting up to `seconds` for the lock.
    #[must_use]
    pub fn waiting(mut self, seconds: u64) -> Self {
        self.wait_seconds = seconds;
        self
    }

    /// The same options, storing `value` with the lease.
    #[must_use]
    pub fn with_value(mut self, value: Value) -> Self {
        self.value = Some(value);
        self
    }
}

/// How a lock is held, as `GET /locks/{resource}` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockStatus {
    /// One holder, in exclusive mode.
    Exclusive(Lease),
    /// Shared holders, each with its own lease and token, in fencing-token order.
    Shared {
        resource: String,
        holders: Vec<Lease>,
    },
}

#[derive(Deserialize)]
struct AcquireBody {
    acquired: bool,
    lock: Option<Lease>,
}

#[derive(Deserialize)]
struct SharedBody {
    resource: String,
    mode: Mode,
    holders: Vec<Lease>,
}

impl LockClient {
    /// Acquires `resource` for `owner` for `ttl_seconds` in `options.mode`, with its wait and
    /// value. [`LockClient::acquire_waiting`] is this with the default mode and no value.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer: a 409
    /// (`/problems/mode-mismatch`, the owner holds the lock in the other mode; nothing changed)
    /// or a 422 (a value over 4096 bytes: `value`, `too_long`) is a [`ClientError::Problem`].
    pub fn acquire_with(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
        options: &AcquireOptions,
    ) -> Result<Acquired, ClientError> {
        let body = acquire_body(owner, ttl_seconds, options);
        self.acquire_sending(resource, &body, options.wait_seconds)
    }

    /// Sends the acquire `body` of `resource`, which may wait `wait_seconds`, and reads its
    /// answer.
    pub(crate) fn acquire_sending(
        &self,
        resource: &str,
        body: &Value,
        wait_seconds: u64,
    ) -> Result<Acquired, ClientError> {
        let timeout = self.request_timeout() + Duration::from_secs(wait_seconds);
        let response = self.send("POST", &lock_path(resource), Some(body), timeout)?;
        let status = response.status();
        let retry_after_seconds = retry_after(&response);
        let text = read_text(response)?;
        if status != 200 {
            return Err(unexpected(status, text));
        }
        parse_acquired(text, retry_after_seconds)
    }

    /// Renews `owner`'s lease (in either mode) for `ttl_seconds` from the server's now;
    /// `Some(value)` replaces its value, `None` keeps it (as [`LockClient::renew`]).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 403/404 (a value
    /// over 4096 bytes is a 422 [`ClientError::Problem`], and the lease is unchanged).
    pub fn renew_with_value(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
        value: Option<&Value>,
    ) -> Result<Renewed, ClientError> {
        self.renew_sending(resource, owner, ttl_seconds, value, self.request_timeout())
    }

    /// The renew itself: `value` is sent when given.
    pub(crate) fn renew_sending(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
        value: Option<&Value>,
        timeout: Duration,
    ) -> Result<Renewed, ClientError> {
        let mut body = json!({"owner": owner, "ttl_seconds": ttl_seconds});
        if let Some(value) = value {
            body["value"] = value.clone();
        }
        let path = format!("{}/renew", lock_path(resource));
        match self.exchange("POST", &path, Some(&body), timeout) {
            Ok((200, text)) => serde_json::from_str(&text)
                .map(Renewed::Renewed)
                .map_err(|_| unexpected(200, text)),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Renewed::NotFound),
            Err(ClientError::Problem(problem)) if problem.status == 403 => Ok(Renewed::Forbidden),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// How `resource` is held: by one exclusive holder or by shared holders; `None` when no
    /// live lease holds it.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 404.
    pub fn lock_status(&self, resource: &str) -> Result<Option<LockStatus>, ClientError> {
        match self.exchange("GET", &lock_path(resource), None, self.request_timeout()) {
            Ok((200, text)) => parse_status(text).map(Some),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(None),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }
}

/// An acquire's body; `mode`, `wait_seconds` and `value` only when they say something, so a
/// default acquire is v1's body exactly.
fn acquire_body(owner: &str, ttl_seconds: u32, options: &AcquireOptions) -> Value {
    let mut body = json!({"owner": owner, "ttl_seconds": ttl_seconds});
    if options.mode != Mode::Exclusive {
        body["mode"] = json!(options.mode);
    }
    if options.wait_seconds > 0 {
        body["wait_seconds"] = json!(options.wait_seconds);
    }
    if let Some(value) = &options.value {
        body["value"] = value.clone();
    }
    body
}

/// The body of a 200 answer to an acquire.
pub(crate) fn parse_acquired(
    text: String,
    retry_after_seconds: Option<u64>,
) -> Result<Acquired, ClientError> {
    match serde_json::from_str::<AcquireBody>(&text) {
        Ok(AcquireBody {
            acquired: true,
            lock: Some(lease),
        }) => Ok(Acquired::Granted(lease)),
        Ok(AcquireBody {
            acquired: false, ..
        }) => Ok(Acquired::Held {
            retry_after_seconds,
        }),
        _ => Err(unexpected(200, text)),
    }
}

/// The body of a 200 answer to `GET /locks/{resource}`: a shared hold, or one lock.
fn parse_status(text: String) -> Result<LockStatus, ClientError> {
    if let Ok(SharedBody {
        resource,
        mode: Mode::Shared,
        holders,
    }) = serde_json::from_str(&text)
    {
        return Ok(LockStatus::Shared { resource, holders });
    }
    match serde_json::from_str::<Lease>(&text) {
        Ok(lease) if lease.mode == Mode::Exclusive => Ok(LockStatus::Exclusive(lease)),
        _ => Err(unexpected(200, text)),
    }
}

#[cfg(test)]
mod tests;
