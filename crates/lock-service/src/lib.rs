//! lockd's application layer: the lock use cases, from the call to the store's port to the
//! report of what happened.
//!
//! [`LockService`] owns acquire (with the queues of waiting acquires), status, release (which
//! wakes the waiters), renew, list and the fence check (`fence.rs`), of exclusive and shared locks
//! (`modes.rs`), of semaphore permits (`permits.rs`) and of elections (`elections.rs`, locks in
//! the tenant's election namespace), and reports every outcome to the [`LockEvents`] port
//! (metrics and the audit log live behind it, in an adapter). Inbound adapters (the HTTP API,
//! `LockGuard`) parse, make one call, and render. Time comes from the domain's `Clock` port.
//!
//! The crate knows the domain's ports and values, and tokio for queues and timers; never a web
//! framework or a database.

mod admin;
mod admission;
mod counting;
mod elections;
mod events;
mod fence;
mod held;
mod history;
mod lock_delay;
mod modes;
mod multi;
mod observe;
mod outcomes;
mod permits;
mod quota;
mod service;
mod waiting;

pub use counting::run_live_lock_counter;
pub use elections::CampaignRequest;
pub use events::{ElectionReport, ForceReleased, LockEvents, NoEvents, Trouble};
pub use history::{FeedFilter, FeedStart, HistoryFeed};
pub use multi::MultiAcquireRequest;
pub use observe::{
    Change, Happened, Holding, Numbered, Observation, Observed, Shape, POLL as OBSERVE_POLL,
};
pub use outcomes::{
    Acquired, Campaigned, Fenced, Leading, MultiAcquired, PermitsAcquired, WaitersFull,
};
pub use permits::PermitsRequest;
pub use quota::{
    Limit, LimitsFileError, LimitsTable, OpenError, QuotaExceeded, QuotaUsage, TenantLimits,
};
pub use service::{
    AcquireError, AcquireRequest, LockService, ServicePorts, StorePorts, WaitingStats,
};
pub use waiting::{WaiterLimits, DEFAULT_MAX_WAITERS};
