//! [`LockGuard`]: a lockd lock held by a Rust batch job directly on lockd's database (no HTTP),
//! through the same use cases the server runs ([`lock_service::LockService`]) over the same
//! [`LeaseStore`](lock_domain::LeaseStore) port.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use lock_domain::{LockStore, Owner, ResourceName, Ttl};
//! # use lock_service::LockService;
//! # fn job<S: LockStore + 'static>(repo: Arc<S>) -> Result<(), Box<dyn std::error::Error>> {
//! let service = LockService::over(repo); // or one with metrics and an audit log of its own
//! let resource = ResourceName::parse("report:nightly")?;
//! let owner = Owner::parse("nightly-export@host-1")?;
//! let guard = lock_guard::LockGuard::acquire(service, resource, owner, Ttl::parse(30, 86_400)?)?;
//! let token = guard.fencing_token(); // send it with every write
//! if !guard.is_safe() { return Err("lease at risk: stop writing".into()); }
//! drop(guard); // releases
//! # Ok(()) }
//! ```
//!
//! [`SessionGuard`] holds many things under one session instead: it opens the session, keeps it
//! alive in the background, takes locks (one or a set, either mode), semaphore permits and
//! leaderships under it, says when the session is in jeopardy and when it is lost, and ends it,
//! with every hold, on drop:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use std::time::Duration;
//! # use lock_domain::{LockMode, LockStore, Owner, ResourceName, Ttl};
//! # use lock_service::LockService;
//! # fn job<S: LockStore + 'static>(repo: Arc<S>) -> Result<(), Box<dyn std::error::Error>> {
//! let service = LockService::over(repo);
//! let owner = Owner::parse("transfer@host-1")?;
//! let session = lock_guard::SessionGuard::open(service, Some(owner), Ttl::parse(30, 86_400)?)?;
//! let accounts = vec![
//!     (ResourceName::parse("account:1")?, LockMode::Exclusive),
//!     (ResourceName::parse("account:2")?, LockMode::Exclusive),
//! ];
//! let tokens = session.locks(accounts, Duration::from_secs(10))?; // both, or neither
//! if session.is_lost() { return Err("session lost: stop writing".into()); }
//! drop(session); // ends the session and both locks at once
//! # Ok(()) }
//! ```
//!
//! Each guard is blocking: it owns a one-thread tokio runtime that runs the background renewal
//! (or keepalive) and the service's futures, so a plain `fn main` batch job needs no runtime of
//! its own.

mod error;
mod guard;
mod runtime;
mod session;
mod settings;

pub use error::GuardError;
pub use guard::LockGuard;
pub use session::{SessionGuard, SessionSignal};
pub use settings::GuardSettings;
