//! What `lockd run` holds: a lock (`--resource`), or permits of a semaphore (`--semaphore`,
//! `--limit`, `--permits`); `lockd elect` holds the leadership of an election. Each is held on a
//! lease of its own, or under a session (`run/session.rs`). The rest of `lockd run` (the renewal
//! thread, the supervisor, the kill-before-expiry timing) is the same for all three.

use std::time::Duration;

use lock_client::{
    AcquireOptions, Acquired, Campaigned, ClientError, Leading, LockClient, PermitsAcquired,
    PermitsRenewed, Released, Renewed,
};

/// The lock or the permits held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Lock {
        resource: String,
    },
    Semaphore {
        name: String,
        limit: u32,
        permits: u32,
    },
    /// The leadership of an election, proclaiming `value` once elected.
    Election {
        name: String,
        value: Option<serde_json::Value>,
    },
}

/// An acquire's answer, whatever is held: what was granted (a fencing token, or a set's), or
/// not, with the server's `Retry-After` hint and, for a set, the locks that could not be had.
pub enum Acquisition<T = i64> {
    Granted(T),
    NotGranted {
        retry_after_seconds: Option<u64>,
        unavailable: Vec<String>,
    },
}

impl<T> Acquisition<T> {
    fn not_granted(retry_after_seconds: Option<u64>) -> Self {
        Self::NotGranted {
            retry_after_seconds,
            unavailable: Vec::new(),
        }
    }
}

/// A renewal's answer, whatever is held.
pub enum Renewal {
    Renewed,
    /// Not ours any more: expired, released or undone (`forbidden`: another owner holds the
    /// lock).
    Lost {
        forbidden: bool,
    },
}

impl Target {
    /// How messages name it: `"payment:42"`, or `semaphore "export"`.
    pub fn describe(&self) -> String {
        match self {
            Target::Lock { resource } => format!("{resource:?}"),
            Target::Semaphore { name, .. } => format!("semaphore {name:?}"),
            Target::Election { name, .. } => format!("election {name:?}"),
        }
    }

