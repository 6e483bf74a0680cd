//! Contract cases for shared locks under contention: readers and writers racing on one lock
//! never hold it in two modes at once, and every grant has its own token.

use crate::testing::calls::LeaseCalls;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use futures::future::join_all;

use super::concurrency::tokio_free_yield;
use super::fixtures::{name, owner, tenant, ttl};
use super::Harness;
use crate::{AcquireOutcome, FencingToken, ReleaseResult, SharedAcquireOutcome};

/// What a writer adds to the count of holders: more than all readers together.
const WRITER: i64 = 1_000;

pub async fn racing_readers_and_writers_never_hold_in_two_modes_at_once(h: &dyn Harness) {
    let repo = h.open().await;
    let holders = Arc::new(AtomicI64::new(0));
    let results = join_all((0..8).map(|worker| {
        let repo = Arc::clone(&repo);
        let holders = Arc::clone(&holders);
        async move {
            let me = owner(&format!("worker-{worker}"));
            let writes = worker % 3 == 0;
            let mut tokens = Vec::new();
            let mut attempts = 0;
            while tokens.len() < 4 && attempts < 20_000 {
                attempts += 1;
                let token = if writes {
                    match repo
                        .acquire(tenant(), name("rw"), me.clone(), ttl(60), None)
                        .await
                        .expect("acquire answers")
                    {
                        AcquireOutcome::Granted(lock) => Some(lock.fencing_token),
                        AcquireOutcome::Held => None,
                    }
                } else {
                    match repo
                        .acquire_shared(tenant(), name("rw"), me.clone(), ttl(60), None)
                        .await
                        .expect("acquire_shared answers")
                    {
                        SharedAcquireOutcome::Granted(lock) => Some(lock.fencing_token),
                        SharedAcquireOutcome::Held => None,
                        SharedAcquireOutcome::ModeMismatch => panic!("a reader never writes"),
                    }
                };
                let Some(token) = token else {
                    tokio_free_yield().await;
                    continue;
                };
                let weight = if writes { WRITER } else { 1 };
                let before = holders.fetch_add(weight, Ordering::SeqCst);
                assert!(
                    if writes { before == 0 } else { before < WRITER },
                    "worker {worker} granted beside {before}"
                );
                tokens.push(token);
                tokio_free_yield().await;
                holders.fetch_sub(weight, Ordering::SeqCst);
                let released = repo
                    .release_held(tenant(), name("rw"), me.clone())
                    .await
                    .expect("release answers");
                assert_eq!(released, ReleaseResult::Released(token));
            }
            assert_eq!(tokens.len(), 4, "worker {worker} starved");
            tokens
        }
    }))
    .await;
    let all: Vec<FencingToken> = results.into_iter().flatten().collect();
    let distinct: HashSet<FencingToken> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "a fencing token was issued twice"
    );
}
