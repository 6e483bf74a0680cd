//! Contract cases for semaphores: permits never add up to more than the limit, one grant per
//! owner, limits that change only when nobody holds, tokens, values and undo (the namespaces and
//! the listing are in `semaphore_namespaces.rs`).

use crate::testing::calls::LeaseCalls;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;

use super::fixtures::{name, owner, tenant, ttl, PAST_SHORT};
use super::{ContractStore, Harness};
use crate::{
    Capacity, LeaseValue, Permit, PermitReleaseResult, PermitRenewResult, PermitRequest,
    SemaphoreAcquireOutcome, SemaphoreState, Weight,
};

pub(super) fn limit(n: i64) -> Capacity {
    Capacity::semaphore_limit(n).expect("valid limit")
}

pub(super) fn request(who: &str, permits: i64, of: i64, seconds: i64) -> PermitRequest {
    PermitRequest {
        permits: Weight::permits(permits, limit(of)).expect("valid permits"),
        limit: limit(of),
        terms: crate::LeaseTerms::new(owner(who), ttl(seconds), None),
    }
}

fn value(json: &str) -> LeaseValue {
    LeaseValue::parse(json.to_owned()).expect("valid value")
}

async fn acquire(
    repo: &dyn ContractStore,
    semaphore: &str,
    request: PermitRequest,
) -> SemaphoreAcquireOutcome {
    repo.acquire_permits(tenant(), name(semaphore), request)
        .await
        .expect("acquire answers")
}

pub(super) async fn permit(
    repo: &dyn ContractStore,
    semaphore: &str,
    request: PermitRequest,
) -> Permit {
    match acquire(repo, semaphore, request).await {
        SemaphoreAcquireOutcome::Granted(permit) => permit,
        other => panic!("expected a grant of {semaphore}, got {other:?}"),
    }
}

pub(super) async fn state(repo: &dyn ContractStore, semaphore: &str) -> Option<SemaphoreState> {
    repo.semaphore(tenant(), name(semaphore))
        .await
        .expect("status answers")
}

pub(super) fn owners(state: &SemaphoreState) -> Vec<String> {
    state
        .holders
        .iter()
        .map(|lease| lease.owner.as_str().to_owned())
        .collect()
}

pub async fn permits_are_granted_up_to_the_limit_and_no_further(h: &dyn Harness) {
    let repo = h.open().await;
    let a = permit(&*repo, "pool", request("a", 2, 3, 30)).await;
    assert_eq!(a.name.as_str(), "pool");
    assert_eq!(a.lease.owner.as_str(), "a");
    assert_eq!((a.lease.weight.get(), a.lease.capacity.get()), (2, 3));
    assert_eq!(
        a.lease.expires_at - a.lease.acquired_at,
        ttl(30).as_time_delta()
    );
    assert_eq!(a.lease.value, None);
    assert_eq!(
        acquire(&*repo, "pool", request("b", 2, 3, 30)).await,
        SemaphoreAcquireOutcome::Unavailable {
            limit: limit(3),
            available: 1
        }
    );
    let b = permit(&*repo, "pool", request("b", 1, 3, 30)).await;
    assert!(b.lease.fencing_token > a.lease.fencing_token);
    assert_eq!(
        acquire(&*repo, "pool", request("c", 1, 3, 30)).await,
        SemaphoreAcquireOutcome::Unavailable {
            limit: limit(3),
            available: 0
        }
    );
    let held = state(&*repo, "pool").await.expect("held");
    assert_eq!(owners(&held), ["a", "b"]);
    assert_eq!((held.limit, held.in_use()), (limit(3), 3));
    assert_eq!(held.holders, vec![a.lease, b.lease]);
    assert_eq!(state(&*repo, "never").await, None);
}

pub async fn the_same_owner_is_regranted_its_permits_or_refused_others(h: &dyn Harness) {
    let repo = h.open().await;
    let first = permit(&*repo, "s", request("me", 2, 5, 30)).await;
    h.advance(Duration::from_millis(200)).await;
    let again = permit(&*repo, "s", request("me", 2, 5, 60)).await;
    assert_eq!(again.lease.fencing_token, first.lease.fencing_token);
    assert!(again.lease.acquired_at > first.lease.acquired_at);
    assert_eq!(
        again.lease.expires_at - again.lease.acquired_at,
        ttl(60).as_time_delta()
    );
    assert_eq!(
        acquire(&*repo, "s", request("me", 3, 5, 30)).await,
        SemaphoreAcquireOutcome::PermitsMismatch(Weight::permits(2, limit(5)).unwrap())
    );
    let held = state(&*repo, "s").await.expect("held");
    assert_eq!(
        held.holders,
        vec![again.lease],
        "one grant per owner, unchanged"
    );
}

