//! Contract case for the count of a tenant's live leases (its quota's usage): every kind counts,
//! one per holder, and nothing ended or of another tenant does.

use super::fixtures::{granted, name, owner, tenant, ttl, PAST_SHORT};
use super::semaphores::{permit, request};
use super::shared::reader;
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::Tenant;

pub async fn live_leases_are_counted_per_tenant_one_per_holder(h: &dyn Harness) {
    let repo = h.open().await;
    let count = |t: Tenant| {
        let repo = repo.clone();
        async move { repo.count_live_leases(t).await.expect("count answers") }
    };
    assert_eq!(count(tenant()).await, 0);
    granted(&*repo, "a", "alice", 30).await;
    granted(&*repo, "short", "bob", 1).await;
    // Two readers of one lock: two leases.
    reader(&*repo, "doc", "r1", 30).await;
    reader(&*repo, "doc", "r2", 30).await;
    // One holder of two permits, one of one: two leases.
    permit(&*repo, "pool", request("p1", 2, 5, 30)).await;
    permit(&*repo, "pool", request("p2", 1, 5, 30)).await;
    // An election's leader, in the tenant's election namespace: one lease.
    repo.acquire(
        tenant().elections(),
        name("leader"),
        owner("c1"),
        ttl(30),
        None,
    )
    .await
    .expect("acquire answers");
    // A re-grant is the same lease.
    granted(&*repo, "a", "alice", 30).await;
    // Another tenant's leases count for it alone.
    let theirs = Tenant::parse("them").expect("valid tenant");
    repo.acquire(theirs.clone(), name("a"), owner("dave"), ttl(30), None)
        .await
        .expect("acquire answers");
    assert_eq!(count(tenant()).await, 7);
    assert_eq!(count(theirs).await, 1);
    // Ended leases count none: released, and run out.
    repo.release_held(tenant(), name("doc"), owner("r1"))
        .await
        .expect("release answers");
    h.advance(PAST_SHORT).await;
    assert_eq!(count(tenant()).await, 5);
}
