//! What `lockd run` keeps alive while the command runs, and gives up at the end: one lease (a
//! [`Target`] held by its owner, renewed), or one session (every hold under it, kept alive by
//! one keepalive and ended at once). The renewal thread, the supervisor and the kill-before-expiry
//! timing are the same for both.

use std::time::Duration;

use lock_client::{ClientError, LockClient};

use super::target::{Renewal, Target};

/// One lease, or one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// `target`, held by `owner` on a lease of its own.
    Lease { target: Target, owner: String },
    /// Session `id`, holding what `holds` says (for messages: the id itself is never printed,
    /// since whoever has it may act for the session).
    Session { id: String, holds: String },
}

impl Kept {
    /// How messages name it: `"payment:42"`, `semaphore "export"`, or `the session holding
    /// "a", "b" and semaphore "export"`.
    pub fn describe(&self) -> String {
        match self {
            Kept::Lease { target, .. } => target.describe(),
            Kept::Session { holds, .. } => format!("the session holding {holds}"),
        }
    }

    /// Renews the lease for `ttl` seconds, or keeps the session alive, giving up after
    /// `timeout`.
    ///
    /// # Errors
    /// The client's error: no answer within `timeout`, or an unexpected error answer.
    pub fn renew(
        &self,
        client: &LockClient,
        ttl: u32,
        timeout: Duration,
    ) -> Result<Renewal, ClientError> {
        match self {
            Kept::Lease { target, owner } => target.renew(client, owner, ttl, timeout),
            Kept::Session { id, .. } => Ok(match client.keep_alive(id, None, timeout)? {
                Some(_) => Renewal::Renewed,
                None => Renewal::Lost { forbidden: false },
            }),
        }
    }

    /// Why a renewal answered [`Renewal::Lost`] means that nothing is held any more.
    pub fn lost_because(&self, forbidden: bool) -> &'static str {
        match (self, forbidden) {
            (Kept::Session { .. }, _) => {
                "the session has ended (closed, forced or run out), and every hold with it"
            }
            (Kept::Lease { .. }, true) => "another owner holds the lock",
            (Kept::Lease { .. }, false) => {
                "the lock (or the permits) is gone (expired or released)"
            }
        }
    }

    /// Releases the lease, or ends the session and every hold under it at once, giving up after
    /// `timeout` (the client's request timeout when `None`).
    ///
    /// # Errors
    /// The client's error: no answer, or an unexpected error answer.
    pub fn release(
        &self,
        client: &LockClient,
        timeout: Option<Duration>,
    ) -> Result<(), ClientError> {
        match self {
            Kept::Lease { target, owner } => target.release(client, owner, timeout).map(drop),
            Kept::Session { id, .. } => {
                let timeout = timeout.unwrap_or_else(|| client.request_timeout());
                client.end_session_within(id, timeout).map(drop)
            }
        }
    }
}
