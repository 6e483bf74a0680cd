//! Contract cases for a lease that ran out: another owner takes it over with a larger token, only
//! such takeovers are counted, and every lease whose end is recorded `expired` is handed to
//! metrics once, with how long it was held.

use std::time::Duration;

use super::fixtures::{granted, name, owner, tenant, PAST_SHORT, SHORT};
use super::semaphores::{permit, request};
use super::shared::reader;
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{ExpiredHold, LeaseKind, ReleaseResult};

pub async fn expired_lock_is_taken_over_with_a_larger_token(h: &dyn Harness) {
    let repo = h.open().await;
    let old = granted(&*repo, "r", "alice", SHORT.as_secs() as i64).await;
    h.advance(PAST_SHORT).await;
    let new = granted(&*repo, "r", "bob", 30).await;
    assert_eq!(new.owner.as_str(), "bob");
    assert!(
        new.fencing_token > old.fencing_token,
        "{new:?} after {old:?}"
    );
    assert!(new.acquired_at > old.acquired_at);
    let again = granted(&*repo, "other", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    let same_owner = granted(&*repo, "other", "alice", 30).await;
    assert!(
        same_owner.fencing_token > again.fencing_token,
        "a grant after expiry is a new grant, even for the same owner"
    );
}

pub async fn expired_takeovers_count_only_leases_that_ran_out(h: &dyn Harness) {
    let repo = h.open().await;
    let before = repo.count_expired_takeovers().await.expect("count answers");
    granted(&*repo, "let-expire", "alice", SHORT.as_secs() as i64).await;
    granted(&*repo, "released", "bob", 30).await;
    assert!(matches!(
        repo.release(tenant(), name("released"), owner("bob"))
            .await
            .expect("release answers"),
        ReleaseResult::Released(_)
    ));
    granted(&*repo, "same-owner", "carol", SHORT.as_secs() as i64).await;
    h.advance(PAST_SHORT).await;
    granted(&*repo, "let-expire", "bob", 30).await;
    granted(&*repo, "released", "dave", 30).await;
    granted(&*repo, "same-owner", "carol", 30).await;
    granted(&*repo, "free", "erin", 30).await;
    assert_eq!(
        repo.count_expired_takeovers().await.expect("count answers"),
        before + 1,
        "only bob's grant took over a lease that ran out (not a released one, not carol's own, \
         not a free resource)"
    );
}

/// A lock taken over, a reader and a permit whose expiry an observer recorded: each is taken
/// once, by whichever store over the storage takes first, held for its TTL; a released lease and
/// a live one are not.
pub async fn leases_that_ran_out_are_taken_once_with_how_long_they_were_held(h: &dyn Harness) {
    let repo = h.open().await;
    let take = |repo: std::sync::Arc<dyn super::ContractStore>, limit: u32| async move {
        repo.take_expired_holds(limit)
            .await
            .expect("take_expired_holds answers")
    };
    granted(&*repo, "taken-over", "alice", SHORT.as_secs() as i64).await;
    granted(&*repo, "released", "bob", SHORT.as_secs() as i64).await;
    assert!(matches!(
        repo.release(tenant(), name("released"), owner("bob"))
            .await
            .expect("release answers"),
        ReleaseResult::Released(_)
    ));
    let carol = reader(&*repo, "doc", "carol", SHORT.as_secs() as i64).await;
    let dave = permit(
        &*repo,
        "pool",
        request("dave", 1, 3, SHORT.as_secs() as i64),
    )
    .await;
    granted(&*repo, "live", "erin", 30).await;
    assert_eq!(take(repo.clone(), 100).await, vec![], "nothing ran out yet");
    h.advance(PAST_SHORT).await;
    granted(&*repo, "taken-over", "frank", 30).await;
    assert!(repo
        .record_shared_expiry(tenant(), name("doc"), owner("carol"), carol.fencing_token)
        .await
        .expect("record_shared_expiry answers"));
    assert!(repo
        .record_permit_expiry(
            tenant(),
            name("pool"),
            owner("dave"),
            dave.lease.fencing_token
        )
        .await
        .expect("record_permit_expiry answers"));
    let mut taken = take(repo.clone(), 2).await;
    assert_eq!(taken.len(), 2, "at most the limit: {taken:?}");
    let other = h.open().await;
    taken.extend(take(other.clone(), 100).await);
    taken.sort_by_key(|hold| (hold.kind.as_str(), hold.shared));
    let held = |kind, shared| ExpiredHold {
        kind,
        shared,
        held: Duration::from_secs(SHORT.as_secs()),
    };
    assert_eq!(
        taken,
        vec![
            held(LeaseKind::Lock, false),
            held(LeaseKind::Lock, true),
            held(LeaseKind::Semaphore, false),
        ],
        "alice's lock, carol's read and dave's permit, each held for its TTL"
    );
    assert_eq!(take(repo.clone(), 100).await, vec![], "each is taken once");
    assert_eq!(take(other, 100).await, vec![], "by one store only");
}
