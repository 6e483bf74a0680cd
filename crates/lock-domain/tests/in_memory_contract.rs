//! The contract suite against the in-memory reference repository: proves the suite's expectations
//! agree with the domain rules before any database adapter is held to them.
#![cfg(feature = "testing")]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_domain::testing::contract::{ContractStore, Harness};
use lock_domain::testing::{InMemoryLockRepository, ManualClock};

struct InMemoryHarness {
    clock: ManualClock,
    repo: InMemoryLockRepository,
}

impl InMemoryHarness {
    fn new() -> Self {
        let clock = ManualClock::new();
        let repo = InMemoryLockRepository::new(Arc::new(clock.clone()));
        Self { clock, repo }
    }
}

#[async_trait]
impl Harness for InMemoryHarness {
    async fn open(&self) -> Arc<dyn ContractStore> {
        Arc::new(self.repo.clone())
    }

    async fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }
}

lock_domain::repository_contract_suite!(InMemoryHarness::new());
