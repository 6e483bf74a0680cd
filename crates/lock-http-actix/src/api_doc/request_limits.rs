//! [`RequestLimits`]: the limits a server puts on its request fields, which the request schemas
//! of the document (`requests.rs`, `multi_requests.rs`, `election_requests.rs`) write as their
//! `maximum`s.

use lock_domain::DEFAULT_MAX_TTL_SECONDS;

use crate::DEFAULT_MAX_WAIT_SECONDS;

/// The limits a server puts on its request fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestLimits {
    pub max_ttl_seconds: u32,
    pub max_wait_seconds: u32,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self {
            max_ttl_seconds: DEFAULT_MAX_TTL_SECONDS,
            max_wait_seconds: DEFAULT_MAX_WAIT_SECONDS,
        }
    }
}
