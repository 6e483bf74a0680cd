//! The repository contract suite against PostgreSQL: a fresh database per test, created and
//! dropped by the test. The server's clock decides expiry, so the harness advances by sleeping.
//! It runs twice: with the writes batched (the default) and with every write its own statement.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::testing::contract::{ContractStore, Harness};
use lock_domain::testing::ManualClock;
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};

struct PostgresHarness {
    db: TestDatabase,
    batch_connections: u32,
}

impl PostgresHarness {
    fn new(batch_connections: u32) -> Option<Self> {
        TestDatabase::postgres().map(|db| Self {
            db,
            batch_connections,
        })
    }
}

impl PostgresHarness {
    async fn repo(&self) -> DieselLockRepository {
        let mut config = StoreConfig::new(self.db.url().clone());
        config.postgres_batch_connections = self.batch_connections;
        // A manual clock that never moves: PostgreSQL must not use it.
        let clock = Arc::new(ManualClock::new());
        tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
            .await
            .expect("open task")
            .expect("open the PostgreSQL store")
    }
}

#[async_trait]
impl Harness for PostgresHarness {
    async fn open(&self) -> Arc<dyn ContractStore> {
        Arc::new(self.repo().await)
    }

    async fn advance(&self, by: Duration) {
        tokio::time::sleep(by).await;
    }
}

lock_domain::repository_contract_suite!(match PostgresHarness::new(2) {
    Some(harness) => harness,
    None => return,
});

mod unbatched {
    use super::PostgresHarness;

    lock_domain::repository_contract_suite!(match PostgresHarness::new(0) {
        Some(harness) => harness,
        None => return,
    });
}
