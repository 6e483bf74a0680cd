//! The contract case for undoing a grant nobody will use: only that exact new grant is ended.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::{Lock, ReleaseResult, RenewResult};

pub async fn undo_grant_ends_only_that_exact_grant(h: &dyn Harness) {
    let repo = h.open().await;
    let undo = |grant: &Lock| repo.undo_grant(tenant(), grant.clone());
    // The grant as made: undone, and the lock is free for anyone.
    let first = granted(&*repo, "r", "alice", 30).await;
    assert!(undo(&first).await.expect("undo answers"));
    assert_eq!(status(&*repo, "r").await, None);
    assert!(!undo(&first).await.expect("undo answers"), "undone twice");
    let bob = granted(&*repo, "r", "bob", 30).await;
    assert!(bob.fencing_token > first.fencing_token);
    // Another owner's lease, even with the same token value seen earlier, is not touched.
    assert!(!undo(&first).await.expect("undo answers"));
    assert_eq!(status(&*repo, "r").await, Some(bob.clone()));
    // A same-owner re-grant after the grant (a new acquired_at) is not the grant, and a
    // re-grant itself is never undone: its owner was told it holds the lease already.
    let old = granted(&*repo, "s", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let regrant = granted(&*repo, "s", "alice", 30).await;
    assert_eq!(regrant.fencing_token, old.fencing_token);
    assert!(!undo(&old).await.expect("undo answers"));
    assert!(
        !undo(&regrant).await.expect("undo answers"),
        "a re-grant undone"
    );
    assert_eq!(status(&*repo, "s").await, Some(regrant.clone()));
    // A renewal after the grant (a new expires_at) is not the grant either.
    h.advance(Duration::from_millis(200)).await;
    let renewed = match repo
        .renew(tenant(), name("s"), owner("alice"), ttl(60), None)
        .await
        .expect("renew answers")
    {
        RenewResult::Renewed(lock) => lock,
        other => panic!("expected a renewal, got {other:?}"),
    };
    assert!(!undo(&regrant).await.expect("undo answers"));
    assert!(!undo(&renewed).await.expect("undo answers"));
    assert_eq!(status(&*repo, "s").await, Some(renewed.clone()));
    // A new grant after a release is undone again.
    let released = repo
        .release(tenant(), name("s"), owner("alice"))
        .await
        .expect("release answers");
    assert!(matches!(released, ReleaseResult::Released(_)));
    let fresh = granted(&*repo, "s", "alice", 30).await;
    assert!(fresh.fencing_token > renewed.fencing_token);
    assert!(undo(&fresh).await.expect("undo answers"));
    assert_eq!(status(&*repo, "s").await, None);
    // An expired grant is over already: nothing to undo, and the next grant is new.
    let short = granted(&*repo, "t", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    assert!(!undo(&short).await.expect("undo answers"));
    let next = granted(&*repo, "t", "carol", 30).await;
    assert!(next.fencing_token > short.fencing_token);
}
