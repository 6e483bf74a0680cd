//! Contract cases for acquire: a free resource is granted, a held one refused, the owner's own
//! acquire re-granted with its token, and names and owners compared as literal, case-sensitive data.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use super::fixtures::{granted, name, owner, status, tenant, ttl};
use super::Harness;
use crate::AcquireOutcome;

pub async fn acquire_free_resource_is_granted(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "payment:42", "worker-7", 30).await;
    assert_eq!(lock.resource.as_str(), "payment:42");
    assert_eq!(lock.owner.as_str(), "worker-7");
    assert_eq!(
        lock.expires_at - lock.acquired_at,
        chrono::TimeDelta::seconds(30)
    );
    assert!(lock.fencing_token.value() > 0);
    assert_eq!(status(&*repo, "payment:42").await, Some(lock));
}

pub async fn acquire_held_by_another_owner_is_refused_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    let outcome = repo
        .acquire(tenant(), name("r"), owner("bob"), ttl(60), None)
        .await
        .expect("acquire answers");
    assert_eq!(outcome, AcquireOutcome::Held);
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn same_owner_reacquire_regrants_from_now_and_keeps_the_token(h: &dyn Harness) {
    let repo = h.open().await;
    let first = granted(&*repo, "r", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let second = granted(&*repo, "r", "alice", 60).await;
    assert_eq!(second.fencing_token, first.fencing_token);
    assert!(
        second.acquired_at > first.acquired_at,
        "{second:?} re-granted from now"
    );
    assert_eq!(
        second.expires_at - second.acquired_at,
        chrono::TimeDelta::seconds(60)
    );
    assert_eq!(status(&*repo, "r").await, Some(second));
}

pub async fn owners_and_names_are_case_sensitive_literal_data(h: &dyn Harness) {
    let repo = h.open().await;
    let hostile = "x'; DROP TABLE distributed_locks; --";
    let a = granted(&*repo, hostile, "Alice", 30).await;
    assert_eq!(a.resource.as_str(), hostile);
    let outcome = repo
        .acquire(tenant(), name(hostile), owner("alice"), ttl(30), None)
        .await
        .expect("answers");
    assert_eq!(
        outcome,
        AcquireOutcome::Held,
        "owner comparison is case-sensitive"
    );
    let upper = granted(&*repo, "X'; DROP TABLE distributed_locks; --", "bob", 30).await;
    assert_ne!(upper.fencing_token, a.fencing_token);
    let unicode = granted(&*repo, "ресурс/日本語 %_\\", "bob", 30).await;
    assert_eq!(status(&*repo, "ресурс/日本語 %_\\").await, Some(unicode));
    assert_eq!(status(&*repo, hostile).await, Some(a));
    assert_eq!(
        status(&*repo, "x'; drop table distributed_locks; --").await,
        None
    );
}
