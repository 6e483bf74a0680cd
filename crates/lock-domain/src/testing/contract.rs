//! The repository contract suite: every [`LockRepository`] must pass these, whatever its storage.
//!
//! Each case is a public async function over a [`Harness`]; [`repository_contract_suite!`]
//! (crate root) turns all of them into `#[tokio::test]`s for one adapter. Durations are chosen so
//! that a harness whose clock is real (a database server's) can advance by sleeping.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::join_all;

use crate::{
    AcquireOutcome, FencingToken, ListLimit, ListPage, ListQuery, Lock, LockRepository, Owner,
    ReleaseResult, RenewResult, ResourceName, ResourcePrefix, StoreHealth, Tenant, Ttl,
};

/// What the suite needs of a store: its lock operations and its statistics.
pub trait ContractStore: LockRepository + StoreHealth {}

impl<S: LockRepository + StoreHealth> ContractStore for S {}

/// One adapter's storage, as the suite sees it.
#[async_trait]
pub trait Harness: Send + Sync {
    /// Opens a repository over this harness's storage. A second call opens another one over the
    /// same storage, as a restarted (or second) server process would.
    async fn open(&self) -> Arc<dyn ContractStore>;

    /// Lets `by` pass on the clock the repository decides expiry with (a manual clock moves, a
    /// real one is slept on).
    async fn advance(&self, by: Duration);
}

/// The lease the expiry cases use; a real-clock harness sleeps past it.
const SHORT: Duration = Duration::from_secs(1);
/// Comfortably past [`SHORT`].
const PAST_SHORT: Duration = Duration::from_millis(1_100);

/// The tenant of every case but the isolation ones.
fn tenant() -> Tenant {
    Tenant::default_tenant()
}

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).expect("valid resource name")
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).expect("valid owner")
}

fn ttl(seconds: i64) -> Ttl {
    Ttl::parse(seconds, 86_400).expect("valid ttl")
}

async fn granted(repo: &dyn LockRepository, resource: &str, who: &str, seconds: i64) -> Lock {
    match repo
        .acquire(tenant(), name(resource), owner(who), ttl(seconds))
        .await
    {
        Ok(AcquireOutcome::Granted(lock)) => lock,
        other => panic!("expected {who} to be granted {resource}, got {other:?}"),
    }
}

async fn status(repo: &dyn LockRepository, resource: &str) -> Option<Lock> {
    repo.status(tenant(), name(resource))
        .await
        .expect("status answers")
}

pub async fn acquire_free_resource_is_granted(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "payment:42", "worker-7", 30).await;
    assert_eq!(lock.resource.as_str(), "payment:42");
    assert_eq!(lock.owner.as_str(), "worker-7");
    assert_eq!(
        lock.expires_at - lock.acquired_at,
        chrono::TimeDelta::seconds(30)
    );
    assert!(lock.fencing_token.value() > 0);
    assert_eq!(status(&*repo, "payment:42").await, Some(lock));
}

