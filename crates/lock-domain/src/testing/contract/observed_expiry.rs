//! Contract cases for the expiries an observer saw of shared leases and semaphore grants: each is
//! recorded then, once, ends only that run-out lease, and leaves the next grant to record no
//! second expiry of it.

use super::fixtures::{name, owner, tenant, PAST_SHORT};
use super::history::{one, page, query, story};
use super::semaphores::{permit, request, state};
use super::shared::{hold, reader};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{FencingToken, HistoryEvent::*, Hold, LeaseKind, LockDelay};

/// A reader that ran out is ended and recorded once; the lock's live reader keeps its lease, and
/// the next reader's grant records no second expiry.
pub async fn an_expired_reader_an_observer_saw_is_recorded_once(h: &dyn Harness) {
    let repo = h.open().await;
    let alice = reader(&*repo, "doc", "alice", 1).await;
    let bob = reader(&*repo, "doc", "bob", 30).await;
    let record = |who: &'static str, token: FencingToken| {
        let repo = repo.clone();
        async move {
            repo.record_shared_expiry(tenant(), name("doc"), owner(who), token)
                .await
                .expect("record_shared_expiry answers")
        }
    };
    h.advance(PAST_SHORT).await;
    assert!(!record("bob", bob.fencing_token).await, "bob's is live");
    assert!(
        !record("alice", bob.fencing_token).await,
        "not alice's token"
    );
    assert!(record("alice", alice.fencing_token).await);
    assert!(!record("alice", alice.fencing_token).await, "recorded once");
    match hold(&*repo, "doc").await {
        Some(Hold::Shared(locks)) => {
            let owners: Vec<_> = locks.iter().map(|l| l.owner.as_str()).collect();
            assert_eq!(owners, vec!["bob"], "bob keeps his lease");
        }
        other => panic!("expected bob to share doc, got {other:?}"),
    }
    let carol = reader(&*repo, "doc", "carol", 30).await;
    assert!(carol.fencing_token > bob.fencing_token);
    let records = page(&*repo, tenant(), query(one(LeaseKind::Lock, "doc"), 100)).await;
    let (a, b, c) = (
        alice.fencing_token.value(),
        bob.fencing_token.value(),
        carol.fencing_token.value(),
    );
    assert_eq!(
        story(&records),
        vec![
            (Granted, "alice".to_owned(), a),
            (Granted, "bob".to_owned(), b),
            (Expired, "alice".to_owned(), a),
            (Granted, "carol".to_owned(), c),
        ]
    );
}

/// A semaphore grant that ran out is ended and recorded once, its permits free; one in its
/// lock-delay is left as it is (its permits stay taken) for the sweep to record.
pub async fn an_expired_permit_an_observer_saw_is_recorded_once(h: &dyn Harness) {
    let repo = h.open().await;
    let alice = permit(&*repo, "pool", request("alice", 1, 3, 1)).await;
    let bob = permit(&*repo, "pool", request("bob", 1, 3, 30)).await;
    let mut delayed = request("dave", 1, 3, 1);
    delayed.terms.lock_delay = LockDelay::parse(60).expect("valid lock-delay");
    let dave = permit(&*repo, "pool", delayed).await;
    let record = |who: &'static str, token: FencingToken| {
        let repo = repo.clone();
        async move {
            repo.record_permit_expiry(tenant(), name("pool"), owner(who), token)
                .await
                .expect("record_permit_expiry answers")
        }
    };
    h.advance(PAST_SHORT).await;
    assert!(
        !record("bob", bob.lease.fencing_token).await,
        "bob's is live"
    );
    assert!(
        !record("alice", bob.lease.fencing_token).await,
        "not alice's token"
    );
    assert!(
        !record("dave", dave.lease.fencing_token).await,
        "dave's permits are in their lock-delay"
    );
    assert!(record("alice", alice.lease.fencing_token).await);
    assert!(!record("alice", alice.lease.fencing_token).await, "once");
    let live = state(&*repo, "pool").await.expect("bob holds");
    assert_eq!(live.holders.len(), 1);
    assert_eq!(live.holders[0].owner.as_str(), "bob");
    // One permit is free: alice's ended, dave's still delays others.
    let carol = permit(&*repo, "pool", request("carol", 1, 3, 30)).await;
    assert!(matches!(
        repo.acquire_permits(tenant(), name("pool"), request("erin", 1, 3, 30))
            .await
            .expect("acquire answers"),
        crate::SemaphoreAcquireOutcome::Unavailable { .. }
    ));
    let records = page(
        &*repo,
        tenant(),
        query(one(LeaseKind::Semaphore, "pool"), 100),
    )
    .await;
    let token = |p: &crate::Permit| p.lease.fencing_token.value();
    assert_eq!(
        story(&records),
        vec![
            (Granted, "alice".to_owned(), token(&alice)),
            (Granted, "bob".to_owned(), token(&bob)),
            (Granted, "dave".to_owned(), token(&dave)),
            (Expired, "alice".to_owned(), token(&alice)),
            (Granted, "carol".to_owned(), token(&carol)),
        ]
    );
}

/// A writer taking over from readers that ran out ends their leases first: their expiries are
/// recorded before the writer's grant, not later at a sweep.
pub async fn a_writer_taking_over_from_run_out_readers_records_their_expiry_first(h: &dyn Harness) {
    let repo = h.open().await;
    let alice = reader(&*repo, "doc", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    let writer = super::fixtures::granted(&*repo, "doc", "wendy", 30).await;
    let records = page(&*repo, tenant(), query(one(LeaseKind::Lock, "doc"), 100)).await;
    let (a, w) = (alice.fencing_token.value(), writer.fencing_token.value());
    assert_eq!(
        story(&records),
        vec![
            (Granted, "alice".to_owned(), a),
            (Expired, "alice".to_owned(), a),
            (Granted, "wendy".to_owned(), w),
        ]
    );
}
