//! SQLite finds where a time starts in the history by a binary search over the batches' ids
//! (migration 15, no index on their times): the writer keeps a batch's time from decreasing with
//! its ids even when the clock steps back, so `since` and pruning by age find exactly the
//! records committed from a time on, and the oldest before it.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use lock_domain::testing::ManualClock;
use lock_domain::{Clock, HistoryRecord, HistoryRepository, HistorySubject, ResourcePrefix};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{every_history_page, open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig};

async fn cycle(repo: &DieselLockRepository, resource: &str) {
    repo.acquire(tenant(), name(resource), owner("o"), ttl(30), None)
        .await
        .unwrap();
    repo.release(tenant(), name(resource), owner("o"))
        .await
        .unwrap();
}

/// Every record of the tenant committed at or after `since`, oldest first.
async fn since(repo: &DieselLockRepository, since: Option<DateTime<Utc>>) -> Vec<HistoryRecord> {
    let subject = HistorySubject::Prefix(ResourcePrefix::default());
    let mut all = every_history_page(repo, subject, since, 7).await;
    all.reverse();
    all
}

fn names(records: &[HistoryRecord]) -> Vec<&str> {
    records.iter().map(|r| r.name.as_str()).collect()
}

#[tokio::test]
async fn a_clock_stepping_back_keeps_times_in_order_and_since_and_pruning_find_them() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let start = clock.now();
    let mut config = StoreConfig::new(db.url().clone());
    config.record_history = true;
    let repo = open_store(config, Arc::new(clock.clone())).await;
    let second = |n: i64| start + TimeDelta::seconds(n);

    // One cycle a second, a name a second (2 records each), for 40 seconds.
    for n in 0..40 {
        clock.set(second(n));
        cycle(&repo, &format!("s{n:02}")).await;
    }
    // The clock steps back an hour, then forward again.
    clock.set(second(-3600));
    cycle(&repo, "back").await;
    clock.set(second(60));
    cycle(&repo, "later").await;

    let all = since(&repo, None).await;
    assert_eq!(all.len(), 84);
    assert!(all
        .windows(2)
        .all(|w| w[0].id < w[1].id && w[0].at <= w[1].at));
    // Written after the step back, at the last time before it.
    let back: Vec<_> = all.iter().filter(|r| r.name.as_str() == "back").collect();
    assert!(back.iter().all(|r| r.at == second(39)), "{back:?}");

    // Every time from before the first record to after the last, to the millisecond around
    // each second: exactly the records at or after it.
    for n in -2..=62 {
        for offset in [-1, 0, 1] {
            let at = second(n) + TimeDelta::milliseconds(offset);
            let expected: Vec<&str> = names(&all)
                .into_iter()
                .zip(&all)
                .filter(|(_, r)| r.at >= at)
                .map(|(name, _)| name)
                .collect();
            let found = since(&repo, Some(at)).await;
            assert_eq!(names(&found), expected, "since {at}");
        }
    }

    // Pruning what is older than second 25: the first 25 cycles' records, and nothing else.
    let mut pruned = 0;
    loop {
        let deleted = repo.prune_history(second(25), 3).await.unwrap();
        if deleted == 0 {
            break;
        }
        pruned += deleted;
    }
    assert_eq!(pruned, 50);
    let kept = since(&repo, None).await;
    assert_eq!(names(&kept), names(&all[50..]));
    // And a time before everything kept finds the oldest kept.
    assert_eq!(names(&since(&repo, Some(second(3))).await), names(&kept));
}
