//! The in-memory reference repository against the naive model of the rules, over random sequences
//! of acquires, releases, renewals, status reads and clock moves (see `testing::model`).
//!
//! `crates/lock-store-diesel/tests/sqlite_model.rs` holds the same strategy for the SQLite store:
//! change both together.
#![cfg(feature = "testing")]

use std::sync::Arc;

use lock_domain::testing::model::{check_against_model, Coverage, Op, OWNERS, RESOURCES};
use lock_domain::testing::{InMemoryLockRepository, ManualClock};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

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

/// Failing cases are kept in `model_properties.proptest-regressions` beside this file and tried
/// first on the next run.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn run_in_memory(runtime: &tokio::runtime::Runtime, ops: &[Op]) -> Result<Coverage, String> {
    let clock = ManualClock::new();
    let repo = InMemoryLockRepository::new(Arc::new(clock.clone()));
    runtime
        .block_on(check_against_model(&repo, &clock, ops))
        .map_err(|divergence| divergence.to_string())
}

#[test]
fn in_memory_repository_agrees_with_the_model() {
    let runtime = runtime();
    proptest!(config(512), |(ops in ops())| {
        run_in_memory(&runtime, &ops).map_err(TestCaseError::fail)?;
    });
}

/// The generator is only as good as the ground it covers: over a fixed sample of sequences, every
/// outcome occurs, and many operations land exactly on an expiry.
#[test]
fn generated_sequences_reach_every_outcome_and_the_expiry_boundary() {
    let runtime = runtime();
    let mut runner = TestRunner::deterministic();
    let strategy = ops();
    let mut total = Coverage::default();
    for _ in 0..200 {
        let ops = strategy
            .new_tree(&mut runner)
            .expect("a sequence")
            .current();
        total += run_in_memory(&runtime, &ops).expect("the reference agrees with the model");
    }
    let floors = [
        ("new grants", total.new_grants, 500),
        ("same-token grants", total.same_token_grants, 100),
        ("takeovers after expiry", total.takeovers_after_expiry, 100),
        ("held", total.held, 100),
        ("released", total.released, 100),
        ("renewed", total.renewed, 100),
        ("forbidden", total.forbidden, 100),
        ("not found", total.not_found, 100),
        ("live status", total.status_live, 100),
        ("empty status", total.status_none, 100),
        (
            "operations at the expiry boundary",
            total.at_expiry_boundary,
            50,
        ),
    ];
    for (what, count, floor) in floors {
        assert!(count >= floor, "{what}: {count} < {floor} in {total:?}");
    }
}
