//! The service's refusals as problems: a store failure, a full waiting line (429
//! `/problems/too-many-requests`) and a tenant's quota (429 `/problems/quota-exceeded`).

use lock_service::{AcquireError, OpenError, QuotaExceeded, WaitersFull};

use super::ProblemKind;

/// When a waiter refused for a full line may try again.
const WAITERS_FULL_RETRY_AFTER_SECONDS: u64 = 1;

impl From<AcquireError> for ProblemKind {
    fn from(error: AcquireError) -> Self {
        match error {
            AcquireError::Store(error) => error.into(),
            AcquireError::WaitersFull(full) => ProblemKind::TooManyRequests {
                detail: waiters_full_detail(full == WaitersFull::Tenant),
                retry_after_seconds: WAITERS_FULL_RETRY_AFTER_SECONDS,
            },
            AcquireError::QuotaExceeded(exceeded) => exceeded.into(),
            AcquireError::SessionNotFound => ProblemKind::SessionNotFound,
        }
    }
}

impl From<QuotaExceeded> for ProblemKind {
    fn from(exceeded: QuotaExceeded) -> Self {
        ProblemKind::QuotaExceeded(exceeded)
    }
}

impl From<OpenError> for ProblemKind {
    fn from(error: OpenError) -> Self {
        match error {
            OpenError::Store(error) => error.into(),
            OpenError::QuotaExceeded(exceeded) => exceeded.into(),
        }
    }
}

/// The detail of the 429 answered to a waiter beyond the limit (of its tenant, or in all).
pub(crate) fn waiters_full_detail(per_tenant: bool) -> String {
    let whose = if per_tenant { "of this tenant " } else { "" };
    format!(
        "too many acquires {whose}are waiting on this server; retry later, or without wait_seconds"
    )
}
