//! Contract cases for a lease that ran out: another owner takes it over with a larger token, and
//! only such takeovers are counted.

use super::fixtures::{granted, name, owner, tenant, PAST_SHORT, SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::ReleaseResult;

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
