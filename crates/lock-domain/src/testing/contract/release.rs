//! Contract cases for release: only the live lease's owner ends it; anything else changes nothing.

use super::fixtures::{granted, name, owner, status, tenant, PAST_SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{Claim, LeaseOp, LeaseOutcome, LeaseTerms, LockDelay, Place, ReleaseResult, Ttl};

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

/// `apply_then`: a release and the acquire of the next in line, each answered as `apply` would
/// answer it alone, the acquire decided after the release (whether or not the store commits
/// them together).
pub async fn a_release_then_an_acquire_answer_as_one_after_the_other(h: &dyn Harness) {
    let repo = h.open().await;
    let first = granted(&*repo, "r", "alice", 30).await;
    let release = |who: &str| LeaseOp::Release {
        place: Place::Lock(name("r")),
        owner: owner(who),
    };
    let acquire = |who: &str| LeaseOp::Acquire {
        place: Place::Lock(name("r")),
        claim: Claim::Exclusive,
        terms: LeaseTerms {
            owner: owner(who),
            ttl: Ttl::parse(30, 86_400).expect("a TTL"),
            value: None,
            lock_delay: LockDelay::NONE,
        },
    };
    let (released, granted_next) = repo
        .apply_then(tenant(), release("alice"), acquire("bob"))
        .await;
    assert!(
        matches!(&released, Ok(LeaseOutcome::Released(ended)) if ended.fencing_token == first.fencing_token),
        "{released:?}"
    );
    let Ok(LeaseOutcome::Granted(next)) = granted_next else {
        panic!("the acquire after the release is granted: {granted_next:?}")
    };
    assert_eq!(next.lease.owner, owner("bob"));
    assert!(next.lease.fencing_token > first.fencing_token);
    assert_eq!(
        status(&*repo, "r").await.map(|lock| lock.fencing_token),
        Some(next.lease.fencing_token)
    );

    // A release that is refused changes nothing, and the acquire after it is decided on what
    // is there: refused, as held by bob.
    let (forbidden, refused) = repo
        .apply_then(tenant(), release("carol"), acquire("carol"))
        .await;
    assert!(
        matches!(forbidden, Ok(LeaseOutcome::Forbidden)),
        "{forbidden:?}"
    );
    assert!(
        matches!(refused, Ok(LeaseOutcome::Refused(_))),
        "{refused:?}"
    );
    assert_eq!(
        status(&*repo, "r").await.map(|lock| lock.owner),
        Some(owner("bob"))
    );
}
