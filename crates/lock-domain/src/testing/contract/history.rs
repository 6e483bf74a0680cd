//! Contract cases for durable history: every change to a lease of every kind is recorded with
//! the write, named by `name_change`, per tenant, in commit order, and read back a page at a time.

use crate::testing::calls::LeaseCalls;
use std::collections::HashSet;
use std::time::Duration;

use super::fixtures::{granted, name, owner, tenant, ttl, PAST_SHORT};
use super::semaphores::{permit, request};
use super::shared::reader;
use super::{ContractStore, Harness};
use crate::{
    AcquireOutcome, HistoryEvent, HistoryId, HistoryQuery, HistoryRecord, HistorySubject,
    LeaseKind, ListLimit, ResourcePrefix, Tenant,
};

use HistoryEvent::*;

pub(super) fn query(subject: HistorySubject, limit: i64) -> HistoryQuery {
    HistoryQuery {
        subject,
        since: None,
        before: None,
        limit: ListLimit::parse(limit).expect("valid limit"),
    }
}

pub(super) fn one(kind: LeaseKind, raw: &str) -> HistorySubject {
    HistorySubject::One {
        kind,
        name: name(raw),
    }
}

fn everything() -> HistorySubject {
    HistorySubject::Prefix(ResourcePrefix::default())
}

pub(super) async fn page(
    repo: &dyn ContractStore,
    tenant: Tenant,
    q: HistoryQuery,
) -> Vec<HistoryRecord> {
    repo.history(tenant, q)
        .await
        .expect("history answers")
        .records
}

/// `(event, owner, token)` of each record, oldest first.
pub(super) fn story(newest_first: &[HistoryRecord]) -> Vec<(HistoryEvent, String, i64)> {
    newest_first
        .iter()
        .rev()
        .map(|r| {
            (
                r.event,
                r.owner.as_str().to_owned(),
                r.fencing_token.value(),
            )
        })
        .collect()
}

pub async fn every_change_to_a_lock_is_recorded_in_order(h: &dyn Harness) {
    let repo = h.open().await;
    let first = granted(&*repo, "r", "alice", 30).await;
    h.advance(Duration::from_millis(50)).await;
    granted(&*repo, "r", "alice", 30).await; // a re-grant
    h.advance(Duration::from_millis(50)).await;
    repo.renew(tenant(), name("r"), owner("alice"), ttl(40), None)
        .await
        .expect("renew answers");
    repo.release(tenant(), name("r"), owner("alice"))
        .await
        .expect("release answers");
    let bob = granted(&*repo, "r", "bob", 1).await;
    h.advance(PAST_SHORT).await;
    let carol = granted(&*repo, "r", "carol", 30).await;
    assert!(repo
        .undo_grant(tenant(), carol.clone())
        .await
        .expect("undo answers"));
    // Refusals change nothing, so they record nothing.
    let dave = granted(&*repo, "r", "dave", 30).await;
    let refused = repo
        .acquire(tenant(), name("r"), owner("erin"), ttl(30), None)
        .await
        .expect("acquire answers");
    assert_eq!(refused, AcquireOutcome::Held);

    let records = page(&*repo, tenant(), query(one(LeaseKind::Lock, "r"), 100)).await;
    let (a, b, c, d) = (
        first.fencing_token.value(),
        bob.fencing_token.value(),
        carol.fencing_token.value(),
        dave.fencing_token.value(),
    );
    let expected: Vec<(HistoryEvent, String, i64)> = [
        (Granted, "alice", a),
        (Regranted, "alice", a),
        (Renewed, "alice", a),
        (Released, "alice", a),
        (Granted, "bob", b),
        (Expired, "bob", b),
        (Granted, "carol", c),
        (Undone, "carol", c),
        (Granted, "dave", d),
    ]
    .into_iter()
    .map(|(e, o, t)| (e, o.to_owned(), t))
    .collect();
    assert_eq!(story(&records), expected);
    assert!(
        records.windows(2).all(|w| w[0].id > w[1].id),
        "newest first"
    );
    assert!(
        records.windows(2).all(|w| w[0].at >= w[1].at),
        "committed in order"
    );
    assert!(records.iter().all(|r| r.kind == LeaseKind::Lock
        && r.tenant == tenant()
        && r.reason.is_none()
        && !r.shared));
}

