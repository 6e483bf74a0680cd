//! Contract cases for the value stored with a lock's lease: set by an acquire, kept by a
//! re-grant or renew without one, replaced by one with one, never inherited by another holder.

use super::fixtures::{name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{AcquireOutcome, Hold, LeaseValue, Lock, RenewResult, SharedAcquireOutcome};

fn value(json: &str) -> Option<LeaseValue> {
    Some(LeaseValue::parse(json.to_owned()).expect("a value"))
}

async fn acquired(
    repo: &dyn super::ContractStore,
    resource: &str,
    who: &str,
    seconds: i64,
    with: Option<LeaseValue>,
) -> Lock {
    match repo
        .acquire(tenant(), name(resource), owner(who), ttl(seconds), with)
        .await
    {
        Ok(AcquireOutcome::Granted(lock)) => lock,
        other => panic!("expected {who} to be granted {resource}, got {other:?}"),
    }
}

pub async fn a_lock_s_value_is_kept_replaced_and_never_inherited(h: &dyn Harness) {
    let repo = h.open().await;
    let repo = &*repo;
    let first = acquired(repo, "leader", "a", 30, value(r#"{"addr":"10.0.0.7"}"#)).await;
    assert_eq!(first.value, value(r#"{"addr":"10.0.0.7"}"#));
    assert_eq!(status(repo, "leader").await.unwrap().value, first.value);
    // A re-grant without a value keeps it, with one replaces it.
    assert_eq!(
        acquired(repo, "leader", "a", 30, None).await.value,
        first.value
    );
    let replaced = acquired(repo, "leader", "a", 30, value("2")).await;
    assert_eq!(replaced.value, value("2"));
    // So does a renew.
    let renew = |with: Option<LeaseValue>| async move {
        match repo
            .renew(tenant(), name("leader"), owner("a"), ttl(30), with)
            .await
            .unwrap()
        {
            RenewResult::Renewed(lock) => lock.value,
            other => panic!("expected a renewal, got {other:?}"),
        }
    };
    assert_eq!(renew(None).await, value("2"));
    assert_eq!(renew(value("\"three\"")).await, value("\"three\""));
    assert_eq!(
        status(repo, "leader").await.unwrap().value,
        value("\"three\"")
    );
    // Another holder starts without one: after a release, and after an expiry.
    repo.release(tenant(), name("leader"), owner("a"))
        .await
        .unwrap();
    assert_eq!(acquired(repo, "leader", "b", 1, None).await.value, None);
    acquired(repo, "short", "a", 1, value("1")).await;
    h.advance(PAST_SHORT).await;
    assert_eq!(acquired(repo, "short", "b", 30, None).await.value, None);
    // Shared holders have one each.
    let shared = |who: &'static str, with: Option<LeaseValue>| async move {
        match repo
            .acquire_shared(tenant(), name("doc"), owner(who), ttl(30), with)
            .await
            .unwrap()
        {
            SharedAcquireOutcome::Granted(lock) => lock.value,
            other => panic!("expected {who} to share doc, got {other:?}"),
        }
    };
    assert_eq!(shared("r1", value("1")).await, value("1"));
    assert_eq!(shared("r2", None).await, None);
    assert_eq!(shared("r1", None).await, value("1"), "a re-grant keeps it");
    let renewed = repo
        .renew_held(tenant(), name("doc"), owner("r2"), ttl(30), value("[2]"))
        .await
        .unwrap();
    assert!(matches!(renewed, RenewResult::Renewed(ref lock) if lock.value == value("[2]")));
    let Some(Hold::Shared(holders)) = repo.hold(tenant(), name("doc")).await.unwrap() else {
        panic!("a shared hold");
    };
    let values: Vec<Option<LeaseValue>> = holders.into_iter().map(|l| l.value).collect();
    assert_eq!(values, [value("1"), value("[2]")]);
}

pub async fn setting_a_value_changes_nothing_else_and_only_for_a_live_holder(h: &dyn Harness) {
    let repo = h.open().await;
    let repo = &*repo;
    let set = |resource: &'static str, who: &'static str, json: &'static str| async move {
        repo.set_value_held(
            tenant(),
            name(resource),
            owner(who),
            value(json).expect("a value"),
        )
        .await
        .unwrap()
    };
    let granted = acquired(repo, "leader", "a", 30, value("1")).await;
    let RenewResult::Renewed(changed) = set("leader", "a", "{\"addr\":\"b\"}").await else {
        panic!("the holder sets its value");
    };
    assert_eq!(
        changed,
        Lock {
            value: value("{\"addr\":\"b\"}"),
            ..granted.clone()
        },
        "start, end, token and mode are kept"
    );
    assert_eq!(status(repo, "leader").await, Some(changed.clone()));
    assert_eq!(set("leader", "b", "2").await, RenewResult::Forbidden);
    assert_eq!(set("nothing", "a", "2").await, RenewResult::NotFound);
    assert_eq!(
        status(repo, "leader").await,
        Some(changed),
        "refusals change nothing"
    );
    // The lease still ends when it did: once it has, there is no holder to set a value for.
    acquired(repo, "short", "a", 1, None).await;
    h.advance(PAST_SHORT).await;
    assert_eq!(set("short", "a", "3").await, RenewResult::NotFound);
    // An election's leader lives in its tenant's election namespace, apart from the locks.
    let elections = tenant().elections();
    let elected = match repo
        .acquire(elections.clone(), name("leader"), owner("c"), ttl(30), None)
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => lock,
        other => panic!("an election of the same name as a lock is apart from it: {other:?}"),
    };
    assert!(elected.fencing_token > granted.fencing_token);
    assert!(matches!(
        repo.set_value_held(elections, name("leader"), owner("c"), value("4").unwrap())
            .await
            .unwrap(),
        RenewResult::Renewed(ref lock) if lock.value == value("4")
    ));
    assert_eq!(status(repo, "leader").await.unwrap().owner, owner("a"));
    // A reader sets its own lease's value only.
    repo.acquire_shared(tenant(), name("doc"), owner("r1"), ttl(30), value("1"))
        .await
        .unwrap();
    repo.acquire_shared(tenant(), name("doc"), owner("r2"), ttl(30), None)
        .await
        .unwrap();
    assert!(
        matches!(set("doc", "r2", "[2]").await, RenewResult::Renewed(ref lock) if lock.value == value("[2]"))
    );
    let Some(Hold::Shared(holders)) = repo.hold(tenant(), name("doc")).await.unwrap() else {
        panic!("a shared hold");
    };
    let values: Vec<Option<LeaseValue>> = holders.into_iter().map(|l| l.value).collect();
    assert_eq!(values, [value("1"), value("[2]")]);
}
