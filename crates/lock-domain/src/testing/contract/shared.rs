//! Contract cases for shared (read/write) locks: readers coexist, a writer excludes everyone,
//! each reader has its own lease and token, and a refusal names the holders that made it.

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::testing::calls::refusal;
use crate::testing::calls::LeaseCalls;
use crate::{
    AcquireOutcome, Claim, Grant, Hold, LeaseOp, LeaseTerms, Lock, LockDelay, LockMode, Place,
    Refusal, ReleaseResult, RenewResult, SharedAcquireOutcome,
};

pub(super) async fn reader(
    repo: &dyn crate::LeaseStore,
    resource: &str,
    who: &str,
    seconds: i64,
) -> Lock {
    match repo
        .acquire_shared(tenant(), name(resource), owner(who), ttl(seconds), None)
        .await
    {
        Ok(SharedAcquireOutcome::Granted(lock)) => lock,
        other => panic!("expected {who} to share {resource}, got {other:?}"),
    }
}

async fn shared_outcome(
    repo: &dyn crate::LeaseStore,
    resource: &str,
    who: &str,
) -> SharedAcquireOutcome {
    repo.acquire_shared(tenant(), name(resource), owner(who), ttl(30), None)
        .await
        .expect("acquire_shared answers")
}

pub(super) async fn hold(repo: &dyn crate::LeaseStore, resource: &str) -> Option<Hold> {
    repo.hold(tenant(), name(resource))
        .await
        .expect("hold answers")
}

fn owners(hold: Option<Hold>) -> Vec<String> {
    match hold {
        Some(Hold::Shared(holders)) => holders.into_iter().map(|l| l.owner.into_string()).collect(),
        other => panic!("expected a shared hold, got {other:?}"),
    }
}

pub async fn readers_share_a_lock_and_a_writer_is_refused(h: &dyn Harness) {
    let repo = h.open().await;
    let a = reader(&*repo, "doc", "a", 30).await;
    let b = reader(&*repo, "doc", "b", 10).await;
    assert_eq!((a.mode, b.mode), (LockMode::Shared, LockMode::Shared));
    assert!(
        b.fencing_token > a.fencing_token,
        "each reader its own token"
    );
    assert_eq!(owners(hold(&*repo, "doc").await), ["a", "b"]);
    // The writer is refused, and told by whom: the readers, in token order.
    let writer = repo
        .apply(
            tenant(),
            LeaseOp::Acquire {
                place: Place::Lock(name("doc")),
                claim: Claim::Exclusive,
                terms: LeaseTerms {
                    owner: owner("w"),
                    ttl: ttl(30),
                    value: None,
                    lock_delay: LockDelay::NONE,
                },
            },
        )
        .await
        .unwrap();
    match refusal(writer) {
        Refusal::Held {
            holders,
            available,
            delayed_until: None,
        } => {
            let readers: Vec<Lock> = holders.into_iter().map(Grant::into_lock).collect();
            assert_eq!(readers, [a.clone(), b.clone()]);
            assert!(available < u64::from(u32::MAX));
        }
        other => panic!("expected the readers named, got {other:?}"),
    }
    // Nobody but a holder releases; the lock still stands for both readers.
    assert_eq!(
        repo.release(tenant(), name("doc"), owner("w"))
            .await
            .unwrap(),
        ReleaseResult::Forbidden
    );
    let row = status(&*repo, "doc").await.expect("a live lock");
    assert_eq!(row.expires_at, a.expires_at);
    assert_eq!(owners(hold(&*repo, "doc").await), ["a", "b"]);
}

pub async fn a_writer_excludes_readers_and_a_mode_is_never_changed_in_place(h: &dyn Harness) {
    let repo = h.open().await;
    let w = granted(&*repo, "doc", "w", 30).await;
    assert_eq!(w.mode, LockMode::Exclusive);
    assert_eq!(
        shared_outcome(&*repo, "doc", "r").await,
        SharedAcquireOutcome::Held
    );
    assert_eq!(
        shared_outcome(&*repo, "doc", "w").await,
        SharedAcquireOutcome::ModeMismatch
    );
    assert_eq!(hold(&*repo, "doc").await, Some(Hold::Exclusive(w.clone())));
    assert_eq!(
        repo.release_held(tenant(), name("doc"), owner("w"))
            .await
            .unwrap(),
        ReleaseResult::Released(w.fencing_token)
    );
    let r = reader(&*repo, "doc", "r", 30).await;
    assert!(r.fencing_token > w.fencing_token);
    // A reader asking for the lock exclusively is refused by the exclusive rule itself.
    assert_eq!(
        repo.acquire(tenant(), name("doc"), owner("r"), ttl(30), None)
            .await
            .unwrap(),
        AcquireOutcome::Held
    );
    assert_eq!(owners(hold(&*repo, "doc").await), ["r"]);
}

pub async fn the_last_reader_leaving_lets_a_writer_in(h: &dyn Harness) {
    let repo = h.open().await;
    let a = reader(&*repo, "doc", "a", 30).await;
    let b = reader(&*repo, "doc", "b", 30).await;
    let release = |who: &'static str| {
        let repo = repo.clone();
        async move {
            repo.release_held(tenant(), name("doc"), owner(who))
                .await
                .unwrap()
        }
    };
    assert_eq!(release("a").await, ReleaseResult::Released(a.fencing_token));
    assert_eq!(release("a").await, ReleaseResult::Forbidden);
    assert_eq!(owners(hold(&*repo, "doc").await), ["b"]);
    let refused = repo
        .acquire(tenant(), name("doc"), owner("w"), ttl(30), None)
        .await
        .unwrap();
    assert_eq!(refused, AcquireOutcome::Held);
    assert_eq!(release("b").await, ReleaseResult::Released(b.fencing_token));
    assert_eq!(release("b").await, ReleaseResult::NotFound);
    assert_eq!(hold(&*repo, "doc").await, None);
    assert_eq!(status(&*repo, "doc").await, None);
    let w = granted(&*repo, "doc", "w", 30).await;
    assert!(w.fencing_token > b.fencing_token);
    assert_eq!(release("a").await, ReleaseResult::Forbidden);
}

