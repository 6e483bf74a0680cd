//! The tenants' use cases ([`Tenants`]): putting a limits table in force (a reload), the limits
//! of one tenant, the lease-length check and the usage report (the limits and the counts
//! themselves: `quota.rs`; the admission of grants and observers: `admission.rs`).

use lock_domain::{Tenant, Ttl};

use crate::core::Core;
use crate::quota::{Limit, LimitsTable, QuotaExceeded, QuotaUsage, TenantLimits};

/// The tenants' use cases: a view over the process's [`Core`], from
/// [`crate::LockService::tenants`].
#[derive(Clone, Copy)]
pub struct Tenants<'a> {
    pub(crate) core: &'a Core,
}

impl Tenants<'_> {
    /// Puts `table` in force for every later request (a reload). Leases, waiters and observers
    /// already admitted keep their places.
    pub fn set_limits(&self, table: LimitsTable) {
        self.core.quotas.replace(table);
    }

    /// The limits of `tenant` in force now.
    pub fn limits(&self, tenant: &Tenant) -> TenantLimits {
        self.core.quotas.of(tenant)
    }

    /// Whether `tenant` may ask for a lease of `ttl` (an acquire or a renew); a refusal is
    /// reported to the events port.
    ///
    /// # Errors
    /// [`QuotaExceeded`] for `max_ttl_seconds` when `ttl` is longer.
    pub fn check_ttl(&self, tenant: &Tenant, ttl: Ttl) -> Result<(), QuotaExceeded> {
        match self.core.quotas.of(tenant).get(Limit::MaxTtlSeconds) {
            Some(allowed) if u64::from(ttl.seconds()) > allowed => Err(self.core.over_quota(
                tenant,
                QuotaExceeded {
                    limit: Limit::MaxTtlSeconds,
                    allowed,
                },
            )),
            _ => Ok(()),
        }
    }

    /// Every limit in force, with what its tenant uses of it now (live leases and sessions
    /// counted by the store, one read per tenant with `max_live_leases` or `max_sessions`).
    pub async fn usage(&self) -> Vec<QuotaUsage> {
        let mut usage = Vec::new();
        for (tenant, limits) in self.core.quotas.table().tenants() {
            for limit in Limit::ALL {
                let Some(allowed) = limits.get(limit) else {
                    continue;
                };
                let used = match limit {
                    Limit::MaxLiveLeases => self.core.quotas.live_leases(&tenant).await.ok(),
                    Limit::MaxWaiters => Some(self.core.waiting.waiters_of_tenant(&tenant)),
                    Limit::MaxObservers => Some(self.core.quotas.observers_of(&tenant)),
                    Limit::MaxTtlSeconds => None,
                    Limit::MaxSessions => {
                        self.core.sessions.live_sessions(tenant.clone()).await.ok()
                    }
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
}