    /// The program, as its messages name it.
    pub fn program(&self) -> &'static str {
        match self {
            Target::Election { .. } => "lockd elect",
            _ => "lockd run",
        }
    }

    /// Why an acquire that was not granted was not.
    pub fn not_granted(&self) -> &'static str {
        match self {
            Target::Lock { .. } => "is held by another owner",
            Target::Semaphore { .. } => "has too few permits free",
            Target::Election { .. } => "is led by another candidate",
        }
    }

    /// The environment of the command: what it holds, and the fencing token.
    pub fn env(&self, owner: &str, token: i64) -> Vec<(String, String)> {
        let mut env = self.described(owner, token);
        env.push(("LOCKD_OWNER", owner.to_owned()));
        env.push(("LOCKD_FENCING_TOKEN", token.to_string()));
        env.into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    /// The variables that say what is held (not the owner, nor the fencing token).
    pub fn described(&self, owner: &str, token: i64) -> Vec<(&'static str, String)> {
        match self {
            Target::Lock { resource } => vec![("LOCKD_RESOURCE", resource.clone())],
            Target::Election { name, .. } => vec![
                ("LOCKD_ELECTION", name.clone()),
                ("LOCKD_CANDIDATE", owner.to_owned()),
                ("LOCKD_TERM", token.to_string()),
            ],
            Target::Semaphore {
                name,
                limit,
                permits,
            } => vec![
                ("LOCKD_SEMAPHORE", name.clone()),
                ("LOCKD_LIMIT", limit.to_string()),
                ("LOCKD_PERMITS", permits.to_string()),
            ],
        }
    }

    /// Acquires, asking the server to wait up to `wait_seconds`.
    ///
    /// # Errors
    /// The client's error: no answer, or an error answer.
    pub fn acquire(
        &self,
        client: &LockClient,
        owner: &str,
        ttl: u32,
        wait_seconds: u64,
    ) -> Result<Acquisition, ClientError> {
        Ok(match self {
            Target::Lock { resource } => {
                lock_acquired(client.acquire_waiting(resource, owner, ttl, wait_seconds)?)
            }
            Target::Semaphore {
                name,
                limit,
                permits,
            } => permits_acquired(client.acquire_permits(
                name,
                owner,
                ttl,
                *limit,
                *permits,
                wait_seconds,
            )?),
            Target::Election { name, value } => {
                campaigned(client.campaign(name, owner, ttl, wait_seconds, value.as_ref())?)
            }
        })
    }

    /// Acquires under session `id` (the session is the holder, its TTL the hold's), asking the
    /// server to wait up to `wait_seconds`.
    ///
    /// # Errors
    /// The client's error: no answer, or an error answer (404 when the session has ended).
    pub fn acquire_in_session(
        &self,
        client: &LockClient,
        id: &str,
        wait_seconds: u64,
    ) -> Result<Acquisition, ClientError> {
        Ok(match self {
            Target::Lock { resource } => {
                let options = AcquireOptions::default().waiting(wait_seconds);
                lock_acquired(client.acquire_in_session(resource, id, &options)?)
            }
            Target::Semaphore {
                name,
                limit,
                permits,
            } => permits_acquired(client.acquire_permits_in_session(
                name,
                id,
                *limit,
                *permits,
                wait_seconds,
            )?),
            Target::Election { name, value } => {
                campaigned(client.campaign_in_session(name, id, wait_seconds, value.as_ref())?)
            }
        })
    }

    /// Renews for `ttl` seconds, giving up after `timeout`.
    ///
    /// # Errors
    /// The client's error: no answer within `timeout`, or an unexpected error answer.
    pub fn renew(
        &self,
        client: &LockClient,
        owner: &str,
        ttl: u32,
        timeout: Duration,
    ) -> Result<Renewal, ClientError> {
        Ok(match self {
            Target::Lock { resource } => {
                match client.renew_within(resource, owner, ttl, timeout)? {
                    Renewed::Renewed(_) => Renewal::Renewed,
                    Renewed::NotFound => Renewal::Lost { forbidden: false },
                    Renewed::Forbidden => Renewal::Lost { forbidden: true },
                }
            }
            Target::Semaphore { name, .. } => {
                match client.renew_permits_within(name, owner, ttl, timeout)? {
                    PermitsRenewed::Renewed(_) => Renewal::Renewed,
                    PermitsRenewed::NotFound => Renewal::Lost { forbidden: false },
                }
            }
            Target::Election { name, .. } => {
                match client.renew_leadership_within(name, owner, ttl, timeout)? {
                    Leading::Leader(_) => Renewal::Renewed,
                    Leading::Vacant => Renewal::Lost { forbidden: false },
                    Leading::NotLeader => Renewal::Lost { forbidden: true },
                }
            }
        })
    }

    /// Releases, giving up after `timeout` (the client's request timeout when `None`).
    ///
    /// # Errors
    /// The client's error: no answer, or an unexpected error answer.
    pub fn release(
        &self,
        client: &LockClient,
        owner: &str,
        timeout: Option<Duration>,
    ) -> Result<Released, ClientError> {
        let timeout = timeout.unwrap_or_else(|| client.request_timeout());
        match self {
            Target::Lock { resource } => client.release_within(resource, owner, timeout),
            Target::Semaphore { name, .. } => client.release_permits_within(name, owner, timeout),
            Target::Election { name, .. } => client.resign_within(name, owner, timeout),
        }
    }
}

fn lock_acquired(acquired: Acquired) -> Acquisition {
    match acquired {
        Acquired::Granted(lease) => Acquisition::Granted(lease.fencing_token),
        Acquired::Held {
            retry_after_seconds,
        } => Acquisition::not_granted(retry_after_seconds),
    }
}

fn permits_acquired(acquired: PermitsAcquired) -> Acquisition {
    match acquired {
        PermitsAcquired::Granted(permit) => Acquisition::Granted(permit.fencing_token),
        PermitsAcquired::Unavailable {
            retry_after_seconds,
            ..
        } => Acquisition::not_granted(retry_after_seconds),
    }
}

fn campaigned(campaigned: Campaigned) -> Acquisition {
    match campaigned {
        Campaigned::Elected(leader) => Acquisition::Granted(leader.term),
        Campaigned::NotElected {
            retry_after_seconds,
            ..
        } => Acquisition::not_granted(retry_after_seconds),
    }
}
