//! The repository contract suite against SQLite in a temporary file, with a manual clock.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::testing::contract::{ContractStore, Harness};
use lock_domain::testing::ManualClock;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

struct SqliteHarness {
    _dir: tempfile::TempDir,
    config: StoreConfig,
    clock: ManualClock,
}

impl SqliteHarness {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = DatabaseUrl::Sqlite(dir.path().join("locks.db"));
        Self {
            config: StoreConfig::new(url),
            _dir: dir,
            clock: ManualClock::new(),
        }
    }
}

impl SqliteHarness {
    async fn repo(&self) -> DieselLockRepository {
        let config = self.config.clone();
        let clock = Arc::new(self.clock.clone());
        tokio::task::spawn_blocking(move || DieselLockRepository::open(&config, clock))
            .await
            .expect("open task")
            .expect("open the SQLite store")
    }
}

#[async_trait]
impl Harness for SqliteHarness {
    async fn open(&self) -> Arc<dyn ContractStore> {
        Arc::new(self.repo().await)
    }

    async fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }
}

lock_domain::repository_contract_suite!(SqliteHarness::new());