pub async fn acquire_held_by_another_owner_is_refused_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    let outcome = repo
        .acquire(tenant(), name("r"), owner("bob"), ttl(60))
        .await
        .expect("acquire answers");
    assert_eq!(outcome, AcquireOutcome::Held);
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn same_owner_reacquire_regrants_from_now_and_keeps_the_token(h: &dyn Harness) {
    let repo = h.open().await;
    let first = granted(&*repo, "r", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let second = granted(&*repo, "r", "alice", 60).await;
    assert_eq!(second.fencing_token, first.fencing_token);
    assert!(
        second.acquired_at > first.acquired_at,
        "{second:?} re-granted from now"
    );
    assert_eq!(
        second.expires_at - second.acquired_at,
        chrono::TimeDelta::seconds(60)
    );
    assert_eq!(status(&*repo, "r").await, Some(second));
}

pub async fn owners_and_names_are_case_sensitive_literal_data(h: &dyn Harness) {
    let repo = h.open().await;
    let hostile = "x'; DROP TABLE distributed_locks; --";
    let a = granted(&*repo, hostile, "Alice", 30).await;
    assert_eq!(a.resource.as_str(), hostile);
    let outcome = repo
        .acquire(tenant(), name(hostile), owner("alice"), ttl(30))
        .await
        .expect("answers");
    assert_eq!(
        outcome,
        AcquireOutcome::Held,
        "owner comparison is case-sensitive"
    );
    let upper = granted(&*repo, "X'; DROP TABLE distributed_locks; --", "bob", 30).await;
    assert_ne!(upper.fencing_token, a.fencing_token);
    let unicode = granted(&*repo, "ресурс/日本語 %_\\", "bob", 30).await;
    assert_eq!(status(&*repo, "ресурс/日本語 %_\\").await, Some(unicode));
    assert_eq!(status(&*repo, hostile).await, Some(a));
    assert_eq!(
        status(&*repo, "x'; drop table distributed_locks; --").await,
        None
    );
}

pub async fn status_of_unknown_or_expired_lock_is_none(h: &dyn Harness) {
    let repo = h.open().await;
    assert_eq!(status(&*repo, "never").await, None);
    granted(&*repo, "short", "alice", 1).await;
    assert!(status(&*repo, "short").await.is_some());
    h.advance(PAST_SHORT).await;
    assert_eq!(status(&*repo, "short").await, None);
}

pub async fn statuses_answer_like_status_for_each_lock_in_order(h: &dyn Harness) {
    let repo = h.open().await;
    let acme = Tenant::parse("acme").expect("tenant");
    let held = granted(&*repo, "held", "alice", 30).await;
    let short = granted(&*repo, "short", "bob", 1).await;
    let AcquireOutcome::Granted(other_tenant) = repo
        .acquire(acme.clone(), name("acme-only"), owner("carol"), ttl(30))
        .await
        .expect("answers")
    else {
        panic!("acme is granted its lock")
    };
    let ask = |names: &[(&Tenant, &str)]| {
        names
            .iter()
            .map(|(t, n)| ((*t).clone(), name(n)))
            .collect::<Vec<_>>()
    };
    let default = Tenant::default_tenant();
    let query = ask(&[
        (&default, "held"),
        (&default, "never"),
        (&default, "short"),
        (&default, "acme-only"),
        (&acme, "acme-only"),
        (&acme, "held"),
        (&default, "held"),
    ]);
    assert_eq!(
        repo.statuses(query.clone()).await.expect("answers"),
        vec![
            Some(held.clone()),
            None,
            Some(short),
            None,
            Some(other_tenant.clone()),
            None,
            Some(held.clone()),
        ]
    );
    assert_eq!(repo.statuses(Vec::new()).await.expect("answers"), vec![]);
    h.advance(PAST_SHORT).await;
    let after = repo.statuses(query).await.expect("answers");
    assert_eq!(after[2], None, "an expired lease is none, as for status");
    assert_eq!(after[0], Some(held));
    assert_eq!(after[4], Some(other_tenant));
}

pub async fn expired_lock_is_taken_over_with_a_larger_token(h: &dyn Harness) {
    let repo = h.open().await;
    let old = granted(&*repo, "r", "alice", SHORT.as_secs() as i64).await;
    h.advance(PAST_SHORT).await;
    let new = granted(&*repo, "r", "bob", 30).await;
    assert_eq!(new.owner.as_str(), "bob");
    assert!(
        new.fencing_token > old.fencing_token,
        "{new:?} after {old:?}"
    );
    assert!(new.acquired_at > old.acquired_at);
    let again = granted(&*repo, "other", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    let same_owner = granted(&*repo, "other", "alice", 30).await;
    assert!(
        same_owner.fencing_token > again.fencing_token,
        "a grant after expiry is a new grant, even for the same owner"
    );
}

pub async fn expired_takeovers_count_only_leases_that_ran_out(h: &dyn Harness) {
    let repo = h.open().await;
    let before = repo.count_expired_takeovers().await.expect("count answers");
    granted(&*repo, "let-expire", "alice", SHORT.as_secs() as i64).await;
    granted(&*repo, "released", "bob", 30).await;
    assert!(matches!(
        repo.release(tenant(), name("released"), owner("bob"))
            .await
            .expect("release answers"),
        ReleaseResult::Released(_)
    ));
    granted(&*repo, "same-owner", "carol", SHORT.as_secs() as i64).await;
    h.advance(PAST_SHORT).await;
    granted(&*repo, "let-expire", "bob", 30).await;
    granted(&*repo, "released", "dave", 30).await;
    granted(&*repo, "same-owner", "carol", 30).await;
    granted(&*repo, "free", "erin", 30).await;
    assert_eq!(
        repo.count_expired_takeovers().await.expect("count answers"),
        before + 1,
        "only bob's grant took over a lease that ran out (not a released one, not carol's own, \
         not a free resource)"
    );
}

pub async fn release_by_the_owner_deletes_the_lock(h: &dyn Harness) {
    let repo = h.open().await;
    granted(&*repo, "r", "alice", 30).await;
    let result = repo
        .release(tenant(), name("r"), owner("alice"))
        .await
        .expect("release answers");
    assert!(matches!(result, ReleaseResult::Released(_)), "{result:?}");
    assert_eq!(status(&*repo, "r").await, None);
    let again = repo
        .release(tenant(), name("r"), owner("alice"))
        .await
        .expect("release answers");
    assert_eq!(again, ReleaseResult::NotFound);
    granted(&*repo, "r", "bob", 30).await;
}

pub async fn release_by_another_owner_is_forbidden_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    for intruder in ["bob", "Alice", "alice2"] {
        let result = repo
            .release(tenant(), name("r"), owner(intruder))
            .await
            .expect("release answers");
        assert_eq!(result, ReleaseResult::Forbidden, "{intruder}");
    }
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn release_of_unknown_or_expired_lock_is_not_found(h: &dyn Harness) {
    let repo = h.open().await;
    let result = repo
        .release(tenant(), name("never"), owner("alice"))
        .await
        .expect("answers");
    assert_eq!(result, ReleaseResult::NotFound);
    granted(&*repo, "r", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    for who in ["alice", "bob"] {
        let result = repo
            .release(tenant(), name("r"), owner(who))
            .await
            .expect("answers");
        assert_eq!(
            result,
            ReleaseResult::NotFound,
            "{who} releasing an expired lock"
        );
    }
}

pub async fn undo_grant_ends_only_that_exact_grant(h: &dyn Harness) {
    let repo = h.open().await;
    let undo = |grant: &Lock| repo.undo_grant(tenant(), grant.clone());
    // The grant as made: undone, and the lock is free for anyone.
    let first = granted(&*repo, "r", "alice", 30).await;
    assert!(undo(&first).await.expect("undo answers"));
    assert_eq!(status(&*repo, "r").await, None);
    assert!(!undo(&first).await.expect("undo answers"), "undone twice");
    let bob = granted(&*repo, "r", "bob", 30).await;
    assert!(bob.fencing_token > first.fencing_token);
    // Another owner's lease, even with the same token value seen earlier, is not touched.
    assert!(!undo(&first).await.expect("undo answers"));
    assert_eq!(status(&*repo, "r").await, Some(bob.clone()));
    // A same-owner re-grant after the grant (a new acquired_at) is not the grant, and a
    // re-grant itself is never undone: its owner was told it holds the lease already.
    let old = granted(&*repo, "s", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let regrant = granted(&*repo, "s", "alice", 30).await;
    assert_eq!(regrant.fencing_token, old.fencing_token);
    assert!(!undo(&old).await.expect("undo answers"));
    assert!(
        !undo(&regrant).await.expect("undo answers"),
        "a re-grant undone"
    );
    assert_eq!(status(&*repo, "s").await, Some(regrant.clone()));
    // A renewal after the grant (a new expires_at) is not the grant either.
    h.advance(Duration::from_millis(200)).await;
    let renewed = match repo
        .renew(tenant(), name("s"), owner("alice"), ttl(60))
        .await
        .expect("renew answers")
    {
        RenewResult::Renewed(lock) => lock,
        other => panic!("expected a renewal, got {other:?}"),
    };
    assert!(!undo(&regrant).await.expect("undo answers"));
    assert!(!undo(&renewed).await.expect("undo answers"));
    assert_eq!(status(&*repo, "s").await, Some(renewed.clone()));
    // A new grant after a release is undone again.
    let released = repo
        .release(tenant(), name("s"), owner("alice"))
        .await
        .expect("release answers");
    assert!(matches!(released, ReleaseResult::Released(_)));
    let fresh = granted(&*repo, "s", "alice", 30).await;
    assert!(fresh.fencing_token > renewed.fencing_token);
    assert!(undo(&fresh).await.expect("undo answers"));
    assert_eq!(status(&*repo, "s").await, None);
    // An expired grant is over already: nothing to undo, and the next grant is new.
    let short = granted(&*repo, "t", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    assert!(!undo(&short).await.expect("undo answers"));
    let next = granted(&*repo, "t", "carol", 30).await;
    assert!(next.fencing_token > short.fencing_token);
}

pub async fn renew_by_the_owner_moves_only_the_expiry(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    h.advance(Duration::from_millis(200)).await;
    let renewed = match repo
        .renew(tenant(), name("r"), owner("alice"), ttl(120))
        .await
        .expect("answers")
    {
        RenewResult::Renewed(renewed) => renewed,
        other => panic!("expected Renewed, got {other:?}"),
    };
    assert_eq!(renewed.acquired_at, lock.acquired_at);
    assert_eq!(renewed.fencing_token, lock.fencing_token);
    assert_eq!(renewed.owner, lock.owner);
    assert!(renewed.expires_at >= lock.acquired_at + chrono::TimeDelta::milliseconds(120_200));
    assert!(renewed.expires_at - renewed.acquired_at < chrono::TimeDelta::seconds(150));
    assert_eq!(status(&*repo, "r").await, Some(renewed));
}

pub async fn renew_keeps_a_short_lease_alive_past_its_first_expiry(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 1).await;
    h.advance(Duration::from_millis(600)).await;
    let renewed = repo
        .renew(tenant(), name("r"), owner("alice"), ttl(2))
        .await
        .expect("answers");
    assert!(matches!(renewed, RenewResult::Renewed(_)), "{renewed:?}");
    h.advance(Duration::from_millis(600)).await;
    let live = status(&*repo, "r")
        .await
        .expect("still live after its first expiry");
    assert_eq!(live.fencing_token, lock.fencing_token);
}

pub async fn renew_by_another_owner_is_forbidden_and_changes_nothing(h: &dyn Harness) {
    let repo = h.open().await;
    let lock = granted(&*repo, "r", "alice", 30).await;
    let result = repo
        .renew(tenant(), name("r"), owner("bob"), ttl(600))
        .await
        .expect("answers");
    assert_eq!(result, RenewResult::Forbidden);
    assert_eq!(status(&*repo, "r").await, Some(lock));
}

pub async fn renew_of_unknown_or_expired_lock_is_not_found(h: &dyn Harness) {
    let repo = h.open().await;
    let result = repo
        .renew(tenant(), name("never"), owner("alice"), ttl(30))
        .await
        .expect("answers");
    assert_eq!(result, RenewResult::NotFound);
    granted(&*repo, "r", "alice", 1).await;
    h.advance(PAST_SHORT).await;
    let result = repo
        .renew(tenant(), name("r"), owner("alice"), ttl(30))
        .await
        .expect("answers");
    assert_eq!(
        result,
        RenewResult::NotFound,
        "an expired lock belongs to nobody"
    );
    assert_eq!(status(&*repo, "r").await, None);
}

pub async fn fencing_tokens_increase_across_release_expiry_and_reopening(h: &dyn Harness) {
    let repo = h.open().await;
    let mut tokens: Vec<FencingToken> = Vec::new();
    tokens.push(granted(&*repo, "r", "alice", 30).await.fencing_token);
    assert_eq!(
        repo.release(tenant(), name("r"), owner("alice"))
            .await
            .expect("answers"),
        ReleaseResult::Released(tokens[0]),
        "a release reports the token of the grant it ended"
    );
    tokens.push(granted(&*repo, "r", "alice", 1).await.fencing_token);
    h.advance(PAST_SHORT).await;
    tokens.push(granted(&*repo, "r", "bob", 30).await.fencing_token);
    assert_eq!(
        repo.release(tenant(), name("r"), owner("bob"))
            .await
            .expect("answers"),
        ReleaseResult::Released(tokens[2])
    );
    drop(repo);

    let reopened = h.open().await;
    tokens.push(granted(&*reopened, "r", "carol", 30).await.fencing_token);
    // A held lock survives reopening with its token.
    let held = status(&*reopened, "r")
        .await
        .expect("still held after reopening");
    assert_eq!(held.fencing_token, *tokens.last().expect("pushed"));
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "tokens {tokens:?} strictly increase"
    );
}

pub async fn concurrent_acquires_of_a_free_resource_have_exactly_one_winner(h: &dyn Harness) {
    let repo = h.open().await;
    let outcomes = join_all((0..32).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire(
                tenant(),
                name("contended"),
                owner(&format!("racer-{i}")),
                ttl(30),
            )
            .await
        }
    }))
    .await;
    assert_single_winner(outcomes, &*repo, "contended").await;
}

