//! Contract cases under contention: racing acquires have exactly one winner, and acquire/release
//! cycles of many workers never overlap.

use crate::testing::calls::LeaseCalls;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::future::join_all;

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::{AcquireOutcome, FencingToken, Lock, ReleaseResult};

pub async fn concurrent_acquires_of_a_free_resource_have_exactly_one_winner(h: &dyn Harness) {
    let repo = h.open().await;
    let outcomes = join_all((0..32).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire(
                tenant(),
                name("contended"),
                owner(&format!("racer-{i}")),
                ttl(30),
                None,
            )
            .await
        }
    }))
    .await;
    assert_single_winner(outcomes, &*repo, "contended").await;
}

pub async fn concurrent_acquires_of_an_expired_resource_have_exactly_one_winner(h: &dyn Harness) {
    let repo = h.open().await;
    let old = granted(&*repo, "stale", "crashed-holder", 1).await;
    h.advance(PAST_SHORT).await;
    let outcomes = join_all((0..32).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire(
                tenant(),
                name("stale"),
                owner(&format!("racer-{i}")),
                ttl(30),
                None,
            )
            .await
        }
    }))
    .await;
    let winner = assert_single_winner(outcomes, &*repo, "stale").await;
    assert!(winner.fencing_token > old.fencing_token);
}

async fn assert_single_winner(
    outcomes: Vec<Result<AcquireOutcome, crate::RepositoryError>>,
    repo: &dyn crate::LeaseStore,
    resource: &str,
) -> Lock {
    let mut winners = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(AcquireOutcome::Granted(lock)) => winners.push(lock),
            Ok(AcquireOutcome::Held) => {}
            Err(error) => panic!("no acquire may fail under contention: {error:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner, got {winners:?}");
    let winner = winners.pop().expect("one winner");
    assert_eq!(status(repo, resource).await, Some(winner.clone()));
    winner
}

/// Many workers cycling acquire/release on one resource: never two holders at once, every grant a
/// new, larger-than-ever token per resource, and no errors.
pub async fn contended_acquire_release_cycles_never_overlap(h: &dyn Harness) {
    let repo = h.open().await;
    let held = Arc::new(AtomicBool::new(false));
    let results = join_all((0..16).map(|worker| {
        let repo = Arc::clone(&repo);
        let held = Arc::clone(&held);
        async move {
            let me = owner(&format!("worker-{worker}"));
            let mut tokens = Vec::new();
            let mut grants = 0;
            let mut attempts = 0;
            while grants < 5 && attempts < 10_000 {
                attempts += 1;
                match repo
                    .acquire(tenant(), name("hot"), me.clone(), ttl(60), None)
                    .await
                    .expect("acquire answers")
                {
                    AcquireOutcome::Held => tokio_free_yield().await,
                    AcquireOutcome::Granted(lock) => {
                        assert!(!held.swap(true, Ordering::SeqCst), "two holders at once");
                        tokens.push(lock.fencing_token);
                        grants += 1;
                        held.store(false, Ordering::SeqCst);
                        let result = repo
                            .release(tenant(), name("hot"), me.clone())
                            .await
                            .expect("release answers");
                        assert_eq!(result, ReleaseResult::Released(lock.fencing_token));
                    }
                }
            }
            assert_eq!(grants, 5, "worker {worker} starved");
            tokens
        }
    }))
    .await;
    let all: Vec<FencingToken> = results.into_iter().flatten().collect();
    let distinct: HashSet<FencingToken> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "a fencing token was issued twice"
    );
}

/// Yields to other futures without depending on a particular runtime.
pub(super) async fn tokio_free_yield() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}
