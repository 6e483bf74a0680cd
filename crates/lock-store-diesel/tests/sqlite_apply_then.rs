//! SQLite: `apply_then` runs its two writes in one batch of the group commit, so a lock released
//! and granted to the next in line changes hands in one transaction (one commit, one `now`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use lock_domain::testing::calls::LeaseCalls;
use lock_domain::{AcquireOutcome, Clock, LeaseOutcome, LeaseStore};
use lock_store_diesel::testing::values::{acquire_by, name, owner, release_by, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::StoreConfig;

/// A clock one second further on at each reading: two transactions never share a `now`.
#[derive(Debug, Default)]
struct Ticking(AtomicU64);

impl Clock for Ticking {
    fn now(&self) -> DateTime<Utc> {
        let start = Utc.with_ymd_and_hms(2026, 12, 7, 0, 0, 0).unwrap();
        start + Duration::seconds(self.0.fetch_add(1, Ordering::SeqCst) as i64)
    }
}

#[tokio::test]
async fn a_release_then_the_next_grant_commit_together() {
    let db = TestDatabase::sqlite();
    let clock = Arc::new(Ticking::default());
    let repo = open_store(StoreConfig::new(db.url().clone()), clock.clone()).await;
    let first = repo
        .acquire(tenant(), name("r"), owner("a"), ttl(3600), None)
        .await
        .unwrap();
    let AcquireOutcome::Granted(first) = first else {
        panic!("{first:?}")
    };

    let readings = clock.0.load(Ordering::SeqCst);
    let (released, granted) = repo
        .apply_then(tenant(), release_by("a"), acquire_by("b"))
        .await;
    assert!(
        matches!(&released, Ok(LeaseOutcome::Released(ended)) if ended.fencing_token == first.fencing_token),
        "{released:?}"
    );
    let Ok(LeaseOutcome::Granted(grant)) = granted else {
        panic!("the next in line is granted: {granted:?}")
    };
    assert!(grant.lease.fencing_token > first.fencing_token);
    assert_eq!(
        clock.0.load(Ordering::SeqCst) - readings,
        1,
        "one transaction, one reading of the clock"
    );
    let held = repo.status(tenant(), name("r")).await.unwrap().unwrap();
    assert_eq!(held.owner, owner("b"));

    // Each keeps its own outcome: a refused release does not stop the grant after it, which
    // is decided as if alone (a re-grant of b's lease here).
    let (refused, regranted) = repo
        .apply_then(tenant(), release_by("a"), acquire_by("b"))
        .await;
    assert!(
        matches!(refused, Ok(LeaseOutcome::Forbidden)),
        "{refused:?}"
    );
    assert!(
        matches!(&regranted, Ok(LeaseOutcome::Granted(g)) if g.lease.fencing_token == grant.lease.fencing_token),
        "{regranted:?}"
    );
}
