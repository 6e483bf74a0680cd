//! The SQLite store against the naive model of the rules (`lock_domain::testing::model`), over
//! random sequences of acquires, releases, renewals, status reads and clock moves. Each case opens
//! a new store on a new file, with a manual clock (the SQLite store decides with its `Clock`).
//!
//! The strategy is the one of `crates/lock-domain/tests/model_properties.rs`, which also proves
//! that it reaches every outcome and the expiry boundary: change both together.

use std::sync::Arc;

use lock_domain::testing::model::{check_against_model, Op, OWNERS, RESOURCES};
use lock_domain::testing::ManualClock;
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn resource() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&RESOURCES[..])
}

fn owner() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&OWNERS[..])
}

/// Clock moves: mostly whole seconds, so that the sum of moves since a grant (whose TTL is whole
/// seconds) lands exactly on its expiry; a millisecond either side of it; and anything in between.
fn advance() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => prop::sample::select(vec![0, 1_000, 2_000, 3_000]),
        2 => prop::sample::select(vec![1, 999, 1_001, 1_999, 2_001, 2_999]),
        1 => 0..=3_000u64,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (resource(), owner(), 1..=5u32).prop_map(|(resource, owner, ttl_seconds)| Op::Acquire {
            resource,
            owner,
            ttl_seconds
        }),
        2 => (resource(), owner()).prop_map(|(resource, owner)| Op::Release { resource, owner }),
        2 => (resource(), owner(), 1..=5u32).prop_map(|(resource, owner, ttl_seconds)| Op::Renew {
            resource,
            owner,
            ttl_seconds
        }),
        3 => resource().prop_map(|resource| Op::Status { resource }),
        3 => advance().prop_map(|millis| Op::Advance { millis }),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=60)
}

/// Few cases: each opens a database file and commits every write.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

#[test]
fn sqlite_store_agrees_with_the_model() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    proptest!(config(), |(ops in ops())| {
        let db = TestDatabase::sqlite();
        let clock = ManualClock::new();
        let repo = DieselLockRepository::open(&StoreConfig::new(db.url().clone()), Arc::new(clock.clone()))
            .expect("open the SQLite store");
        runtime
            .block_on(check_against_model(&repo, &clock, &ops))
            .map_err(|divergence| TestCaseError::fail(divergence.to_string()))?;
    });
}