pub async fn a_limit_is_kept_while_a_holder_is_live(h: &dyn Harness) {
    let repo = h.open().await;
    permit(&*repo, "s", request("a", 1, 4, 1)).await;
    assert_eq!(
        acquire(&*repo, "s", request("b", 1, 5, 30)).await,
        SemaphoreAcquireOutcome::LimitMismatch(limit(4))
    );
    assert_eq!(state(&*repo, "s").await.expect("held").limit, limit(4));
    h.advance(PAST_SHORT).await;
    let b = permit(&*repo, "s", request("b", 5, 5, 30)).await;
    assert_eq!(b.lease.capacity, limit(5));
    assert_eq!(state(&*repo, "s").await.expect("held").limit, limit(5));
}

pub async fn releasing_frees_the_permits_of_that_owner_only(h: &dyn Harness) {
    let repo = h.open().await;
    let a = permit(&*repo, "s", request("a", 2, 2, 30)).await;
    let release = |who: &str| repo.release_permits(tenant(), name("s"), owner(who));
    assert_eq!(release("b").await.unwrap(), PermitReleaseResult::NotFound);
    assert_eq!(
        state(&*repo, "s").await.expect("held").holders,
        vec![a.lease.clone()]
    );
    assert_eq!(
        release("a").await.unwrap(),
        PermitReleaseResult::Released(a.lease.fencing_token)
    );
    assert_eq!(release("a").await.unwrap(), PermitReleaseResult::NotFound);
    assert_eq!(state(&*repo, "s").await, None);
    let b = permit(&*repo, "s", request("b", 2, 2, 30)).await;
    assert!(b.lease.fencing_token > a.lease.fencing_token);
    // An expired grant is nobody's to release.
    permit(&*repo, "t", request("a", 1, 2, 1)).await;
    h.advance(PAST_SHORT).await;
    let expired = repo.release_permits(tenant(), name("t"), owner("a")).await;
    assert_eq!(expired.unwrap(), PermitReleaseResult::NotFound);
}

pub async fn expired_holders_free_their_permits(h: &dyn Harness) {
    let repo = h.open().await;
    let short = permit(&*repo, "s", request("short", 2, 3, 1)).await;
    let long = permit(&*repo, "s", request("long", 1, 3, 30)).await;
    assert!(matches!(
        acquire(&*repo, "s", request("c", 2, 3, 30)).await,
        SemaphoreAcquireOutcome::Unavailable { available: 0, .. }
    ));
    h.advance(PAST_SHORT).await;
    assert_eq!(
        state(&*repo, "s").await.expect("held").holders,
        vec![long.lease.clone()]
    );
    let c = permit(&*repo, "s", request("c", 2, 3, 30)).await;
    assert!(c.lease.fencing_token > long.lease.fencing_token);
    // The owner whose grant ran out gets a new one, with a new token.
    let back = permit(&*repo, "t", request("short", 1, 3, 30)).await;
    assert!(back.lease.fencing_token > short.lease.fencing_token);
}

