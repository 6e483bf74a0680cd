//! Contract cases for the namespaces of semaphores (apart from locks, and per tenant) and their
//! listing.

use super::fixtures::{granted, name, owner, tenant, PAST_SHORT};
use super::semaphores::{limit, owners, permit, request, state};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{
    ListLimit, ListQuery, PermitReleaseResult, ResourcePrefix, SemaphoreAcquireOutcome, Tenant,
};

pub async fn semaphores_are_apart_from_locks_and_tenants(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "shared-name", "locker", 30).await;
    let p = permit(&*repo, "shared-name", request("sem", 1, 1, 30)).await;
    assert!(
        p.lease.fencing_token > lock.fencing_token,
        "one counter for both"
    );
    assert_eq!(
        repo.status(tenant(), name("shared-name")).await.unwrap(),
        Some(lock)
    );
    let other = Tenant::parse("other-tenant").expect("valid tenant");
    assert_eq!(
        repo.semaphore(other.clone(), name("shared-name"))
            .await
            .unwrap(),
        None
    );
    let theirs = repo
        .acquire_permits(other.clone(), name("shared-name"), request("sem", 1, 7, 30))
        .await
        .unwrap();
    assert!(
        matches!(theirs, SemaphoreAcquireOutcome::Granted(_)),
        "{theirs:?}"
    );
    let mine = state(&*repo, "shared-name").await.expect("held");
    assert_eq!((mine.limit, mine.holders.len()), (limit(1), 1));
    let released = repo
        .release_permits(other, name("shared-name"), owner("sem"))
        .await
        .unwrap();
    assert!(matches!(released, PermitReleaseResult::Released(_)));
    assert_eq!(
        state(&*repo, "shared-name").await.expect("held").holders,
        vec![p.lease]
    );
}

pub async fn list_semaphores_pages_live_ones_in_name_order(h: &dyn Harness) {
    let repo = h.open().await;
    for name in ["job:b", "job:a", "job:c", "other", "job:d"] {
        permit(&*repo, name, request("x", 1, 3, 30)).await;
    }
    permit(&*repo, "job:a", request("y", 2, 3, 30)).await;
    permit(&*repo, "job:e", request("x", 1, 3, 1)).await;
    h.advance(PAST_SHORT).await;
    let page = |after: Option<&str>| {
        repo.list_semaphores(
            tenant(),
            ListQuery {
                prefix: ResourcePrefix::parse("job:").unwrap(),
                after: after.map(name),
                limit: ListLimit::parse(2).unwrap(),
            },
        )
    };
    let first = page(None).await.unwrap();
    let names = |p: &crate::SemaphorePage| -> Vec<String> {
        p.semaphores
            .iter()
            .map(|s| s.name.as_str().to_owned())
            .collect()
    };
    assert_eq!(names(&first), ["job:a", "job:b"]);
    assert!(first.has_more);
    assert_eq!(owners(&first.semaphores[0]), ["x", "y"]);
    let second = page(Some("job:b")).await.unwrap();
    assert_eq!(names(&second), ["job:c", "job:d"]);
    assert!(!second.has_more, "job:e has expired");
    let other = Tenant::parse("other-tenant").expect("valid tenant");
    let theirs = repo
        .list_semaphores(other, ListQuery::default())
        .await
        .unwrap();
    assert!(theirs.semaphores.is_empty());
}
