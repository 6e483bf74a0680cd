//! Contract cases for what a refusal and a look say: an acquire refused names the holders that
//! kept it out (each with its end), the lock-delay that keeps a place (until when), or the mode,
//! limit or permits the caller's own lease has, from the decision that refused it; a look tells
//! the holders and a place's lock-delay in one read.

use super::fixtures::{name, owner, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::testing::calls::refusal;
use crate::{
    Capacity, Claim, Grant, Holding, LeaseOp, LeaseStore, LeaseTerms, LockDelay, LockMode, Place,
    Refusal, Weight,
};

fn terms(who: &str, seconds: i64, delay_seconds: i64) -> LeaseTerms {
    LeaseTerms {
        owner: owner(who),
        ttl: ttl(seconds),
        value: None,
        lock_delay: LockDelay::parse(delay_seconds).expect("a valid lock-delay"),
    }
}

fn lock(raw: &str) -> Place {
    Place::Lock(name(raw))
}

fn semaphore(raw: &str) -> Place {
    Place::Semaphore(name(raw))
}

fn permits(permits: i64, limit: i64) -> Claim {
    let limit = Capacity::semaphore_limit(limit).expect("a valid limit");
    Claim::Permits {
        permits: Weight::permits(permits, limit).expect("valid permits"),
        limit,
    }
}

async fn acquire(
    repo: &dyn LeaseStore,
    place: Place,
    claim: Claim,
    terms: LeaseTerms,
) -> Result<Grant, Refusal> {
    let op = LeaseOp::Acquire {
        place,
        claim,
        terms,
    };
    repo.apply(tenant(), op)
        .await
        .expect("acquire answers")
        .acquired()
        .expect("an acquire's outcome")
}

async fn look(repo: &dyn LeaseStore, place: Place) -> Holding {
    repo.apply(tenant(), LeaseOp::Look(place))
        .await
        .expect("look answers")
        .looked()
        .expect("a look's outcome")
}

pub async fn a_refused_acquire_says_who_holds_until_when_or_which_mode(h: &dyn Harness) {
    let repo = h.open().await;
    let repo: &dyn LeaseStore = &*repo;
    let held = acquire(repo, lock("r"), Claim::Exclusive, terms("a", 30, 0))
        .await
        .expect("granted");
    // Another owner, in either mode: held by `a`, until its end.
    for claim in [Claim::Exclusive, Claim::Shared] {
        match acquire(repo, lock("r"), claim, terms("b", 30, 0)).await {
            Err(Refusal::Held {
                holders,
                available: 0,
                delayed_until: None,
            }) => assert_eq!(holders, std::slice::from_ref(&held), "{claim:?}"),
            other => panic!("{claim:?}: expected held by a, got {other:?}"),
        }
    }
    // The holder asking for the other mode is told the mode it holds.
    assert_eq!(
        acquire(repo, lock("r"), Claim::Shared, terms("a", 30, 0)).await,
        Err(Refusal::ModeMismatch(LockMode::Exclusive))
    );
    // A reader asking to write is told it reads; a writer is told who reads.
    let reader = acquire(repo, lock("doc"), Claim::Shared, terms("r1", 30, 0))
        .await
        .expect("a reader");
    assert_eq!(
        acquire(repo, lock("doc"), Claim::Exclusive, terms("r1", 30, 0)).await,
        Err(Refusal::ModeMismatch(LockMode::Shared))
    );
    match acquire(repo, lock("doc"), Claim::Exclusive, terms("w", 30, 0)).await {
        Err(Refusal::Held { holders, .. }) => assert_eq!(holders, std::slice::from_ref(&reader)),
        other => panic!("expected held by the reader, got {other:?}"),
    }
    // A look says the same in one read.
    assert_eq!(
        look(repo, lock("r")).await,
        Holding {
            holders: vec![held],
            delayed_until: None
        }
    );
    assert_eq!(look(repo, lock("doc")).await.holders, [reader]);
    assert_eq!(look(repo, lock("free")).await, Holding::default());
}

pub async fn a_place_kept_by_a_lock_delay_is_refused_until_the_delay_ends(h: &dyn Harness) {
    let repo = h.open().await;
    let repo: &dyn LeaseStore = &*repo;
    // 1 s lease, 30 s delay (long enough for a real-clock store under load).
    let paused = acquire(repo, lock("r"), Claim::Exclusive, terms("paused", 1, 30))
        .await
        .expect("granted");
    h.advance(PAST_SHORT).await;
    let until = paused.lease.expires_at + chrono::TimeDelta::seconds(30);
    for claim in [Claim::Exclusive, Claim::Shared] {
        assert_eq!(
            acquire(repo, lock("r"), claim, terms("other", 30, 0)).await,
            Err(Refusal::Delayed { until }),
            "{claim:?}"
        );
    }
    assert_eq!(
        look(repo, lock("r")).await,
        Holding {
            holders: vec![],
            delayed_until: Some(until)
        }
    );
    // Its own owner may come back.
    assert!(
        acquire(repo, lock("r"), Claim::Exclusive, terms("paused", 30, 0))
            .await
            .is_ok()
    );
}

pub async fn a_refused_permit_says_the_room_the_limit_or_the_permits(h: &dyn Harness) {
    let repo = h.open().await;
    let repo: &dyn LeaseStore = &*repo;
    let a = acquire(repo, semaphore("s"), permits(3, 5), terms("a", 30, 0))
        .await
        .expect("granted");
    let b = acquire(repo, semaphore("s"), permits(1, 5), terms("b", 30, 0))
        .await
        .expect("granted");
    match acquire(repo, semaphore("s"), permits(2, 5), terms("c", 30, 0)).await {
        Err(Refusal::Held {
            holders,
            available: 1,
            delayed_until: None,
        }) => assert_eq!(holders, [a.clone(), b.clone()]),
        other => panic!("expected 1 of 5 free, held by a and b, got {other:?}"),
    }
    assert_eq!(
        acquire(repo, semaphore("s"), permits(1, 6), terms("c", 30, 0)).await,
        Err(Refusal::LimitMismatch(
            Capacity::semaphore_limit(5).unwrap()
        ))
    );
    assert_eq!(
        acquire(repo, semaphore("s"), permits(2, 5), terms("a", 30, 0)).await,
        Err(Refusal::PermitsMismatch(
            Weight::permits(3, Capacity::semaphore_limit(5).unwrap()).unwrap()
        ))
    );
    assert_eq!(
        look(repo, semaphore("s")).await,
        Holding {
            holders: vec![a, b],
            delayed_until: None
        }
    );
    // Permits kept by a lock-delay count as taken, and the refusal says until when.
    let paused = acquire(repo, semaphore("t"), permits(2, 2), terms("paused", 1, 30))
        .await
        .expect("granted");
    h.advance(PAST_SHORT).await;
    let until = paused.lease.expires_at + chrono::TimeDelta::seconds(30);
    assert_eq!(
        refusal(
            repo.apply(
                tenant(),
                LeaseOp::Acquire {
                    place: semaphore("t"),
                    claim: permits(1, 2),
                    terms: terms("other", 30, 0),
                },
            )
            .await
            .unwrap()
        ),
        Refusal::Held {
            holders: vec![],
            available: 0,
            delayed_until: Some(until),
        }
    );
    assert_eq!(
        look(repo, semaphore("t")).await,
        Holding {
            holders: vec![],
            delayed_until: Some(until)
        }
    );
}
