//! Contract cases for renew: only the live lease's owner extends it, and only its expiry moves.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::RenewResult;

pub async fn renew_by_the_owner_moves_only_the_expiry(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let renewed = match repo
        .renew(tenant(), name("r"), owner("alice"), ttl(120), None)
        .await
        .expect("answers")
    {
        RenewResult::Renewed(renewed) => renewed,
        other => panic!("expected Renewed, got {other:?}"),
    };
    assert_eq!(renewed.acquired_at, lock.acquired_at);
    assert_eq!(renewed.fencing_token, lock.fencing_token);
    assert_eq!(renewed.owner, lock.owner);
    assert!(renewed.expires_at >= lock.acquired_at + chrono::TimeDelta::milliseconds(120_200));
    assert!(renewed.expires_at - renewed.acquired_at < chrono::TimeDelta::seconds(150));
    assert_eq!(status(&*repo, "r").await, Some(renewed));
}

pub async fn renew_keeps_a_short_lease_alive_past_its_first_expiry(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 1).await;
    h.advance(Duration::from_millis(600)).await;
    let renewed = repo
        .renew(tenant(), name("r"), owner("alice"), ttl(2), None)
        .await
        .expect("answers");
    assert!(matches!(renewed, RenewResult::Renewed(_)), "{renewed:?}");
    h.advance(Duration::from_millis(600)).await;
    let live = status(&*repo, "r")
        .await
        .expect("still live after its first expiry");
    assert_eq!(live.fencing_token, lock.fencing_token);
}

pub async fn renew_by_another_owner_is_forbidden_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    let result = repo
        .renew(tenant(), name("r"), owner("bob"), ttl(600), None)
        .await
        .expect("answers");
    assert_eq!(result, RenewResult::Forbidden);
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn renew_of_unknown_or_expired_lock_is_not_found(h: &dyn Harness) {
    let repo = h.open().await;
    let result = repo
        .renew(tenant(), name("never"), owner("alice"), ttl(30), None)
        .await
        .expect("answers");
    assert_eq!(result, RenewResult::NotFound);
    granted(&*repo, "r", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    let result = repo
        .renew(tenant(), name("r"), owner("alice"), ttl(30), None)
        .await
        .expect("answers");
    assert_eq!(
        result,
        RenewResult::NotFound,
        "an expired lock belongs to nobody"
    );
    assert_eq!(status(&*repo, "r").await, None);
}
