//! The client itself: one method a lock operation, each bounded by a timeout.

use std::time::Duration;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use crate::{
    AcquireOptions, Acquired, ClientConfig, ClientError, Lease, Problem, Released, Renewed,
};

/// Everything but RFC 3986 unreserved characters is escaped in the resource path segment, so a
/// name with `/`, `+`, `%`, `?` or spaces reaches the server as it was given.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A blocking client of one lockd. Clones share the connection pool.
#[derive(Debug, Clone)]
pub struct LockClient {
    agent: ureq::Agent,
    base_url: String,
    authorization: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
}

impl LockClient {
    pub fn new(config: &ClientConfig) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(config.connect_timeout)
            .timeout(config.request_timeout)
            .build();
        Self {
            agent,
            base_url: config.base_url.trim_end_matches('/').to_owned(),
            authorization: config.api_key.as_ref().map(|key| format!("Bearer {key}")),
            connect_timeout: config.connect_timeout,
            request_timeout: config.request_timeout,
        }
    }

    /// The server this client talks to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// How long opening a connection may take.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// How long a request may take (a waiting acquire: plus its wait).
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Acquires `resource` for `owner` for `ttl_seconds`, answering at once.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (e.g. 422 for a bad owner).
    pub fn acquire(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
    ) -> Result<Acquired, ClientError> {
        self.acquire_waiting(resource, owner, ttl_seconds, 0)
    }

    /// Acquires, asking the server to hold the request up to `wait_seconds` until the lock is
    /// granted (`wait_seconds` is sent only when it is not 0). The request may take that long,
    /// so its timeout is the client's request timeout plus the wait.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (a server without waiting
    /// ignores the field and answers at once; one with a lower maximum answers 422).
    pub fn acquire_waiting(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
        wait_seconds: u64,
    ) -> Result<Acquired, ClientError> {
        let options = AcquireOptions {
            wait_seconds,
            ..AcquireOptions::default()
        };
        self.acquire_with(resource, owner, ttl_seconds, &options)
    }

    /// The live lock on `resource`, or `None` when there is none.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 404. A lock held in
    /// shared mode has no one lease to answer: it is [`ClientError::Unexpected`] here, and
    /// [`LockClient::lock_status`] answers it.
    pub fn status(&self, resource: &str) -> Result<Option<Lease>, ClientError> {
        match self.exchange("GET", &lock_path(resource), None, self.request_timeout) {
            Ok((200, text)) => parse_lease(200, text).map(Some),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(None),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Renews `owner`'s lock for `ttl_seconds` from the server's now.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 403/404.
    pub fn renew(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
    ) -> Result<Renewed, ClientError> {
        self.renew_within(resource, owner, ttl_seconds, self.request_timeout)
    }

    /// Like [`LockClient::renew`], giving up after `timeout` (a renewal must not outlive the
    /// lease it extends).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 403/404.
    pub fn renew_within(
        &self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
        timeout: Duration,
    ) -> Result<Renewed, ClientError> {
        self.renew_sending(resource, owner, ttl_seconds, None, timeout)
    }

    /// Releases `owner`'s lock.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 403/404.
    pub fn release(&self, resource: &str, owner: &str) -> Result<Released, ClientError> {
        self.release_within(resource, owner, self.request_timeout)
    }

    /// Like [`LockClient::release`], giving up after `timeout`.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 403/404.
    pub fn release_within(
        &self,
        resource: &str,
        owner: &str,
        timeout: Duration,
    ) -> Result<Released, ClientError> {
        let body = json!({"owner": owner});
        match self.exchange("DELETE", &lock_path(resource), Some(&body), timeout) {
            Ok((204, _)) => Ok(Released::Released),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Released::NotFound),
            Err(ClientError::Problem(problem)) if problem.status == 403 => Ok(Released::Forbidden),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// Sends a request and reads a success answer's status and body.
    pub(crate) fn exchange(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<(u16, String), ClientError> {
        let response = self.send(method, path, body, timeout)?;
        let status = response.status();
        Ok((status, read_text(response)?))
    }

    /// Sends a request; an error status becomes [`ClientError::Problem`] (or `Unexpected` when
    /// its body is no problem document).
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<ureq::Response, ClientError> {
        let accept = "application/json, application/problem+json";
        self.send_with(&self.agent, accept, (method, path), body, Some(timeout))
    }

    /// [`LockClient::send`] through `agent`, asking for `accept`, bounded by `timeout` when
    /// given (else by the agent's own timeouts).
    pub(crate) fn send_with(
        &self,
        agent: &ureq::Agent,
        accept: &str,
        (method, path): (&str, &str),
        body: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<ureq::Response, ClientError> {
        let mut request = agent
            .request(method, &format!("{}{path}", self.base_url))
            .set("accept", accept);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        if let Some(authorization) = &self.authorization {
            request = request.set("authorization", authorization);
        }
        let result = match body {
            Some(body) => request
                .set("content-type", "application/json")
                .send_string(&body.to_string()),
            None => request.call(),
        };
        match result {
            Ok(response) => Ok(response),
            Err(ureq::Error::Status(status, response)) => {
                let retry_after_seconds = retry_after(&response);
                let text = read_text(response)?;
                match serde_json::from_str::<Problem>(&text) {
                    Ok(mut problem) => {
                        problem.status = status;
                        problem.retry_after_seconds = retry_after_seconds;
                        Err(ClientError::Problem(problem))
                    }
                    Err(_) => Err(unexpected(status, text)),
                }
            }
            Err(error) => Err(ClientError::Transport(error.to_string())),
        }
    }
}

pub(crate) fn lock_path(resource: &str) -> String {
    format!("/locks/{}", segment(resource))
}

/// A name as one escaped path segment.
pub(crate) fn segment(name: &str) -> String {
    utf8_percent_encode(name, SEGMENT).to_string()
}

pub(crate) fn retry_after(response: &ureq::Response) -> Option<u64> {
    response
        .header("retry-after")
        .and_then(|value| value.trim().parse().ok())
}

pub(crate) fn read_text(response: ureq::Response) -> Result<String, ClientError> {
    response
        .into_string()
        .map_err(|error| ClientError::Transport(format!("the answer broke off: {error}")))
}

fn parse_lease(status: u16, text: String) -> Result<Lease, ClientError> {
    serde_json::from_str(&text).map_err(|_| unexpected(status, text))
}

pub(crate) fn unexpected(status: u16, body: String) -> ClientError {
    ClientError::Unexpected { status, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_are_one_escaped_segment() {
        assert_eq!(lock_path("payment:42"), "/locks/payment%3A42");
        assert_eq!(lock_path("a/b c+d%"), "/locks/a%2Fb%20c%2Bd%25");
        assert_eq!(lock_path("naïve-x_y.z~"), "/locks/na%C3%AFve-x_y.z~");
    }

    #[test]
    fn an_unreachable_server_is_a_transport_error() {
        // A port nothing listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .unwrap_or(9);
        let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}"));
        config.connect_timeout = Duration::from_millis(500);
        let client = LockClient::new(&config);
        let error = client.acquire("r", "o", 5).unwrap_err();
        assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
        assert_eq!(error.status(), None);
    }
}
