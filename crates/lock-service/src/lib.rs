//! lockd's application layer: the use cases, from the call to the store's port to the report of
//! what happened.
//!
//! The use cases are per primitive, each a view over one shared `Core` (`core.rs`: the store's
//! ports, the waiting machinery, the tenants' quotas, the history's feed, the watches, the clock
//! and the events port), handed out by the process's [`LockService`]:
//!
//! - [`Locks`] (`locks.rs`, `locks/modes.rs` for shared locks, `locks/multi.rs` for sets):
//!   acquire with the queues of waiting acquires, status, release (which wakes the waiters),
//!   renew, list, the fence check, the lock-delay's end and the force-release;
//! - [`Semaphores`] (`semaphores.rs`, its FIFO in `semaphores/queue.rs`): the same for permits;
//! - [`Elections`] (`elections.rs`): locks in the tenant's election namespace, reported as
//!   elections;
//! - [`History`] (`history.rs`): pages of records and the event feed;
//! - [`Tenants`] (`tenants.rs`): the limits in force and their usage;
//! - [`Sessions`] (`sessions.rs`): open, keepalive, look, list and end; what a session holds is
//!   taken through the other use cases, with the session as the holder;
//! - observing a name ([`LockService::observe`]; the watches in `observe.rs`) spans them.
//!
//! Every outcome is reported to the [`LockEvents`] port (metrics and the audit log live behind
//! it, in an adapter). Inbound adapters (the HTTP API, `LockGuard`) parse, make one call, and
//! render. Time comes from the domain's `Clock` port.
//!
//! The crate knows the domain's ports and values, and tokio for queues and timers; never a web
//! framework or a database.

mod admin;
mod admission;
mod core;
mod counting;
mod elections;
mod events;
mod held;
mod history;
mod lock_delay;
mod locks;
mod observe;
mod outcomes;
mod quota;
mod semaphores;
mod service;
mod sessions;
mod tenants;
mod waiting;

pub use crate::core::{ServicePorts, StorePorts};
pub use counting::run_live_lock_counter;
pub use elections::{CampaignRequest, Elections};
pub use events::{ElectionReport, ForceReleased, LockEvents, NoEvents, Trouble};
pub use history::{FeedFilter, FeedStart, History, HistoryFeed};
pub use locks::multi::MultiAcquireRequest;
pub use locks::{AcquireRequest, Locks};
pub use observe::{
    Change, Happened, Holding, Numbered, Observation, Observed, SessionChange, SessionObservation,
    Shape, POLL as OBSERVE_POLL,
};
pub use outcomes::{
    AcquireError, Acquired, Campaigned, Fenced, HeldSemaphore, HoldEnd, Leading, Looked,
    MultiAcquired, PermitsAcquired, Primitive, Waited, WaitersFull,
};
pub use quota::{
    Limit, LimitsFileError, LimitsTable, OpenError, QuotaExceeded, QuotaUsage, TenantLimits,
};
pub use semaphores::{PermitsRequest, Semaphores};
pub use service::{LockService, WaitingStats};
pub use sessions::{OpenSession, OpenSessionError, SessionHolds, Sessions};
pub use tenants::Tenants;
pub use waiting::{WaiterLimits, DEFAULT_MAX_WAITERS};

#[cfg(test)]
mod look_tests;
#[cfg(test)]
mod timing_tests;