pub async fn a_permit_renew_moves_only_the_expiry_and_the_value_it_carries(h: &dyn Harness) {
    let repo = h.open().await;
    let mut with_value = request("a", 1, 2, 1);
    with_value.terms.value = Some(value(r#"{"host":"10.0.0.1"}"#));
    let a = permit(&*repo, "s", with_value).await;
    assert_eq!(a.lease.value, Some(value(r#"{"host":"10.0.0.1"}"#)));
    h.advance(Duration::from_millis(500)).await;
    let renew = |who: &str, seconds: i64, new: Option<LeaseValue>| {
        repo.renew_permits(tenant(), name("s"), owner(who), ttl(seconds), new)
    };
    let PermitRenewResult::Renewed(kept) = renew("a", 30, None).await.unwrap() else {
        panic!("the holder renews");
    };
    assert_eq!(kept.lease.fencing_token, a.lease.fencing_token);
    assert_eq!(kept.lease.acquired_at, a.lease.acquired_at);
    assert_eq!(kept.lease.value, a.lease.value, "no value keeps the value");
    assert!(kept.lease.expires_at > a.lease.expires_at);
    let PermitRenewResult::Renewed(replaced) = renew("a", 30, Some(value("[1,2]"))).await.unwrap()
    else {
        panic!("the holder renews");
    };
    assert_eq!(replaced.lease.value, Some(value("[1,2]")));
    assert_eq!(
        renew("b", 30, None).await.unwrap(),
        PermitRenewResult::NotFound
    );
    h.advance(PAST_SHORT).await;
    // Renewed past its first end: still live.
    assert_eq!(
        state(&*repo, "s").await.expect("held").holders,
        vec![replaced.lease]
    );
    // A renew may shorten the lease; once it ends, there is nothing to renew.
    renew("a", 1, None).await.unwrap();
    h.advance(PAST_SHORT).await;
    assert_eq!(
        renew("a", 30, None).await.unwrap(),
        PermitRenewResult::NotFound
    );
    assert_eq!(state(&*repo, "s").await, None);
}

pub async fn a_regrant_replaces_the_value_only_when_given(h: &dyn Harness) {
    let repo = h.open().await;
    let mut first = request("a", 1, 2, 30);
    first.terms.value = Some(value("\"v1\""));
    permit(&*repo, "s", first).await;
    let kept = permit(&*repo, "s", request("a", 1, 2, 30)).await;
    assert_eq!(kept.lease.value, Some(value("\"v1\"")));
    let mut second = request("a", 1, 2, 30);
    second.terms.value = Some(value("\"v2\""));
    let replaced = permit(&*repo, "s", second).await;
    assert_eq!(replaced.lease.value, Some(value("\"v2\"")));
    assert_eq!(
        state(&*repo, "s").await.expect("held").holders,
        vec![replaced.lease]
    );
}

pub async fn concurrent_acquires_never_exceed_the_limit(h: &dyn Harness) {
    let repo = h.open().await;
    let outcomes = join_all((0..32).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire_permits(
                tenant(),
                name("race"),
                request(&format!("racer-{i}"), 1, 5, 30),
            )
            .await
        }
    }))
    .await;
    let mut tokens = HashSet::new();
    for outcome in outcomes {
        match outcome.expect("no acquire may fail under contention") {
            SemaphoreAcquireOutcome::Granted(permit) => {
                assert!(tokens.insert(permit.lease.fencing_token), "a token twice");
            }
            SemaphoreAcquireOutcome::Unavailable { available: 0, .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(tokens.len(), 5, "exactly the limit is granted");
    assert_eq!(state(&*repo, "race").await.expect("held").in_use(), 5);
}

/// Workers cycling acquire/release of 2 permits of 5: never more than 5 held at once (checked
/// by a counter moved only by granted and released callers), and no errors.
pub async fn contended_permit_cycles_never_exceed_the_limit(h: &dyn Harness) {
    let repo = h.open().await;
    let in_use = Arc::new(AtomicU64::new(0));
    let results = join_all((0..12).map(|worker| {
        let repo = Arc::clone(&repo);
        let in_use = Arc::clone(&in_use);
        async move {
            let who = format!("worker-{worker}");
            for _ in 0..10 {
                let outcome = repo
                    .acquire_permits(tenant(), name("cycle"), request(&who, 2, 5, 30))
                    .await
                    .expect("acquire answers");
                if let SemaphoreAcquireOutcome::Granted(_) = outcome {
                    let now = in_use.fetch_add(2, Ordering::SeqCst) + 2;
                    assert!(now <= 5, "{now} permits held at once");
                    super::concurrency::tokio_free_yield().await;
                    in_use.fetch_sub(2, Ordering::SeqCst);
                    let released = repo
                        .release_permits(tenant(), name("cycle"), owner(&who))
                        .await
                        .expect("release answers");
                    assert!(matches!(released, PermitReleaseResult::Released(_)));
                }
            }
        }
    }))
    .await;
    assert_eq!(results.len(), 12);
}

pub async fn undo_permit_grant_ends_only_that_exact_grant(h: &dyn Harness) {
    let repo = h.open().await;
    let undo = |grant: &Permit| repo.undo_permit_grant(tenant(), grant.clone());
    let first = permit(&*repo, "s", request("a", 1, 2, 30)).await;
    let other = permit(&*repo, "s", request("b", 1, 2, 30)).await;
    assert!(undo(&first).await.unwrap());
    assert!(!undo(&first).await.unwrap(), "undone twice");
    assert_eq!(
        state(&*repo, "s").await.expect("held").holders,
        vec![other.lease.clone()]
    );
    // A re-grant is never undone, nor is the grant it continued.
    let old = permit(&*repo, "t", request("a", 1, 2, 30)).await;
    h.advance(Duration::from_millis(200)).await;
    let regrant = permit(&*repo, "t", request("a", 1, 2, 30)).await;
    assert!(!undo(&old).await.unwrap());
    assert!(!undo(&regrant).await.unwrap());
    // A renewal after the grant is not the grant.
    let fresh = permit(&*repo, "u", request("a", 1, 2, 30)).await;
    h.advance(Duration::from_millis(200)).await;
    repo.renew_permits(tenant(), name("u"), owner("a"), ttl(60), None)
        .await
        .unwrap();
    assert!(!undo(&fresh).await.unwrap());
    assert_eq!(
        state(&*repo, "t").await.expect("held").holders,
        vec![regrant.lease]
    );
    assert_eq!(state(&*repo, "u").await.expect("held").holders.len(), 1);
}
