//! The tenant-limit use cases of [`LockService`]: putting a limits table in force (a reload),
//! the usage report, the lease-length check, and the admission of grants and observers under
//! the tenant's limits (the limits and the counts themselves: `quota.rs`).

use std::future::Future;

use lock_domain::{RepositoryError, Tenant, Ttl};

use crate::quota::{
    Count, LeaseGate, Limit, LimitsTable, ObserverSeat, OpenError, QuotaExceeded, QuotaUsage,
    Refusal, TenantLimits,
};
use crate::service::{AcquireError, LockService};

impl LockService {
    /// Puts `table` in force for every later request (a reload). Leases, waiters and observers
    /// already admitted keep their places.
    pub fn set_tenant_limits(&self, table: LimitsTable) {
        self.quotas.replace(table);
    }

    /// The limits of `tenant` in force now.
    pub fn tenant_limits(&self, tenant: &Tenant) -> TenantLimits {
        self.quotas.of(tenant)
    }

    /// Whether `tenant` may ask for a lease of `ttl` (an acquire or a renew); a refusal is
    /// reported to the events port.
    ///
    /// # Errors
    /// [`QuotaExceeded`] for `max_ttl_seconds` when `ttl` is longer.
    pub fn check_ttl(&self, tenant: &Tenant, ttl: Ttl) -> Result<(), QuotaExceeded> {
        match self.quotas.of(tenant).get(Limit::MaxTtlSeconds) {
            Some(allowed) if u64::from(ttl.seconds()) > allowed => Err(self.over_quota(
                tenant,
                QuotaExceeded {
                    limit: Limit::MaxTtlSeconds,
                    allowed,
                },
            )),
            _ => Ok(()),
        }
    }

    /// Every limit in force, with what its tenant uses of it now (live leases counted by the
    /// store, one read per tenant with `max_live_leases`).
    pub async fn quota_usage(&self) -> Vec<QuotaUsage> {
        let mut usage = Vec::new();
        for (tenant, limits) in self.quotas.table().tenants() {
            for limit in Limit::ALL {
                let Some(allowed) = limits.get(limit) else {
                    continue;
                };
                let used = match limit {
                    Limit::MaxLiveLeases => self.quotas.live_leases(&tenant).await.ok(),
                    Limit::MaxWaiters => Some(self.waiting.waiters_of_tenant(&tenant)),
                    Limit::MaxObservers => Some(self.quotas.observers_of(&tenant)),
                    Limit::MaxTtlSeconds => None,
                };
                usage.push(QuotaUsage {
                    tenant: tenant.clone(),
                    limit,
                    allowed,
                    used,
                });
            }
        }
        usage
    }

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
