//! Contract cases for reading a lock: `status` of one resource and `statuses` of many.

use super::fixtures::{granted, name, owner, status, ttl, PAST_SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{AcquireOutcome, Tenant};

pub async fn status_of_unknown_or_expired_lock_is_none(h: &dyn Harness) {
    let repo = h.open().await;
    assert_eq!(status(&*repo, "never").await, None);
    granted(&*repo, "short", "alice", 1).await;
    assert!(status(&*repo, "short").await.is_some());
    h.advance(PAST_SHORT).await;
    assert_eq!(status(&*repo, "short").await, None);
}

pub async fn statuses_answer_like_status_for_each_lock_in_order(h: &dyn Harness) {
    let repo = h.open().await;
    let acme = Tenant::parse("acme").expect("tenant");
    let held = granted(&*repo, "held", "alice", 30).await;
    let short = granted(&*repo, "short", "bob", 1).await;
    let AcquireOutcome::Granted(other_tenant) = repo
        .acquire(
            acme.clone(),
            name("acme-only"),
            owner("carol"),
            ttl(30),
            None,
        )
        .await
        .expect("answers")
    else {
        panic!("acme is granted its lock")
    };
    let ask = |names: &[(&Tenant, &str)]| {
        names
            .iter()
            .map(|(t, n)| ((*t).clone(), name(n)))
            .collect::<Vec<_>>()
    };
    let default = Tenant::default_tenant();
    let query = ask(&[
        (&default, "held"),
        (&default, "never"),
        (&default, "short"),
        (&default, "acme-only"),
        (&acme, "acme-only"),
        (&acme, "held"),
        (&default, "held"),
    ]);
    assert_eq!(
        repo.statuses(query.clone()).await.expect("answers"),
        vec![
            Some(held.clone()),
            None,
            Some(short),
            None,
            Some(other_tenant.clone()),
            None,
            Some(held.clone()),
        ]
    );
    assert_eq!(repo.statuses(Vec::new()).await.expect("answers"), vec![]);
    h.advance(PAST_SHORT).await;
    let after = repo.statuses(query).await.expect("answers");
    assert_eq!(after[2], None, "an expired lease is none, as for status");
    assert_eq!(after[0], Some(held));
    assert_eq!(after[4], Some(other_tenant));
}

/// Many more locks than a store reads in one statement, in an order no index gives: every
/// answer still belongs to its own lock.
pub async fn statuses_of_many_locks_keep_their_order(h: &dyn Harness) {
    let repo = h.open().await;
    let mut held = Vec::new();
    for i in (0..150).step_by(3) {
        held.push((i, granted(&*repo, &format!("many-{i}"), "alice", 30).await));
    }
    let query: Vec<_> = (0..150)
        .rev()
        .map(|i| (Tenant::default_tenant(), name(&format!("many-{i}"))))
        .collect();
    let answers = repo.statuses(query).await.expect("answers");
    assert_eq!(answers.len(), 150);
    for (position, answer) in answers.iter().enumerate() {
        let i = 149 - position;
        let expected = held.iter().find(|(j, _)| *j == i).map(|(_, lock)| lock);
        assert_eq!(answer.as_ref(), expected, "many-{i}");
    }
}
