//! Contract cases for reading a lock: `status` of one resource and `statuses` of many.

use super::fixtures::{granted, name, owner, status, ttl, PAST_SHORT};
use super::Harness;
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
        .acquire(acme.clone(), name("acme-only"), owner("carol"), ttl(30))
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
