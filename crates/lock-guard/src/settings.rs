//! When a [`crate::LockGuard`] renews (a [`crate::SessionGuard`] keeps its session alive) and
//! how much of the lease (the session) it trusts.

use std::time::Duration;

use lock_domain::{Tenant, Ttl};

/// Renewal timing of a guard. [`GuardSettings::for_ttl`] gives the defaults. For a
/// [`crate::SessionGuard`], "renewal" is the session's keepalive and "lease" the session.
#[derive(Debug, Clone)]
pub struct GuardSettings {
    /// The tenant whose lock this is ([`Tenant::default_tenant`] for a server without API keys).
    pub tenant: Tenant,
    /// Time between renewals after a successful one (default ttl/3).
    pub renew_every: Duration,
    /// Time before the next attempt after a failed renewal (default ttl/10, at least 50 ms).
    pub retry_every: Duration,
    /// The part of the lease the guard does not count on (default ttl/10, at least 100 ms):
    /// it covers clock-rate differences between this process and the database and the time
    /// the caller needs between checking [`crate::LockGuard::is_safe`] and finishing a write.
    pub safety_margin: Duration,
    /// Longest wait for one repository call (default ttl/3).
    pub call_timeout: Duration,
}

impl GuardSettings {
    /// The default timing for a lease of `ttl`, in the default tenant.
    pub fn for_ttl(ttl: Ttl) -> Self {
        let ttl = ttl.as_duration();
        Self {
            tenant: Tenant::default_tenant(),
            renew_every: ttl / 3,
            retry_every: (ttl / 10).max(Duration::from_millis(50)),
            safety_margin: (ttl / 10).max(Duration::from_millis(100)),
            call_timeout: ttl / 3,
        }
    }
}
