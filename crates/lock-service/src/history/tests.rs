//! The event feed over the reference store: from now or from an id, filtered, through a
//! follower that falls behind, and through random disconnects, every record once and in order.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::calls::LeaseCalls;
use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    HistoryEvent, HistoryId, HistoryRecord, LeaseKind, Owner, ResourceName, ResourcePrefix,
    SystemClock, Tenant, Ttl,
};

use super::{FeedFilter, FeedStart};
use crate::{HistoryFeed, LockService};

fn store() -> Arc<InMemoryLockRepository> {
    Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)))
}

fn everything(tenant: &Tenant) -> FeedFilter {
    FeedFilter {
        tenant: tenant.clone(),
        prefix: ResourcePrefix::default(),
        kinds: vec![],
    }
}

async fn take(store: &InMemoryLockRepository, tenant: &Tenant, name: &str, owner: &str) {
    store
        .acquire(
            tenant.clone(),
            ResourceName::parse(name).unwrap(),
            Owner::parse(owner).unwrap(),
            Ttl::parse(30, 86_400).unwrap(),
            None,
        )
        .await
        .unwrap();
}

async fn give_back(store: &InMemoryLockRepository, tenant: &Tenant, name: &str, owner: &str) {
    store
        .release(
            tenant.clone(),
            ResourceName::parse(name).unwrap(),
            Owner::parse(owner).unwrap(),
        )
        .await
        .unwrap();
}

async fn next(feed: &mut HistoryFeed) -> HistoryRecord {
    tokio::time::timeout(Duration::from_secs(5), feed.next())
        .await
        .expect("a record within 5 s")
        .expect("the feed is open")
        .expect("the store answers")
}

#[tokio::test]
async fn a_feed_from_now_passes_on_what_its_filter_admits_in_order() {
    let store = store();
    let service = LockService::over(Arc::clone(&store));
    let tenant = Tenant::default_tenant();
    let other = Tenant::parse("other").unwrap();
    take(&store, &tenant, "before", "a").await;
    let mut feed = service
        .history()
        .follow(
            FeedFilter {
                prefix: ResourcePrefix::parse("pay").unwrap(),
                ..everything(&tenant)
            },
            FeedStart::Now,
        )
        .await
        .unwrap();
    take(&store, &other, "pay:1", "b").await; // another tenant's
    take(&store, &tenant, "export", "c").await; // another prefix
    take(&store, &tenant, "pay:1", "d").await;
    give_back(&store, &tenant, "pay:1", "d").await;
    let first = next(&mut feed).await;
    let second = next(&mut feed).await;
    assert_eq!(
        (first.event, first.owner.as_str()),
        (HistoryEvent::Granted, "d")
    );
    assert_eq!(
        (second.event, second.owner.as_str()),
        (HistoryEvent::Released, "d")
    );
    assert!(first.id < second.id);
    assert_eq!(service.history().followers(), 1);
    drop(feed);
    assert_eq!(service.history().followers(), 0);
}

#[tokio::test]
async fn kinds_filter_and_a_closed_service_ends_every_feed() {
    let store = store();
    let service = LockService::over(Arc::clone(&store));
    let tenant = Tenant::default_tenant();
    let mut feed = service
        .history()
        .follow(
            FeedFilter {
                kinds: vec![LeaseKind::Election],
                ..everything(&tenant)
            },
            FeedStart::Now,
        )
        .await
        .unwrap();
    take(&store, &tenant, "x", "a").await;
    take(&store, &tenant.elections(), "x", "b").await;
    let record = next(&mut feed).await;
    assert_eq!(
        (record.kind, record.owner.as_str()),
        (LeaseKind::Election, "b")
    );
    service.close();
    assert!(feed.next().await.is_none());
}

/// 10,000 changes while a consumer disconnects at random and comes back with the last id it saw:
/// it ends up with exactly those changes, in order; a consumer that reads nothing for a while
/// (falls behind the feed's backlog) too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_comes_back_from_its_last_id_misses_nothing_and_sees_nothing_twice() {
    const CHANGES: usize = 10_000;
    let store = store();
    let service = LockService::over(Arc::clone(&store));
    let tenant = Tenant::default_tenant();
    let slow = service
        .history()
        .follow(everything(&tenant), FeedStart::Now)
        .await
        .unwrap();
    let writer = {
        let store = Arc::clone(&store);
        let tenant = tenant.clone();
        tokio::spawn(async move {
            for i in 0..CHANGES / 2 {
                let name = format!("r{}", i % 7);
                take(&store, &tenant, &name, "w").await;
                give_back(&store, &tenant, &name, "w").await;
                // Slow enough that consumers catch up and read the live feed too.
                if i % 10 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        })
    };
    let mut seen: Vec<HistoryRecord> = Vec::new();
    let mut last: Option<HistoryId> = None;
    let mut state = 0x2545_f491_u64;
    while seen.len() < CHANGES {
        let mut feed = service
            .history()
            .follow(
                everything(&tenant),
                FeedStart::After(last.map_or(0, |id| id.value() as u64)),
            )
            .await
            .unwrap();
        // A connection lasts a pseudo-random number of records, then drops.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let lasts = 1 + (state % 900) as usize;
        for _ in 0..lasts {
            if seen.len() == CHANGES {
                break;
            }
            let Ok(record) = tokio::time::timeout(Duration::from_secs(5), feed.next()).await else {
                panic!("stuck after {} records, last {last:?}", seen.len());
            };
            let record = record.unwrap().unwrap();
            let expected = last.map_or(1, |id| id.value() + 1);
            assert_eq!(
                record.id.value(),
                expected,
                "after {} records, connection of {lasts}",
                seen.len()
            );
            last = Some(record.id);
            seen.push(record);
        }
    }
    writer.await.unwrap();
    let all = lock_domain::HistoryRepository::history_after(&*store, None, 20_000)
        .await
        .unwrap();
    assert_eq!(all.len(), CHANGES);
    assert_eq!(seen, all, "exactly the changes, in order");
    // The consumer that read nothing meanwhile fell far behind the backlog: it still gets all.
    let mut slow = slow;
    for expected in &all {
        assert_eq!(&next(&mut slow).await, expected);
    }
}