pub async fn a_writer_takes_over_once_every_reader_has_expired(h: &dyn Harness) {
    let repo = h.open().await;
    reader(&*repo, "short", "a", 1).await;
    reader(&*repo, "short", "b", 1).await;
    reader(&*repo, "mixed", "a", 1).await;
    let long = reader(&*repo, "mixed", "b", 30).await;
    h.advance(PAST_SHORT).await;
    let w = granted(&*repo, "short", "w", 30).await;
    assert_eq!(hold(&*repo, "short").await, Some(Hold::Exclusive(w)));
    let refused = repo
        .acquire(tenant(), name("mixed"), owner("w"), ttl(30), None)
        .await
        .unwrap();
    assert_eq!(refused, AcquireOutcome::Held);
    assert_eq!(hold(&*repo, "mixed").await, Some(Hold::Shared(vec![long])));
    assert_eq!(
        repo.renew_held(tenant(), name("mixed"), owner("a"), ttl(30), None)
            .await
            .unwrap(),
        RenewResult::Forbidden
    );
}

pub async fn a_reader_is_regranted_and_renewed_on_its_own_lease(h: &dyn Harness) {
    let repo = h.open().await;
    let first = reader(&*repo, "doc", "a", 30).await;
    let other = reader(&*repo, "doc", "b", 30).await;
    let again = reader(&*repo, "doc", "a", 30).await;
    assert_eq!(
        again.fencing_token, first.fencing_token,
        "a re-grant keeps the token"
    );
    assert!(again.acquired_at >= first.acquired_at);
    let renewed = match repo
        .renew_held(tenant(), name("doc"), owner("b"), ttl(1), None)
        .await
        .unwrap()
    {
        RenewResult::Renewed(lock) => lock,
        other => panic!("expected a renewal, got {other:?}"),
    };
    assert_eq!(
        (renewed.mode, renewed.fencing_token, renewed.acquired_at),
        (LockMode::Shared, other.fencing_token, other.acquired_at)
    );
    assert!(renewed.expires_at < other.expires_at, "a renew may shorten");
    assert_eq!(
        repo.release_held(tenant(), name("doc"), owner("a"))
            .await
            .unwrap(),
        ReleaseResult::Released(first.fencing_token)
    );
    // The row follows the shortened lease: a writer may take the lock once it ends.
    let row = status(&*repo, "doc").await.expect("b still reads");
    assert_eq!(row.expires_at, renewed.expires_at);
    h.advance(PAST_SHORT).await;
    granted(&*repo, "doc", "w", 30).await;
    let exclusive = match repo
        .renew_held(tenant(), name("doc"), owner("w"), ttl(40), None)
        .await
        .unwrap()
    {
        RenewResult::Renewed(lock) => lock,
        other => panic!("expected a renewal, got {other:?}"),
    };
    assert_eq!(exclusive.mode, LockMode::Exclusive);
    assert_eq!(
        repo.renew_held(tenant(), name("free"), owner("w"), ttl(40), None)
            .await
            .unwrap(),
        RenewResult::NotFound
    );
}

pub async fn undo_shared_grant_ends_only_that_exact_grant(h: &dyn Harness) {
    let repo = h.open().await;
    let a = reader(&*repo, "doc", "a", 30).await;
    let regranted = reader(&*repo, "doc", "a", 30).await;
    let undo = |grant: Lock| {
        let repo = repo.clone();
        async move { repo.undo_shared_grant(tenant(), grant).await.unwrap() }
    };
    assert!(!undo(a.clone()).await, "not the current lease");
    assert!(!undo(regranted).await, "a re-grant is never undone");
    let b = reader(&*repo, "doc", "b", 30).await;
    assert!(undo(b.clone()).await);
    assert!(!undo(b).await, "already undone");
    assert_eq!(owners(hold(&*repo, "doc").await), ["a"]);
    let w = granted(&*repo, "other", "w", 30).await;
    assert!(
        !undo(Lock {
            mode: LockMode::Shared,
            ..w
        })
        .await
    );
}

pub async fn readers_and_sets_are_per_tenant(h: &dyn Harness) {
    let repo = h.open().await;
    reader(&*repo, "doc", "r", 30).await;
    let other = crate::Tenant::parse("other-tenant").expect("valid tenant");
    // Another tenant's lock of the same name is free for a writer, and shows no reader.
    let theirs = repo
        .acquire(other.clone(), name("doc"), owner("w"), ttl(30), None)
        .await
        .unwrap();
    assert!(
        matches!(theirs, AcquireOutcome::Granted(ref lock) if lock.mode == LockMode::Exclusive)
    );
    assert!(matches!(
        repo.hold(other.clone(), name("doc")).await.unwrap(),
        Some(Hold::Exclusive(_))
    ));
    assert_eq!(
        repo.release_held(other, name("doc"), owner("r"))
            .await
            .unwrap(),
        ReleaseResult::Forbidden
    );
    assert_eq!(owners(hold(&*repo, "doc").await), ["r"]);
}
