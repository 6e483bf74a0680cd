//! The typed answers of the lock operations.

use serde::Deserialize;

use crate::Mode;

/// A live lock as the server describes it. Timestamps are the server's RFC 3339 strings (UTC,
/// milliseconds); they come from the server's clock, so compare them only with each other.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Lease {
    pub resource: String,
    pub owner: String,
    pub acquired_at: String,
    pub expires_at: String,
    /// Strictly increases with every new grant of the resource; pass it to downstream writes.
    pub fencing_token: i64,
    /// How the lock is held; `Exclusive` when the server does not say (one before shared locks).
    #[serde(default)]
    pub mode: Mode,
    /// The value stored with this lease, when one was set.
    #[serde(default)]
    pub value: Option<serde_json::Value>,
    /// The session the lease is held under, when it is: `owner` is then the session's label,
    /// and the lease ends with the session.
    #[serde(default)]
    pub session: Option<String>,
}

/// The answer to an acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The caller holds the lock (a new grant, or its own live lock re-granted).
    Granted(Lease),
    /// Another owner holds it (after the wait, if one was asked for). `retry_after_seconds` is
    /// the server's `Retry-After` hint, when it gave one.
    Held { retry_after_seconds: Option<u64> },
}

/// The answer to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The caller's lock was ended (204).
    Released,
    /// There was no live lock (404): never taken, released, or expired.
    NotFound,
    /// Another owner holds the lock (403); nothing changed.
    Forbidden,
}

/// The answer to a renew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renewed {
    /// The lease now runs `ttl` from the server's now; token and `acquired_at` are kept.
    Renewed(Lease),
    /// There is no live lock (404): the lease was lost (expired or released).
    NotFound,
    /// Another owner holds the lock (403): the lease was lost to it.
    Forbidden,
}
