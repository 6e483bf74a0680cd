//! Contract cases for release: only the live lease's owner ends it; anything else changes nothing.

use super::fixtures::{granted, name, owner, status, tenant, PAST_SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::ReleaseResult;

pub async fn release_by_the_owner_deletes_the_lock(h: &dyn Harness) {
    let repo = h.open().await;
    granted(&*repo, "r", "alice", 30).await;
    let result = repo
        .release(tenant(), name("r"), owner("alice"))
        .await
        .expect("release answers");
    assert!(matches!(result, ReleaseResult::Released(_)), "{result:?}");
    assert_eq!(status(&*repo, "r").await, None);
    let again = repo
        .release(tenant(), name("r"), owner("alice"))
        .await
        .expect("release answers");
    assert_eq!(again, ReleaseResult::NotFound);
    granted(&*repo, "r", "bob", 30).await;
}

pub async fn release_by_another_owner_is_forbidden_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    for intruder in ["bob", "Alice", "alice2"] {
        let result = repo
            .release(tenant(), name("r"), owner(intruder))
            .await
            .expect("release answers");
        assert_eq!(result, ReleaseResult::Forbidden, "{intruder}");
    }
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn release_of_unknown_or_expired_lock_is_not_found(h: &dyn Harness) {
    let repo = h.open().await;
    let result = repo
        .release(tenant(), name("never"), owner("alice"))
        .await
        .expect("answers");
    assert_eq!(result, ReleaseResult::NotFound);
    granted(&*repo, "r", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    for who in ["alice", "bob"] {
        let result = repo
            .release(tenant(), name("r"), owner(who))
            .await
            .expect("answers");
        assert_eq!(
            result,
            ReleaseResult::NotFound,
            "{who} releasing an expired lock"
        );
    }
}
