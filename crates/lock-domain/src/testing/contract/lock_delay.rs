//! Contract cases for lock-delay: a lease that ran out keeps its place from other owners (in
//! either mode, alone or in a set) until its `expires_at` plus its delay; its own owner may come
//! back; a release, and a lease with no delay, leave no delay; the delay is the ended lease's own.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use super::fixtures::{name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::{
    AcquireOutcome, LeaseValue, Lock, LockDelay, LockMode, LockSet, MultiAcquireOutcome,
    SharedAcquireOutcome,
};

fn delay(seconds: i64) -> LockDelay {
    LockDelay::parse(seconds).expect("a valid lock-delay")
}

async fn acquire(
    repo: &dyn super::ContractStore,
    resource: &str,
    who: &str,
    seconds: i64,
    lock_delay: LockDelay,
) -> Option<Lock> {
    match repo
        .acquire_with_delay(
            tenant(),
            name(resource),
            owner(who),
            ttl(seconds),
            None,
            lock_delay,
        )
        .await
        .expect("acquire answers")
    {
        AcquireOutcome::Granted(lock) => Some(lock),
        AcquireOutcome::Held => None,
    }
}

pub async fn a_lease_that_ran_out_keeps_its_place_for_its_lock_delay(h: &dyn Harness) {
    let repo = h.open().await;
    let repo = &*repo;
    // 1 s lease, 30 s delay: it runs out, and its place stays taken for 30 s more (long enough
    // that a real-clock store under load is still inside the delay when it is checked).
    let paused = acquire(repo, "r", "paused", 1, delay(30))
        .await
        .expect("granted");
    assert_eq!(
        repo.available_at(tenant(), name("r")).await.unwrap(),
        None,
        "live: held, not delayed"
    );
    h.advance(PAST_SHORT).await;
    assert_eq!(status(repo, "r").await, None, "the lease has ended");
    let available_at = paused.expires_at + chrono::TimeDelta::seconds(30);
    assert_eq!(
        repo.available_at(tenant(), name("r")).await.unwrap(),
        Some(available_at)
    );
    assert_eq!(acquire(repo, "r", "other", 30, LockDelay::NONE).await, None);
    let shared = repo
        .acquire_shared(tenant(), name("r"), owner("reader"), ttl(30), None)
        .await
        .unwrap();
    assert_eq!(shared, SharedAcquireOutcome::Held, "a reader waits too");
    let set = LockSet::new(
        crate::LeaseTerms::new(owner("batch"), ttl(30), LeaseValue::parse("1".into()).ok()),
        vec![
            (name("free"), LockMode::Exclusive),
            (name("r"), LockMode::Exclusive),
        ],
    )
    .expect("a valid set");
    assert_eq!(
        repo.acquire_all(tenant(), set).await.unwrap(),
        MultiAcquireOutcome::Unavailable(vec![name("r")]),
        "and so does a set"
    );
    // Its own owner may come back (a new lease, a new token), with no delay this time.
    let back = acquire(repo, "r", "paused", 1, LockDelay::NONE)
        .await
        .expect("its owner");
    assert!(back.fencing_token > paused.fencing_token);
    h.advance(PAST_SHORT).await;
    assert_eq!(repo.available_at(tenant(), name("r")).await.unwrap(), None);
    let other = acquire(repo, "r", "other", 30, LockDelay::NONE).await;
    assert!(
        other.is_some(),
        "the lease without delay left its place at its end"
    );

    // A release leaves no delay.
    acquire(repo, "released", "a", 30, delay(60))
        .await
        .expect("granted");
    repo.release(tenant(), name("released"), owner("a"))
        .await
        .unwrap();
    assert_eq!(
        repo.available_at(tenant(), name("released")).await.unwrap(),
        None
    );
    assert!(acquire(repo, "released", "b", 30, LockDelay::NONE)
        .await
        .is_some());

    // Once the delay is over, anyone may take the place (3 s of delay: still inside it at the
    // first try under load, surely over after the second wait).
    acquire(repo, "over", "a", 1, delay(3))
        .await
        .expect("granted");
    h.advance(PAST_SHORT).await;
    assert_eq!(acquire(repo, "over", "b", 30, LockDelay::NONE).await, None);
    h.advance(Duration::from_millis(3_000)).await;
    assert!(acquire(repo, "over", "b", 30, LockDelay::NONE)
        .await
        .is_some());
}

pub async fn a_semaphore_grant_that_ran_out_keeps_its_permits_for_its_lock_delay(h: &dyn Harness) {
    use crate::{PermitRequest, SemaphoreAcquireOutcome, Weight};
    let repo = h.open().await;
    let repo = &*repo;
    let limit = crate::Capacity::semaphore_limit(2).expect("a valid limit");
    let request = |who: &str, seconds: i64, lock_delay: LockDelay| PermitRequest {
        permits: Weight::permits(1, limit).expect("valid permits"),
        limit,
        terms: crate::LeaseTerms {
            owner: owner(who),
            ttl: ttl(seconds),
            value: None,
            lock_delay,
        },
    };
    let take = |who: &'static str, seconds: i64, lock_delay: LockDelay| async move {
        repo.acquire_permits(tenant(), name("s"), request(who, seconds, lock_delay))
            .await
            .expect("acquire answers")
    };
    let SemaphoreAcquireOutcome::Granted(paused) = take("paused", 1, delay(30)).await else {
        panic!("paused is granted");
    };
    assert!(matches!(
        take("live", 30, LockDelay::NONE).await,
        SemaphoreAcquireOutcome::Granted(_)
    ));
    h.advance(PAST_SHORT).await;
    // paused's grant ran out: one permit is live, the other is still taken by its delay.
    let state = repo
        .semaphore(tenant(), name("s"))
        .await
        .unwrap()
        .expect("held");
    assert_eq!(state.holders.len(), 1, "only the live grant shows");
    assert_eq!(
        repo.permits_available_at(tenant(), name("s"))
            .await
            .unwrap(),
        Some(paused.lease.expires_at + chrono::TimeDelta::seconds(30))
    );
    assert!(matches!(
        take("other", 30, LockDelay::NONE).await,
        SemaphoreAcquireOutcome::Unavailable { available: 0, .. }
    ));
    // Its own owner may come back.
    assert!(matches!(
        take("paused", 1, LockDelay::NONE).await,
        SemaphoreAcquireOutcome::Granted(_)
    ));
    h.advance(PAST_SHORT).await;
    assert_eq!(
        repo.permits_available_at(tenant(), name("s"))
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        take("other", 30, LockDelay::NONE).await,
        SemaphoreAcquireOutcome::Granted(_)
    ));
    // A release frees the permits at once.
    assert!(matches!(
        take("x", 30, delay(60)).await,
        SemaphoreAcquireOutcome::Unavailable { .. }
    ));
    repo.release_permits(tenant(), name("s"), owner("other"))
        .await
        .unwrap();
    assert!(matches!(
        take("x", 30, delay(60)).await,
        SemaphoreAcquireOutcome::Granted(_)
    ));
    repo.release_permits(tenant(), name("s"), owner("x"))
        .await
        .unwrap();
    assert!(matches!(
        take("y", 30, LockDelay::NONE).await,
        SemaphoreAcquireOutcome::Granted(_)
    ));
}
