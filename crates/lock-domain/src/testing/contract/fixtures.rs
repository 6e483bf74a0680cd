//! The values and one-line calls every contract case uses: the default tenant, parsed names,
//! owners and TTLs, a grant that must succeed, and the lease lengths of the expiry cases.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use crate::{AcquireOutcome, Lock, Owner, ResourceName, Tenant, Ttl};

/// The lease the expiry cases use; a real-clock harness sleeps past it.
pub(super) const SHORT: Duration = Duration::from_secs(1);
/// Comfortably past [`SHORT`].
pub(super) const PAST_SHORT: Duration = Duration::from_millis(1_100);

/// The tenant of every case but the isolation ones.
pub(super) fn tenant() -> Tenant {
    Tenant::default_tenant()
}

pub(super) fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).expect("valid resource name")
}

pub(super) fn owner(raw: &str) -> Owner {
    Owner::parse(raw).expect("valid owner")
}

pub(super) fn ttl(seconds: i64) -> Ttl {
    Ttl::parse(seconds, 86_400).expect("valid ttl")
}

pub(super) async fn granted(
    repo: &dyn crate::LeaseStore,
    resource: &str,
    who: &str,
    seconds: i64,
) -> Lock {
    match repo
        .acquire(tenant(), name(resource), owner(who), ttl(seconds), None)
        .await
    {
        Ok(AcquireOutcome::Granted(lock)) => lock,
        other => panic!("expected {who} to be granted {resource}, got {other:?}"),
    }
}

pub(super) async fn status(repo: &dyn crate::LeaseStore, resource: &str) -> Option<Lock> {
    repo.status(tenant(), name(resource))
        .await
        .expect("status answers")
}