pub async fn semaphores_readers_and_elections_are_recorded_by_kind_and_tenant(h: &dyn Harness) {
    let repo = h.open().await;
    let grant = permit(&*repo, "pool", request("alice", 2, 3, 30)).await;
    repo.release_permits(tenant(), name("pool"), owner("alice"))
        .await
        .expect("release answers");
    let read = reader(&*repo, "doc", "bob", 30).await;
    let elections = tenant().elections();
    let leader = match repo
        .acquire(
            elections.clone(),
            name("doc"),
            owner("carol"),
            ttl(30),
            None,
        )
        .await
        .expect("campaign answers")
    {
        AcquireOutcome::Granted(lock) => lock,
        other => panic!("expected carol to lead, got {other:?}"),
    };
    let other = Tenant::parse("other").expect("valid tenant");
    let theirs = repo
        .acquire(other.clone(), name("doc"), owner("dave"), ttl(30), None)
        .await
        .expect("acquire answers");
    assert!(matches!(theirs, AcquireOutcome::Granted(_)));

    let sem = page(
        &*repo,
        tenant(),
        query(one(LeaseKind::Semaphore, "pool"), 10),
    )
    .await;
    assert_eq!(
        story(&sem),
        vec![
            (
                Granted,
                "alice".to_owned(),
                grant.lease.fencing_token.value()
            ),
            (
                Released,
                "alice".to_owned(),
                grant.lease.fencing_token.value()
            ),
        ]
    );
    let lock = page(&*repo, tenant(), query(one(LeaseKind::Lock, "doc"), 10)).await;
    assert_eq!(
        story(&lock),
        vec![(Granted, "bob".to_owned(), read.fencing_token.value())]
    );
    assert!(lock[0].shared, "a reader's lease is a shared one");
    let election = page(&*repo, tenant(), query(one(LeaseKind::Election, "doc"), 10)).await;
    assert_eq!(
        story(&election),
        vec![(Granted, "carol".to_owned(), leader.fencing_token.value())]
    );
    assert_eq!(
        election[0].tenant,
        tenant(),
        "an election's tenant is the tenant"
    );
    // The tenant's whole history has its four records and nothing of the other tenant's.
    let all = page(&*repo, tenant(), query(everything(), 100)).await;
    let kinds: HashSet<LeaseKind> = all.iter().map(|r| r.kind).collect();
    assert_eq!(all.len(), 4);
    assert_eq!(kinds.len(), 3);
    let theirs = page(&*repo, other, query(everything(), 100)).await;
    assert_eq!(story(&theirs).len(), 1);
    assert_eq!(theirs[0].owner, owner("dave"));
    let prefixed = page(
        &*repo,
        tenant(),
        query(
            HistorySubject::Prefix(ResourcePrefix::parse("po").unwrap()),
            100,
        ),
    )
    .await;
    assert!(prefixed.iter().all(|r| r.name == name("pool")) && prefixed.len() == 2);
}

pub async fn history_pages_and_the_stream_see_each_record_once_and_pruning_drops_the_oldest(
    h: &dyn Harness,
) {
    let repo = h.open().await;
    for i in 0..7 {
        granted(&*repo, &format!("n{i}"), "alice", 30).await;
    }
    // Pages of two, by cursor: every record once, newest first.
    let mut seen: Vec<HistoryId> = vec![];
    let mut q = query(everything(), 2);
    loop {
        let page = repo
            .history(tenant(), q.clone())
            .await
            .expect("history answers");
        assert!(page.records.len() <= 2);
        seen.extend(page.records.iter().map(|r| r.id));
        match page.next {
            Some(cursor) => q.before = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7);
    assert!(seen.windows(2).all(|w| w[0] > w[1]));
    // The stream's read: oldest first, every tenant, from any id on.
    let all = repo
        .history_after(None, 100)
        .await
        .expect("history_after answers");
    assert_eq!(all.len(), 7);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(
        repo.last_history_id().await.expect("answers"),
        Some(all[6].id)
    );
    let rest = repo
        .history_after(Some(all[3].id), 2)
        .await
        .expect("answers");
    assert_eq!(
        rest.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![all[4].id, all[5].id]
    );
    // `since` keeps the records at or after a time.
    let mut since = query(everything(), 100);
    since.since = Some(all[6].at + chrono::TimeDelta::milliseconds(1));
    assert!(page(&*repo, tenant(), since).await.is_empty());
    // Pruning takes the oldest first, a batch at a time, and only those older than asked.
    let past = all[0].at - chrono::TimeDelta::seconds(1);
    assert_eq!(
        repo.prune_history(past, 10).await.expect("prune answers"),
        0
    );
    let future = all[6].at + chrono::TimeDelta::seconds(1);
    assert_eq!(
        repo.prune_history(future, 3).await.expect("prune answers"),
        3
    );
    let left = repo.history_after(None, 100).await.expect("answers");
    assert_eq!(left.first().map(|r| r.id), Some(all[3].id));
}

/// An expiry an observer saw is recorded then, once: not again at the takeover, and the lock is
/// free for anyone as it was, with a new token for its next holder.
pub async fn an_expiry_an_observer_saw_is_recorded_once(h: &dyn Harness) {
    let repo = h.open().await;
    let bob = granted(&*repo, "r", "bob", 1).await;
    let record = |who: &'static str, token| {
        let repo = repo.clone();
        async move {
            repo.record_expiry(tenant(), name("r"), owner(who), token)
                .await
                .expect("record_expiry answers")
        }
    };
    assert!(!record("bob", bob.fencing_token).await, "still live");
    h.advance(PAST_SHORT).await;
    assert!(
        !record("carol", bob.fencing_token).await,
        "not carol's lease"
    );
    assert!(record("bob", bob.fencing_token).await);
    assert!(!record("bob", bob.fencing_token).await, "recorded once");
    assert_eq!(
        repo.status(tenant(), name("r"))
            .await
            .expect("status answers"),
        None
    );
    let takeovers = repo.count_expired_takeovers().await.expect("count answers");
    let carol = granted(&*repo, "r", "carol", 30).await;
    assert!(carol.fencing_token > bob.fencing_token);
    assert!(
        !record("carol", carol.fencing_token).await,
        "carol's is live"
    );
    assert_eq!(
        repo.count_expired_takeovers().await.expect("count answers"),
        takeovers + 1,
        "carol took over a lease that ran out, its expiry recorded or not"
    );
    let records = page(&*repo, tenant(), query(one(LeaseKind::Lock, "r"), 100)).await;
    let (b, c) = (bob.fencing_token.value(), carol.fencing_token.value());
    assert_eq!(
        story(&records),
        vec![
            (Granted, "bob".to_owned(), b),
            (Expired, "bob".to_owned(), b),
            (Granted, "carol".to_owned(), c),
        ]
    );
}
