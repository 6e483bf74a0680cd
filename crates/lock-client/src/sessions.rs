//! Sessions: open one, take locks under it, keep it alive with one request whatever it holds,
//! and end it with every hold at once.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::client::{lock_path, segment, unexpected};
use crate::multi::set_body;
use crate::{
    AcquireOptions, Acquired, Campaigned, ClientError, LockClient, LockSpec, LocksAcquired, Mode,
    PermitsAcquired, Released,
};

/// A live session as the server describes it (timestamps: the server's RFC 3339 strings).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Session {
    /// Opaque and unguessable: keep it as secret as a key.
    pub id: String,
    /// The label its holds show as their owner.
    pub owner: String,
    pub ttl_seconds: u32,
    pub lock_delay_seconds: u32,
    pub created_at: String,
    /// When the session ends, and every hold with it, unless kept alive.
    pub expires_at: String,
}

/// One hold of a session: `kind` is `lock`, `semaphore` or `election`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SessionHold {
    pub kind: String,
    pub name: String,
    pub fencing_token: i64,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub permits: Option<u32>,
    #[serde(default)]
    pub term: Option<i64>,
}

#[derive(Deserialize)]
struct SessionBody {
    session: Session,
}

#[derive(Deserialize)]
struct HoldsBody {
    session: Session,
    holds: Vec<SessionHold>,
}

fn session_path(id: &str) -> String {
    format!("/sessions/{}", segment(id))
}

impl LockClient {
    /// Opens a session of `ttl_seconds`, labelled `owner` (its id when `None`), with
    /// `lock_delay_seconds` for its holds when it runs out (the server's default when `None`).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (a 422 for a bad TTL, a 429
    /// when the tenant's `max_sessions` are open).
    pub fn open_session(
        &self,
        ttl_seconds: u32,
        owner: Option<&str>,
        lock_delay_seconds: Option<u32>,
    ) -> Result<Session, ClientError> {
        let mut body = json!({"ttl_seconds": ttl_seconds});
        if let Some(owner) = owner {
            body["owner"] = json!(owner);
        }
        if let Some(delay) = lock_delay_seconds {
            body["lock_delay_seconds"] = json!(delay);
        }
        match self.exchange("POST", "/sessions", Some(&body), self.request_timeout())? {
            (201, text) => parse_session(201, text),
            (status, text) => Err(unexpected(status, text)),
        }
    }

