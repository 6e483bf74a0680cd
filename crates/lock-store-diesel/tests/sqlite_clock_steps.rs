//! On SQLite lockd's own clock decides expiry. What a step of that clock does (the clock is
//! injected, as the system clock would step under NTP or an operator):
//! - backwards: every live lease lives longer by the step, none is granted to anyone else, and
//!   fencing tokens go on growing (they come from a counter, never from the clock);
//! - forwards: leases expire early, by the step; the next holder gets a larger token, which is
//!   what keeps the holder that still believes in its lease out of fenced storage.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;

use chrono::TimeDelta;
use lock_domain::testing::ManualClock;
use lock_domain::{AcquireOutcome, Clock, Lock, RenewResult};
use lock_store_diesel::testing::values::{name, owner, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DieselLockRepository, StoreConfig};

async fn acquire(
    repo: &DieselLockRepository,
    resource: &str,
    who: &str,
    seconds: i64,
) -> Option<Lock> {
    match repo
        .acquire(tenant(), name(resource), owner(who), ttl(seconds), None)
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => Some(lock),
        AcquireOutcome::Held => None,
    }
}

#[tokio::test]
async fn a_clock_stepping_back_lengthens_leases_and_never_lowers_a_token() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let start = clock.now();
    let repo = open_store(StoreConfig::new(db.url().clone()), Arc::new(clock.clone())).await;
    let a = acquire(&repo, "r", "a", 30).await.expect("granted");
    let freed = acquire(&repo, "freed", "a", 30).await.expect("granted");
    repo.release(tenant(), name("freed"), owner("a"))
        .await
        .unwrap();

    // An hour back: a's lease now ends an hour and 30 s from "now". Nobody else gets it, and
    // every new grant's token is larger than every earlier one.
    clock.set(start - TimeDelta::hours(1));
    assert!(
        acquire(&repo, "r", "b", 30).await.is_none(),
        "a still holds r"
    );
    let again = acquire(&repo, "freed", "b", 30).await.expect("granted");
    assert!(again.fencing_token > freed.fencing_token.max(a.fencing_token));
    // a renews from the stepped clock: its lease now ends 30 s from there, still with its token.
    let RenewResult::Renewed(renewed) = repo
        .renew(tenant(), name("r"), owner("a"), ttl(30), None)
        .await
        .unwrap()
    else {
        panic!("a's lease is live");
    };
    assert_eq!(renewed.fencing_token, a.fencing_token);
    assert_eq!(renewed.expires_at, clock.now() + TimeDelta::seconds(30));

    // The clock comes back: a's renewed lease ended long ago by it; b takes r with a larger
    // token.
    clock.set(start + TimeDelta::seconds(1));
    let b = acquire(&repo, "r", "b", 30).await.expect("granted");
    assert!(b.fencing_token > again.fencing_token);
}

#[tokio::test]
async fn a_clock_stepping_forward_ends_leases_early_and_the_next_token_is_larger() {
    let db = TestDatabase::sqlite();
    let clock = ManualClock::new();
    let start = clock.now();
    let repo = open_store(StoreConfig::new(db.url().clone()), Arc::new(clock.clone())).await;
    let a = acquire(&repo, "r", "a", 30).await.expect("granted");

    // Right after the grant the clock jumps 70 s ahead: a's 30 s lease has ended by lockd's
    // clock, though a counts on nearly all of it. b gets r, a's renew is refused, and only the
    // larger token tells fenced storage who holds r.
    clock.set(start + TimeDelta::seconds(70));
    let b = acquire(&repo, "r", "b", 30).await.expect("granted early");
    assert!(b.fencing_token > a.fencing_token);
    assert_eq!(
        repo.renew(tenant(), name("r"), owner("a"), ttl(30), None)
            .await
            .unwrap(),
        RenewResult::Forbidden
    );
    assert_eq!(
        repo.status(tenant(), name("r"))
            .await
            .unwrap()
            .map(|l| l.owner),
        Some(owner("b"))
    );
}
