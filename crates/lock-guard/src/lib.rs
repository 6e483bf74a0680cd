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
//! The guard is blocking: it owns a one-thread tokio runtime that runs the background renewal
//! and the service's futures, so a plain `fn main` batch job needs no runtime of its own.

mod guard;
mod settings;

pub use guard::{GuardError, LockGuard};
pub use settings::GuardSettings;