    /// Keeps session `id` alive: its end, and every hold's, moves to now plus its TTL (first
    /// changed to `ttl_seconds` when given). `None` when the session has ended (closed, forced or
    /// run out): it is never revived, and nothing it held is held any more.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 404 (then the session may or may not have been kept alive).
    pub fn keep_alive(
        &self,
        id: &str,
        ttl_seconds: Option<u32>,
        timeout: Duration,
    ) -> Result<Option<Session>, ClientError> {
        let body = ttl_seconds.map(|ttl| json!({"ttl_seconds": ttl}));
        let path = format!("{}/keepalive", session_path(id));
        match self.exchange("POST", &path, body.as_ref(), timeout) {
            Ok((200, text)) => parse_session(200, text).map(Some),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(None),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Session `id` and its live holds, or `None` when it has ended.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 404.
    pub fn session(&self, id: &str) -> Result<Option<(Session, Vec<SessionHold>)>, ClientError> {
        match self.exchange("GET", &session_path(id), None, self.request_timeout()) {
            Ok((200, text)) => serde_json::from_str::<HoldsBody>(&text)
                .map(|body| Some((body.session, body.holds)))
                .map_err(|_| unexpected(200, text)),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(None),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Ends session `id` and every hold under it, at once: `true` when it ended now, `false`
    /// when it had ended already.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 404.
    pub fn end_session(&self, id: &str) -> Result<bool, ClientError> {
        self.end_session_within(id, self.request_timeout())
    }

    /// Like [`LockClient::end_session`], giving up after `timeout`.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 404.
    pub fn end_session_within(&self, id: &str, timeout: Duration) -> Result<bool, ClientError> {
        match self.exchange("DELETE", &session_path(id), None, timeout) {
            Ok((204, _)) => Ok(true),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(false),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Acquires `resource` under session `id`, in `options.mode`, with its wait and value: the
    /// session is the holder and the lease ends with it.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer: a 404
    /// `/problems/session-not-found` when the session is not live (nothing was granted).
    pub fn acquire_in_session(
        &self,
        resource: &str,
        id: &str,
        options: &AcquireOptions,
    ) -> Result<Acquired, ClientError> {
        let mut body = json!({"session": id});
        if options.mode != Mode::Exclusive {
            body["mode"] = json!(options.mode);
        }
        if options.wait_seconds > 0 {
            body["wait_seconds"] = json!(options.wait_seconds);
        }
        if let Some(value) = &options.value {
            body["value"] = value.clone();
        }
        self.acquire_sending(resource, &body, options.wait_seconds)
    }

    /// Acquires every lock of `locks` under session `id`, together or none, asking the server
    /// to wait up to `wait_seconds` (sent only when not 0) until all are available at once;
    /// nothing is held while it waits. `value` is stored with each lease.
    ///
    /// # Errors
    /// As [`LockClient::acquire_all`]; a 404 `/problems/session-not-found` when the session is
    /// not live (nothing was granted).
    pub fn acquire_all_in_session(
        &self,
        id: &str,
        locks: &[LockSpec],
        wait_seconds: u64,
        value: Option<&Value>,
    ) -> Result<LocksAcquired, ClientError> {
        let body = set_body(json!({"session": id}), locks, wait_seconds, value);
        self.acquire_all_sending(&body, wait_seconds)
    }

    /// Acquires `permits` of semaphore `name` (of `limit`) under session `id`, asking the
    /// server to hold the request up to `wait_seconds` (sent only when not 0).
    ///
    /// # Errors
    /// As [`LockClient::acquire_permits`]; a 404 `/problems/session-not-found` when the session
    /// is not live (nothing was granted).
    pub fn acquire_permits_in_session(
        &self,
        name: &str,
        id: &str,
        limit: u32,
        permits: u32,
        wait_seconds: u64,
    ) -> Result<PermitsAcquired, ClientError> {
        let mut body = json!({"session": id, "limit": limit, "permits": permits});
        if wait_seconds > 0 {
            body["wait_seconds"] = json!(wait_seconds);
        }
        self.acquire_permits_sending(name, &body, wait_seconds)
    }

    /// Campaigns for `election` under session `id` (the leader shows the session's label as
    /// its candidate), with `value` when given, asking the server to hold the request up to
    /// `wait_seconds` (sent only when not 0).
    ///
    /// # Errors
    /// As [`LockClient::campaign`]; a 404 `/problems/session-not-found` when the session is not
    /// live (no one was elected).
    pub fn campaign_in_session(
        &self,
        election: &str,
        id: &str,
        wait_seconds: u64,
        value: Option<&Value>,
    ) -> Result<Campaigned, ClientError> {
        let mut body = json!({"session": id});
        if wait_seconds > 0 {
            body["wait_seconds"] = json!(wait_seconds);
        }
        if let Some(value) = value {
            body["value"] = value.clone();
        }
        self.campaign_sending(election, &body, wait_seconds)
    }

    /// Releases session `id`'s hold of `resource` (and nothing else of the session).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 403/404.
    pub fn release_in_session(&self, resource: &str, id: &str) -> Result<Released, ClientError> {
        let body: Value = json!({"session": id});
        match self.exchange(
            "DELETE",
            &lock_path(resource),
            Some(&body),
            self.request_timeout(),
        ) {
            Ok((204, _)) => Ok(Released::Released),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Released::NotFound),
            Err(ClientError::Problem(problem)) if problem.status == 403 => Ok(Released::Forbidden),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }
}

fn parse_session(status: u16, text: String) -> Result<Session, ClientError> {
    serde_json::from_str::<SessionBody>(&text)
        .map(|body| body.session)
        .map_err(|_| unexpected(status, text))
}
