//! The pure rules of lockd: validated lock values, the acquire/renew/release decisions and the
//! ports (repository, clock) that adapters implement. No I/O, no serde, no database, no HTTP.
//!
//! Time enters only as a `now` argument or through the [`Clock`] port, so every rule here is a
//! pure function that a table-driven test can pin to the millisecond.

mod clock;
mod decisions;
mod election;
mod expired_hold;
mod fence;
mod fencing_token;
mod force_reason;
mod freed;
mod history;
mod history_repository;
mod lease;
mod lease_op;
mod lease_store;
mod listing;
mod lock;
mod lock_delay;
mod lock_store;
mod multi;
mod owner;
mod repository;
mod resource_name;
mod semaphore;
mod session;
mod shared;
mod store_events;
mod tenant;
mod ttl;
mod usage_repository;
mod validation;

#[cfg(feature = "testing")]
pub mod testing;

pub use clock::{Clock, SystemClock};
pub use decisions::{
    available, decide_acquire, decide_acquire_among, decide_claim, decide_release,
    decide_release_among, decide_renew, decide_renew_among, decide_undo, is_expired, live_grants,
    live_holders, same_end, AcquireDecision, ClaimDecision, Holder, HolderDecision, RenewDecision,
};
pub use election::Leader;
pub use expired_hold::ExpiredHold;
pub use fence::{check_fence, check_lock_fence, check_permit_fence, FenceVerdict};
pub use fencing_token::FencingToken;
pub use force_reason::ForceReason;
pub use freed::{Freed, FreedLocks};
pub use history::{
    name_change, HistoryEvent, HistoryId, HistoryPage, HistoryQuery, HistoryRecord, HistorySubject,
    LeaseKind, RowLease, Side,
};
pub use history_repository::HistoryRepository;
pub use lease::{Capacity, Lease, LeaseValue, Weight, MAX_LEASE_VALUE_BYTES, MAX_SEMAPHORE_LIMIT};
pub use lease_op::{
    Claim, EndedLease, Grant, Holding, LeaseOp, LeaseOutcome, LeaseTerms, Place, Refusal,
};
pub use lease_store::{Applied, LeaseStore, NotHeld};
pub use listing::{ListLimit, ListPage, ListQuery, ListedLock, ResourcePrefix};
pub use lock::{AcquireOutcome, Lock, LockMode, ReleaseResult, RenewResult};
pub use lock_delay::{delayed_until, holding_places, place_is_free, LockDelay};
pub use lock_store::LockStore;
pub use multi::{LockSet, LockSetError, LockStep, MultiAcquireOutcome, MAX_LOCKS_AT_ONCE};
pub use owner::Owner;
pub use repository::{FreedHints, PoolState, RepositoryError, StoreHealth};
pub use resource_name::ResourceName;
pub use semaphore::{
    Permit, PermitReleaseResult, PermitRenewResult, PermitRequest, SemaphoreAcquireOutcome,
    SemaphorePage, SemaphoreState,
};
#[cfg(feature = "mock")]
pub use session::MockSessionStore;
pub use session::{
    sessions_tenant, ListedSession, Session, SessionEnd, SessionHold, SessionId, SessionOp,
    SessionOutcome, SessionPage, SessionQuery, SessionStore,
};
pub use shared::{
    decide_shared_undo, hold_of, holder_role, shared_lease, shared_lock, shared_row, Hold,
    HolderRole, SharedAcquireOutcome,
};
pub use store_events::{NoStoreEvents, StoreEvents, UnheardGrant, UnheardKind};
pub use tenant::Tenant;
pub use ttl::{Ttl, DEFAULT_MAX_TTL_SECONDS};
pub use usage_repository::LeaseUsage;
pub use validation::{ValidationError, CONTROL_CHARACTERS, WHITESPACE};

#[cfg(feature = "mock")]
pub use history_repository::MockHistoryRepository;
#[cfg(feature = "mock")]
pub use lease_store::MockLeaseStore;
#[cfg(feature = "mock")]
pub use repository::{MockFreedHints, MockStoreHealth};
#[cfg(feature = "mock")]
pub use usage_repository::MockLeaseUsage;
