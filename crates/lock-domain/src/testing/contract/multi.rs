//! Contract cases for multi-lock: all or nothing, each lock with its own token and mode, re-grants
//! of what the owner holds, and racing sets that overlap never both get a shared resource.

use crate::testing::calls::LeaseCalls;
use std::sync::Arc;

use futures::future::join_all;

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::shared::{hold, reader};
use super::Harness;
use crate::{Hold, LeaseValue, LockMode, LockSet, MultiAcquireOutcome, ResourceName};

fn set(who: &str, seconds: i64, locks: &[(&str, LockMode)]) -> LockSet {
    LockSet::new(
        crate::LeaseTerms::new(
            owner(who),
            ttl(seconds),
            LeaseValue::parse("\"batch\"".into()).ok(),
        ),
        locks.iter().map(|(n, m)| (name(n), *m)).collect(),
    )
    .expect("a valid set")
}

async fn all(repo: &dyn crate::LeaseStore, set: LockSet) -> MultiAcquireOutcome {
    repo.acquire_all(tenant(), set)
        .await
        .expect("acquire_all answers")
}

const X: LockMode = LockMode::Exclusive;
const S: LockMode = LockMode::Shared;

pub async fn a_set_is_granted_whole_in_request_order(h: &dyn Harness) {
    let repo = h.open().await;
    let before = granted(&*repo, "other", "z", 30).await;
    let MultiAcquireOutcome::Granted(locks) = all(
        &*repo,
        set("o", 30, &[("account:2", X), ("account:1", X), ("doc", S)]),
    )
    .await
    else {
        panic!("a free set is granted");
    };
    let names: Vec<&str> = locks.iter().map(|l| l.resource.as_str()).collect();
    assert_eq!(names, ["account:2", "account:1", "doc"]);
    let modes: Vec<LockMode> = locks.iter().map(|l| l.mode).collect();
    assert_eq!(modes, [X, X, S]);
    let mut tokens: Vec<i64> = locks.iter().map(|l| l.fencing_token.value()).collect();
    assert!(tokens.iter().all(|t| *t > before.fencing_token.value()));
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 3, "each lock its own token");
    assert!(locks.iter().all(|l| l.value.is_some()));
    assert_eq!(status(&*repo, "account:1").await, Some(locks[1].clone()));
    assert_eq!(
        hold(&*repo, "doc").await,
        Some(Hold::Shared(vec![locks[2].clone()]))
    );
    // The owner's own locks are re-granted with their tokens; a reader beside it is fine.
    reader(&*repo, "doc", "r", 30).await;
    let MultiAcquireOutcome::Granted(again) =
        all(&*repo, set("o", 30, &[("account:1", X), ("doc", S)])).await
    else {
        panic!("the owner's own set is re-granted");
    };
    assert_eq!(again[0].fencing_token, locks[1].fencing_token);
    assert_eq!(again[1].fencing_token, locks[2].fencing_token);
}

pub async fn a_set_with_one_lock_held_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    granted(&*repo, "b", "someone", 30).await;
    reader(&*repo, "r", "reader", 30).await;
    let outcome = all(
        &*repo,
        set("o", 30, &[("a", X), ("b", X), ("c", S), ("r", X)]),
    )
    .await;
    assert_eq!(
        outcome,
        MultiAcquireOutcome::Unavailable(vec![name("b"), name("r")])
    );
    assert_eq!(status(&*repo, "a").await, None, "nothing was granted");
    assert_eq!(hold(&*repo, "c").await, None);
    // A lock the owner holds in the other mode is unavailable too.
    let mine = reader(&*repo, "mine", "o", 30).await;
    assert_eq!(
        all(&*repo, set("o", 30, &[("a", X), ("mine", X)])).await,
        MultiAcquireOutcome::Unavailable(vec![name("mine")])
    );
    assert_eq!(hold(&*repo, "mine").await, Some(Hold::Shared(vec![mine])));
    assert_eq!(status(&*repo, "a").await, None);
    // Once the holders' leases end, the set is granted.
    let short = set("o2", 1, &[("s1", X), ("s2", S)]);
    assert!(matches!(
        all(&*repo, short).await,
        MultiAcquireOutcome::Granted(_)
    ));
    h.advance(PAST_SHORT).await;
    assert!(matches!(
        all(&*repo, set("o3", 30, &[("s2", X), ("s1", X)])).await,
        MultiAcquireOutcome::Granted(_)
    ));
}

pub async fn racing_overlapping_sets_are_each_all_or_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    // Eight owners race for sets that overlap in a ring: whoever wins a set holds all of it, and
    // no resource is granted to two of them.
    let names: Vec<String> = (0..8).map(|i| format!("ring:{i}")).collect();
    let outcomes = join_all((0..8).map(|i| {
        let repo = Arc::clone(&repo);
        let locks = [
            (names[i].clone(), X),
            (names[(i + 1) % 8].clone(), X),
            (names[(i + 3) % 8].clone(), X),
        ];
        async move {
            let locks: Vec<(&str, LockMode)> =
                locks.iter().map(|(n, m)| (n.as_str(), *m)).collect();
            (i, all(&*repo, set(&format!("racer-{i}"), 30, &locks)).await)
        }
    }))
    .await;
    let mut held: Vec<(ResourceName, String)> = Vec::new();
    for (i, outcome) in outcomes {
        if let MultiAcquireOutcome::Granted(locks) = outcome {
            assert_eq!(locks.len(), 3);
            for lock in locks {
                assert_eq!(lock.owner.as_str(), format!("racer-{i}"));
                held.push((lock.resource, lock.owner.into_string()));
            }
        }
    }
    assert!(!held.is_empty(), "someone won");
    let mut resources: Vec<&ResourceName> = held.iter().map(|(r, _)| r).collect();
    resources.sort_by_key(|r| r.as_str().to_owned());
    let before = resources.len();
    resources.dedup();
    assert_eq!(resources.len(), before, "a resource granted twice");
    for (resource, who) in &held {
        let now = status(&*repo, resource.as_str()).await.expect("held");
        assert_eq!(&now.owner.into_string(), who);
    }
}
