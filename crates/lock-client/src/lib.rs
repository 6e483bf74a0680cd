//! A small blocking client of the lockd REST API (locks in either mode with a value, several
//! locks at once, semaphore permits, elections, sessions, and fence checks): typed requests and answers, problem+json
//! errors parsed into [`ClientError::Problem`], and a timeout on every request.
//!
//! Built on `ureq` 2 without TLS: put lockd behind a TLS-terminating proxy on the same host, or
//! reach it over a private network.

mod answer;
mod client;
mod config;
mod documents;
mod elections;
mod error;
mod fence;
mod leases;
mod mode;
mod multi;
mod permits;
mod sessions;

pub use answer::{Acquired, Lease, Released, Renewed};
pub use client::LockClient;
pub use config::ClientConfig;
pub use documents::{with_query, Event, EventStream, Primitive};
pub use elections::{Campaigned, Leader, Leading};
pub use error::{ClientError, FieldProblem, Problem};
pub use fence::Fence;
pub use leases::{AcquireOptions, LockStatus};
pub use mode::Mode;
pub use multi::{LockReleased, LockSpec, LocksAcquired};
pub use permits::{Permit, PermitsAcquired, PermitsRenewed};
pub use sessions::{Session, SessionHold};
