//! How a [`crate::LockClient`] connects: address, API key and timeouts.

use std::time::Duration;

/// Connection settings. Every request is bounded by `request_timeout` (plus the wait of a
/// waiting acquire), so no call can hang for ever.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The server, e.g. `http://127.0.0.1:8080` (a trailing `/` is ignored).
    pub base_url: String,
    /// Sent as `Authorization: Bearer <key>` when set.
    pub api_key: Option<String>,
    /// Longest time to open a TCP connection.
    pub connect_timeout: Duration,
    /// Longest time for a whole exchange (connect, send, answer), unless a call says otherwise.
    pub request_timeout: Duration,
}

impl ClientConfig {
    /// Settings for `base_url` with no API key, a 2 s connect timeout and a 10 s request timeout.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(10),
        }
    }

    /// The same settings with an API key.
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
}
