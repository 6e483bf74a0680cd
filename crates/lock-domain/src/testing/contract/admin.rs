//! Contract cases for the admin operations: a force-release ends every live lease of one name
//! (exclusive, readers, semaphore grants) and nothing else, frees it at once, is recorded with
//! its reason, and the next grant draws a larger token.

use super::fixtures::{granted, name, owner, status, tenant, ttl};
use super::semaphores::{permit, request};
use super::shared::{hold, reader};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{
    AcquireOutcome, ForceReason, HistoryEvent, HistoryQuery, HistorySubject, LeaseKind, ListLimit,
    LockDelay, Tenant,
};

fn reason() -> ForceReason {
    ForceReason::parse("worker-9 is wedged (INC-4411)").expect("valid reason")
}

async fn last_records(
    repo: &dyn super::ContractStore,
    kind: LeaseKind,
    raw: &str,
) -> Vec<(HistoryEvent, String, Option<String>)> {
    repo.history(
        tenant(),
        HistoryQuery {
            subject: HistorySubject::One {
                kind,
                name: name(raw),
            },
            since: None,
            before: None,
            limit: ListLimit::parse(100).unwrap(),
        },
    )
    .await
    .expect("history answers")
    .records
    .into_iter()
    .rev()
    .map(|r| (r.event, r.owner.as_str().to_owned(), r.reason))
    .collect()
}

pub async fn a_force_release_ends_every_live_lease_of_one_name_and_frees_it(h: &dyn Harness) {
    let repo = h.open().await;
    // An exclusive lease with a lock-delay: ended, and its place is free at once all the same.
    let alice = match repo
        .acquire_with_delay(
            tenant(),
            name("r"),
            owner("alice"),
            ttl(30),
            None,
            LockDelay::parse(30).unwrap(),
        )
        .await
        .expect("acquire answers")
    {
        AcquireOutcome::Granted(lock) => lock,
        other => panic!("{other:?}"),
    };
    let untouched = granted(&*repo, "other", "carol", 30).await;
    let theirs = Tenant::parse("them").unwrap();
    repo.acquire(theirs.clone(), name("r"), owner("dave"), ttl(30), None)
        .await
        .expect("acquire answers");
    let ended = repo
        .force_release_lock(tenant(), name("r"), reason())
        .await
        .expect("force release answers");
    assert_eq!(ended, vec![alice.clone()]);
    assert_eq!(status(&*repo, "r").await, None);
    assert_eq!(status(&*repo, "other").await, Some(untouched));
    assert!(repo
        .status(theirs, name("r"))
        .await
        .expect("status answers")
        .is_some());
    let bob = granted(&*repo, "r", "bob", 30).await;
    assert!(bob.fencing_token > alice.fencing_token);
    let why = Some(reason().as_str().to_owned());
    assert_eq!(
        last_records(&*repo, LeaseKind::Lock, "r").await,
        vec![
            (HistoryEvent::Granted, "alice".to_owned(), None),
            (HistoryEvent::ForceReleased, "alice".to_owned(), why.clone()),
            (HistoryEvent::Granted, "bob".to_owned(), None),
        ]
    );
    // Nothing held: nothing ended, nothing recorded.
    let none = repo
        .force_release_lock(tenant(), name("free"), reason())
        .await
        .expect("force release answers");
    assert!(none.is_empty());
    assert!(last_records(&*repo, LeaseKind::Lock, "free")
        .await
        .is_empty());
    // Every reader of a shared lock.
    reader(&*repo, "doc", "r1", 30).await;
    reader(&*repo, "doc", "r2", 30).await;
    let ended = repo
        .force_release_lock(tenant(), name("doc"), reason())
        .await
        .expect("force release answers");
    let mut owners: Vec<&str> = ended.iter().map(|l| l.owner.as_str()).collect();
    owners.sort_unstable();
    assert_eq!(owners, ["r1", "r2"]);
    assert_eq!(hold(&*repo, "doc").await, None);
    let writer = granted(&*repo, "doc", "w", 30).await;
    assert!(ended.iter().all(|l| writer.fencing_token > l.fencing_token));
    // Every grant of a semaphore.
    permit(&*repo, "pool", request("p1", 1, 3, 30)).await;
    permit(&*repo, "pool", request("p2", 2, 3, 30)).await;
    let ended = repo
        .force_release_permits(tenant(), name("pool"), reason())
        .await
        .expect("force release answers");
    assert_eq!(ended.len(), 2);
    assert_eq!(
        repo.semaphore(tenant(), name("pool"))
            .await
            .expect("status answers"),
        None
    );
    let records = last_records(&*repo, LeaseKind::Semaphore, "pool").await;
    assert_eq!(records.len(), 4);
    assert!(records[2..]
        .iter()
        .all(|(event, _, why)| *event == HistoryEvent::ForceReleased && why.is_some()));
    permit(&*repo, "pool", request("p3", 3, 3, 30)).await;
}
