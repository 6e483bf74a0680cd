//! During an outage every executor waits in `pool.get()`; the operations whose callers give
//! up meanwhile must leave the queue at once instead of piling up until a connection comes.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{
    Claim, LeaseOp, LeaseTerms, Owner, Place, ResourceName, SystemClock, Tenant, Ttl,
};

use super::queue::lock;
use super::{PostgresBatcher, PostgresDirect, Writer};
use crate::config::Deadlines;
use crate::connection::{ConnectionManager, PoolHealth};
use crate::pooled::Pooled;
use crate::{DatabaseUrl, SqliteSynchronous};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_given_up_during_an_outage_leave_the_queue() {
    // Nothing listens on port 1: every connection attempt is refused.
    let url = DatabaseUrl::Postgres("postgres://postgres@127.0.0.1:1/none".to_owned());
    let health = PoolHealth::new(2);
    let manager = ConnectionManager::new(
        url,
        Duration::from_secs(1),
        SqliteSynchronous::Full,
        Duration::from_millis(100),
        Duration::from_millis(500),
        health.clone(),
    );
    let pool = r2d2::Pool::builder()
        .max_size(2)
        .min_idle(Some(0))
        .connection_timeout(Duration::from_secs(1))
        .build_unchecked(manager);
    let deadlines = Deadlines {
        connection: Duration::from_millis(100),
        statement: Duration::from_millis(500),
    };
    let direct = PostgresDirect::new(Pooled::new(
        pool,
        health,
        Arc::new(SystemClock),
        Some(deadlines),
        Arc::new(lock_domain::NoStoreEvents),
    ));
    let batcher = Arc::new(PostgresBatcher::spawn(direct, deadlines, 2, 64).unwrap());
    let attempts: Vec<_> = (0..200)
        .map(|i| {
            let batcher = Arc::clone(&batcher);
            tokio::spawn(async move {
                let op = LeaseOp::Acquire {
                    place: Place::Lock(ResourceName::parse(format!("r{i}")).unwrap()),
                    claim: Claim::Exclusive,
                    terms: LeaseTerms {
                        owner: Owner::parse("o").unwrap(),
                        ttl: Ttl::parse(10, 3_600).unwrap(),
                        value: None,
                        lock_delay: lock_domain::LockDelay::NONE,
                    },
                };
                batcher.apply(Tenant::default_tenant(), op).await
            })
        })
        .collect();
    let started = std::time::Instant::now();
    for attempt in attempts {
        assert!(attempt.await.unwrap().is_err(), "nothing can be granted");
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let queued = lock(&batcher.shared.queue).waiting.len();
    assert_eq!(
        queued, 0,
        "{queued} abandoned operations still wait in the queue during the outage"
    );
}
