//! The admission of grants and observers under their tenant's limits, and the report of a
//! refusal: what every primitive's use cases ask of the [`Core`] before a grant (the limits and
//! the counts themselves: `quota.rs`).

use std::future::Future;

use lock_domain::{RepositoryError, Tenant};

use crate::core::Core;
use crate::outcomes::AcquireError;
use crate::quota::{Count, LeaseGate, ObserverSeat, OpenError, QuotaExceeded, Refusal};

impl Core {
    /// Admits a grant of `tenant` that would add `wanted` leases (see [`Quotas::admit`]); a
    /// refusal is reported to the events port. The gate returned is held until the grant is
    /// made.
    ///
    /// # Errors
    /// [`AcquireError::QuotaExceeded`] for `max_live_leases`; [`AcquireError::Store`] when the
    /// store could not count.
    pub(crate) async fn admit_leases<F, Held>(
        &self,
        tenant: &Tenant,
        wanted: u64,
        already_held: F,
    ) -> Result<LeaseGate, AcquireError>
    where
        F: FnOnce() -> Held,
        Held: Future<Output = Result<u64, RepositoryError>>,
    {
        self.quotas
            .admit(tenant, wanted, Count::Exact, already_held)
            .await
            .map_err(|refusal| self.quota_refused(tenant, refusal))
    }

    /// The error of a grant not admitted, reported when it is over a quota.
    pub(crate) fn quota_refused(&self, tenant: &Tenant, refusal: Refusal) -> AcquireError {
        match refusal {
            Refusal::Exceeded(exceeded) => {
                AcquireError::QuotaExceeded(self.over_quota(tenant, exceeded))
            }
            Refusal::Store(error) => AcquireError::Store(error),
        }
    }

    /// A place in `tenant`'s count of observers, kept by the stream it opens.
    pub(crate) fn observer_seat(&self, tenant: &Tenant) -> Result<ObserverSeat, OpenError> {
        self.quotas
            .observer_seat(tenant)
            .map_err(|exceeded| OpenError::QuotaExceeded(self.over_quota(tenant, exceeded)))
    }

    /// Reports a refusal (an election's as its tenant's), and gives it back.
    pub(crate) fn over_quota(&self, tenant: &Tenant, exceeded: QuotaExceeded) -> QuotaExceeded {
        let namespace_of = tenant.election_namespace_of();
        let tenant = namespace_of.as_ref().unwrap_or(tenant);
        self.events.quota_exceeded(tenant, exceeded);
        exceeded
    }
}
