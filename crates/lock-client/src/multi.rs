//! Several locks at once: acquire a set together or not at all (`POST /locks`), and release
//! many in one request (`DELETE /locks`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::client::{read_text, retry_after, unexpected};
use crate::{ClientError, Lease, LockClient, Mode, Released};

/// One lock of a set: a resource, and the mode to hold it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSpec {
    pub resource: String,
    pub mode: Mode,
}

impl LockSpec {
    pub fn exclusive(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            mode: Mode::Exclusive,
        }
    }

    pub fn shared(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            mode: Mode::Shared,
        }
    }
}

/// The answer to an acquire of a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocksAcquired {
    /// The caller holds every lock: in request order, each with its own fencing token (a lock
    /// it held already in the same mode is re-granted with its token).
    Granted(Vec<Lease>),
    /// None was granted, nothing changed: these could not be (held by another owner, or by the
    /// caller in the other mode). `retry_after_seconds` is the server's `Retry-After` hint after
    /// a wait that ended.
    Unavailable {
        resources: Vec<String>,
        retry_after_seconds: Option<u64>,
    },
}

/// What a release of many did with one lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockReleased {
    pub resource: String,
    /// `Released`, `Forbidden` (another owner holds it) or `NotFound` (no one does).
    pub outcome: Released,
    /// The ended lease's token, when it was released.
    pub fencing_token: Option<i64>,
}

#[derive(Deserialize)]
struct AcquireAllBody {
    acquired: bool,
    locks: Option<Vec<Lease>>,
    unavailable: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct ReleaseAllBody {
    results: Vec<ResultBody>,
}

#[derive(Deserialize)]
struct ResultBody {
    resource: String,
    result: String,
    fencing_token: Option<i64>,
}

impl LockClient {
    /// Acquires every lock of `locks` for `owner` for `ttl_seconds`, together or none, asking
    /// the server to wait up to `wait_seconds` (sent only when not 0) until all are available at
    /// once; nothing is held while it waits. `value` is stored with each lease.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer: a 422 (no locks or more than
    /// 64, a resource named twice: `locks`, `duplicate`; a bad name or mode: `locks[i]...`) is a
    /// [`ClientError::Problem`].
    pub fn acquire_all(
        &self,
        owner: &str,
        ttl_seconds: u32,
        locks: &[LockSpec],
        wait_seconds: u64,
        value: Option<&Value>,
    ) -> Result<LocksAcquired, ClientError> {
        let body = acquire_all_body(owner, ttl_seconds, locks, wait_seconds, value);
        self.acquire_all_sending(&body, wait_seconds)
    }

    /// Sends the set acquire `body`, which may wait `wait_seconds`, and reads its answer.
    pub(crate) fn acquire_all_sending(
        &self,
        body: &Value,
        wait_seconds: u64,
    ) -> Result<LocksAcquired, ClientError> {
        let timeout = self.request_timeout() + Duration::from_secs(wait_seconds);
        let response = self.send("POST", "/locks", Some(body), timeout)?;
        let status = response.status();
        let retry_after_seconds = retry_after(&response);
        let text = read_text(response)?;
        if status != 200 {
            return Err(unexpected(status, text));
        }
        parse_acquired_all(text, retry_after_seconds)
    }

    /// Releases each of `resources` that `owner` holds (in either mode), as
    /// [`LockClient::release`] would one by one, and answers what happened to each, in request
    /// order.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (422 for no resources, more
    /// than 64, or one named twice). After a 503 or no answer, some may have been released.
    pub fn release_all(
        &self,
        owner: &str,
        resources: &[&str],
    ) -> Result<Vec<LockReleased>, ClientError> {
        let body = json!({"owner": owner, "resources": resources});
        match self.exchange("DELETE", "/locks", Some(&body), self.request_timeout())? {
            (200, text) => parse_released_all(text),
            (status, text) => Err(unexpected(status, text)),
        }
    }
}

fn acquire_all_body(
    owner: &str,
    ttl_seconds: u32,
    locks: &[LockSpec],
    wait_seconds: u64,
    value: Option<&Value>,
) -> Value {
    let holder = json!({"owner": owner, "ttl_seconds": ttl_seconds});
    set_body(holder, locks, wait_seconds, value)
}

/// A set acquire's body: `holder` (the owner and TTL, or the session) with the locks, and
/// `wait_seconds` and `value` only when they say something.
pub(crate) fn set_body(
    mut body: Value,
    locks: &[LockSpec],
    wait_seconds: u64,
    value: Option<&Value>,
) -> Value {
    let locks: Vec<Value> = locks
        .iter()
        .map(|lock| match lock.mode {
            Mode::Exclusive => json!({"resource": lock.resource}),
            Mode::Shared => json!({"resource": lock.resource, "mode": lock.mode}),
        })
        .collect();
    body["locks"] = json!(locks);
    if wait_seconds > 0 {
        body["wait_seconds"] = json!(wait_seconds);
    }
    if let Some(value) = value {
        body["value"] = value.clone();
    }
    body
}

fn parse_acquired_all(
    text: String,
    retry_after_seconds: Option<u64>,
) -> Result<LocksAcquired, ClientError> {
    match serde_json::from_str::<AcquireAllBody>(&text) {
        Ok(AcquireAllBody {
            acquired: true,
            locks: Some(locks),
            ..
        }) => Ok(LocksAcquired::Granted(locks)),
        Ok(AcquireAllBody {
            acquired: false,
            unavailable: Some(resources),
            ..
        }) => Ok(LocksAcquired::Unavailable {
            resources,
            retry_after_seconds,
        }),
        _ => Err(unexpected(200, text)),
    }
}

fn parse_released_all(text: String) -> Result<Vec<LockReleased>, ClientError> {
    let Ok(body) = serde_json::from_str::<ReleaseAllBody>(&text) else {
        return Err(unexpected(200, text));
    };
    let mut released = Vec::with_capacity(body.results.len());
    for one in body.results {
        let outcome = match one.result.as_str() {
            "released" => Released::Released,
            "forbidden" => Released::Forbidden,
            "not_found" => Released::NotFound,
            _ => return Err(unexpected(200, text)),
        };
        released.push(LockReleased {
            resource: one.resource,
            outcome,
            fencing_token: one.fencing_token,
        });
    }
    Ok(released)
}

#[cfg(test)]
mod tests;