pub async fn concurrent_acquires_of_an_expired_resource_have_exactly_one_winner(h: &dyn Harness) {
    let repo = h.open().await;
    let old = granted(&*repo, "stale", "crashed-holder", 1).await;
    h.advance(PAST_SHORT).await;
    let outcomes = join_all((0..32).map(|i| {
        let repo = Arc::clone(&repo);
        async move {
            repo.acquire(
                tenant(),
                name("stale"),
                owner(&format!("racer-{i}")),
                ttl(30),
            )
            .await
        }
    }))
    .await;
    let winner = assert_single_winner(outcomes, &*repo, "stale").await;
    assert!(winner.fencing_token > old.fencing_token);
}

async fn assert_single_winner(
    outcomes: Vec<Result<AcquireOutcome, crate::RepositoryError>>,
    repo: &dyn LockRepository,
    resource: &str,
) -> Lock {
    let mut winners = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(AcquireOutcome::Granted(lock)) => winners.push(lock),
            Ok(AcquireOutcome::Held) => {}
            Err(error) => panic!("no acquire may fail under contention: {error:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner, got {winners:?}");
    let winner = winners.pop().expect("one winner");
    assert_eq!(status(repo, resource).await, Some(winner.clone()));
    winner
}

/// Many workers cycling acquire/release on one resource: never two holders at once, every grant a
/// new, larger-than-ever token per resource, and no errors.
pub async fn contended_acquire_release_cycles_never_overlap(h: &dyn Harness) {
    let repo = h.open().await;
    let held = Arc::new(AtomicBool::new(false));
    let results = join_all((0..16).map(|worker| {
        let repo = Arc::clone(&repo);
        let held = Arc::clone(&held);
        async move {
            let me = owner(&format!("worker-{worker}"));
            let mut tokens = Vec::new();
            let mut grants = 0;
            let mut attempts = 0;
            while grants < 5 && attempts < 10_000 {
                attempts += 1;
                match repo
                    .acquire(tenant(), name("hot"), me.clone(), ttl(60))
                    .await
                    .expect("acquire answers")
                {
                    AcquireOutcome::Held => tokio_free_yield().await,
                    AcquireOutcome::Granted(lock) => {
                        assert!(!held.swap(true, Ordering::SeqCst), "two holders at once");
                        tokens.push(lock.fencing_token);
                        grants += 1;
                        held.store(false, Ordering::SeqCst);
                        let result = repo
                            .release(tenant(), name("hot"), me.clone())
                            .await
                            .expect("release answers");
                        assert_eq!(result, ReleaseResult::Released(lock.fencing_token));
                    }
                }
            }
            assert_eq!(grants, 5, "worker {worker} starved");
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

/// Yields to other futures without depending on a particular runtime.
async fn tokio_free_yield() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}

/// Two tenants using the same resource name and owner have two independent locks: one tenant can
/// neither see, release nor renew the other's, and to it the other's lock looks like no lock.
pub async fn tenants_are_independent_namespaces(h: &dyn Harness) {
    let repo = h.open().await;
    let (acme, globex) = (
        Tenant::parse("acme").expect("tenant"),
        Tenant::parse("globex").expect("tenant"),
    );
    let acquire = |t: &Tenant| repo.acquire(t.clone(), name("shared"), owner("worker"), ttl(30));
    let AcquireOutcome::Granted(a) = acquire(&acme).await.expect("answers") else {
        panic!("acme is granted its lock")
    };
    assert_eq!(
        repo.status(globex.clone(), name("shared"))
            .await
            .expect("answers"),
        None
    );
    for result in [
        repo.release(globex.clone(), name("shared"), owner("worker"))
            .await
            .expect("answers"),
        repo.release(globex.clone(), name("shared"), owner("intruder"))
            .await
            .expect("answers"),
    ] {
        assert_eq!(
            result,
            ReleaseResult::NotFound,
            "another tenant's lock answers like no lock"
        );
    }
    let renewed = repo
        .renew(globex.clone(), name("shared"), owner("worker"), ttl(600))
        .await
        .expect("answers");
    assert_eq!(renewed, RenewResult::NotFound);
    let AcquireOutcome::Granted(g) = acquire(&globex).await.expect("answers") else {
        panic!("globex is granted its own lock on the same name")
    };
    assert_ne!(g.fencing_token, a.fencing_token);
    assert_eq!(
        repo.release(globex.clone(), name("shared"), owner("worker"))
            .await
            .expect("answers"),
        ReleaseResult::Released(g.fencing_token)
    );
    assert_eq!(
        repo.status(acme.clone(), name("shared"))
            .await
            .expect("answers"),
        Some(a)
    );
    assert_eq!(
        repo.status(tenant(), name("shared"))
            .await
            .expect("answers"),
        None
    );
}

async fn list(
    repo: &dyn LockRepository,
    tenant: &Tenant,
    prefix: &str,
    after: Option<&ResourceName>,
    limit: i64,
) -> ListPage {
    repo.list(
        tenant.clone(),
        ListQuery {
            prefix: ResourcePrefix::parse(prefix).expect("valid prefix"),
            after: after.cloned(),
            limit: ListLimit::parse(limit).expect("valid limit"),
        },
    )
    .await
    .expect("list answers")
}

fn names_of(page: &ListPage) -> Vec<&str> {
    page.locks
        .iter()
        .map(|l| l.lock.resource.as_str())
        .collect()
}

/// Names come in bytewise (UTF-8 byte = code point) order: upper case before lower case,
/// multibyte characters after ASCII, shorter names before their extensions.
pub async fn list_orders_names_bytewise(h: &dyn Harness) {
    let repo = h.open().await;
    let mut names = vec![
        "b",
        "B",
        "a",
        "aa",
        "A",
        "Z",
        "é",
        "e",
        "ä",
        "日本",
        "z",
        "~",
        "0",
        "a b",
        "\u{10FFFF}",
    ];
    for raw in &names {
        granted(&*repo, raw, "lister", 30).await;
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let page = list(&*repo, &tenant(), "", None, 100).await;
    assert_eq!(names_of(&page), names);
    assert!(!page.has_more);
    assert_eq!(page.next_after(), None);
    let with_e = list(&*repo, &tenant(), "é", None, 100).await;
    assert_eq!(names_of(&with_e), vec!["é"]);
}

/// `%`, `_` and `\` in a prefix are ordinary characters, not wildcards or escapes.
pub async fn list_prefix_is_literal(h: &dyn Harness) {
    let repo = h.open().await;
    for raw in [
        "100%", "100%x", "1000", "100_", "100a", "100\\", "100\\n", "a%b", "a_b", "axb", "aXb",
        "a\\b", "ab",
    ] {
        granted(&*repo, raw, "lister", 30).await;
    }
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("100%", vec!["100%", "100%x"]),
        ("100_", vec!["100_"]),
        ("100\\", vec!["100\\", "100\\n"]),
        ("a%", vec!["a%b"]),
        ("a_", vec!["a_b"]),
        ("a\\", vec!["a\\b"]),
        ("a", vec!["a%b", "aXb", "a\\b", "a_b", "ab", "axb"]),
        ("%", vec![]),
        ("1000", vec!["1000"]),
        ("10000", vec![]),
    ];
    for (prefix, expected) in cases {
        let page = list(&*repo, &tenant(), prefix, None, 100).await;
        assert_eq!(names_of(&page), expected, "prefix {prefix:?}");
    }
}

/// Paging with the last name as cursor visits every lock that existed throughout exactly once,
/// in order, while locks are granted behind and ahead of the cursor.
pub async fn list_pages_have_no_duplicates_or_gaps_while_locks_are_added(h: &dyn Harness) {
    let repo = h.open().await;
    let original: Vec<String> = (0..25).map(|i| format!("job:{i:03}")).collect();
    for raw in &original {
        granted(&*repo, raw, "lister", 30).await;
    }
    granted(&*repo, "jobs-not-a-job", "lister", 30).await;
    let mut seen: Vec<String> = Vec::new();
    let mut after: Option<ResourceName> = None;
    let mut pages = 0;
    loop {
        let page = list(&*repo, &tenant(), "job:", after.as_ref(), 7).await;
        pages += 1;
        assert!(page.locks.len() <= 7);
        seen.extend(names_of(&page).into_iter().map(str::to_owned));
        // Grant one name behind the cursor and one ahead of it while paging.
        granted(&*repo, &format!("job:{pages:03}a"), "late", 30).await;
        granted(&*repo, &format!("job:{:03}", 100 + pages), "late", 30).await;
        match page.next_after() {
            Some(next) => after = Some(next.clone()),
            None => break,
        }
        assert!(pages < 50, "paging must end");
    }
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    sorted.dedup();
    assert_eq!(seen, sorted, "strictly increasing, no duplicates");
    for raw in &original {
        assert!(seen.contains(raw), "{raw} was skipped");
    }
    assert!(seen.iter().all(|n| n.starts_with("job:")));
}

/// A page holds at most `limit` locks; `has_more` is set only when another one matched.
pub async fn list_limit_bounds_the_page(h: &dyn Harness) {
    let repo = h.open().await;
    for raw in ["p1", "p2", "p3"] {
        granted(&*repo, raw, "lister", 30).await;
    }
    let exact = list(&*repo, &tenant(), "p", None, 3).await;
    assert_eq!(names_of(&exact), vec!["p1", "p2", "p3"]);
    assert!(!exact.has_more, "exactly `limit` locks is the last page");
    let one = list(&*repo, &tenant(), "p", None, 1).await;
    assert_eq!(names_of(&one), vec!["p1"]);
    assert!(one.has_more);
    assert_eq!(one.next_after().map(ResourceName::as_str), Some("p1"));
    let last = list(&*repo, &tenant(), "p", Some(&name("p2")), 1).await;
    assert_eq!(names_of(&last), vec!["p3"]);
    assert!(!last.has_more);
    let past = list(&*repo, &tenant(), "p", Some(&name("p3")), 1000).await;
    assert!(past.locks.is_empty() && !past.has_more);
    let before = list(&*repo, &tenant(), "p", Some(&name("a")), 2).await;
    assert_eq!(names_of(&before), vec!["p1", "p2"]);
}

/// Expired and released locks are not listed; listed locks carry their remaining lease.
pub async fn list_shows_only_live_locks_with_their_remaining_ttl(h: &dyn Harness) {
    let repo = h.open().await;
    granted(&*repo, "live", "lister", 30).await;
    granted(&*repo, "short", "lister", 1).await;
    granted(&*repo, "released", "lister", 30).await;
    repo.release(tenant(), name("released"), owner("lister"))
        .await
        .expect("release answers");
    h.advance(PAST_SHORT).await;
    let page = list(&*repo, &tenant(), "", None, 100).await;
    assert_eq!(names_of(&page), vec!["live"]);
    let remaining = page.locks[0].ttl_remaining;
    assert!(
        remaining <= Duration::from_secs(29) && remaining > Duration::from_secs(20),
        "30 s lease after {PAST_SHORT:?}: {remaining:?} left"
    );
    assert_eq!(
        status(&*repo, "live").await.as_ref(),
        Some(&page.locks[0].lock)
    );
    assert_eq!(repo.count_live().await.expect("count answers"), 1);
}

/// A tenant lists only its own locks.
pub async fn list_is_per_tenant(h: &dyn Harness) {
    let repo = h.open().await;
    let (acme, globex) = (
        Tenant::parse("acme").expect("tenant"),
        Tenant::parse("globex").expect("tenant"),
    );
    for (t, raw) in [
        (&acme, "a1"),
        (&acme, "shared"),
        (&globex, "g1"),
        (&globex, "shared"),
    ] {
        let outcome = repo
            .acquire(t.clone(), name(raw), owner("worker"), ttl(30))
            .await
            .expect("answers");
        assert!(matches!(outcome, AcquireOutcome::Granted(_)));
    }
    assert_eq!(
        names_of(&list(&*repo, &acme, "", None, 100).await),
        vec!["a1", "shared"]
    );
    assert_eq!(
        names_of(&list(&*repo, &globex, "", None, 100).await),
        vec!["g1", "shared"]
    );
    assert!(list(&*repo, &tenant(), "", None, 100)
        .await
        .locks
        .is_empty());
    assert_eq!(repo.count_live().await.expect("count answers"), 4);
}

pub async fn ping_answers(h: &dyn Harness) {
    h.open().await.ping().await.expect("ping answers");
}

/// Expands to one `#[tokio::test]` per contract case for the harness that `$harness` evaluates to
/// (the expression may `.await`). The calling crate needs `tokio` with `macros` and
/// `rt-multi-thread`.
#[macro_export]
macro_rules! repository_contract_suite {
    ($harness:expr) => {
        $crate::repository_contract_suite!(@cases $harness;
            acquire_free_resource_is_granted,
            acquire_held_by_another_owner_is_refused_and_changes_nothing,
            same_owner_reacquire_regrants_from_now_and_keeps_the_token,
            owners_and_names_are_case_sensitive_literal_data,
            status_of_unknown_or_expired_lock_is_none,
            statuses_answer_like_status_for_each_lock_in_order,
            expired_lock_is_taken_over_with_a_larger_token,
            expired_takeovers_count_only_leases_that_ran_out,
            release_by_the_owner_deletes_the_lock,
            release_by_another_owner_is_forbidden_and_changes_nothing,
            release_of_unknown_or_expired_lock_is_not_found,
            undo_grant_ends_only_that_exact_grant,
            renew_by_the_owner_moves_only_the_expiry,
            renew_keeps_a_short_lease_alive_past_its_first_expiry,
            renew_by_another_owner_is_forbidden_and_changes_nothing,
            renew_of_unknown_or_expired_lock_is_not_found,
            fencing_tokens_increase_across_release_expiry_and_reopening,
            concurrent_acquires_of_a_free_resource_have_exactly_one_winner,
            concurrent_acquires_of_an_expired_resource_have_exactly_one_winner,
            contended_acquire_release_cycles_never_overlap,
            tenants_are_independent_namespaces,
            ping_answers,
            list_orders_names_bytewise,
            list_prefix_is_literal,
            list_pages_have_no_duplicates_or_gaps_while_locks_are_added,
            list_limit_bounds_the_page,
            list_shows_only_live_locks_with_their_remaining_ttl,
            list_is_per_tenant
        );
    };
    (@cases $harness:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let harness = $harness;
                $crate::testing::contract::$case(&harness).await;
            }
        )*
    };
}
