//! The semaphore checks must be able to fail: hand-made histories with one permit too many, a
//! token going backwards, a token shown for two owners, a grant renewed after its expiry and a
//! status missing an acknowledged grant are each caught; the same histories without the fault,
//! a grant with its renewals, and a re-grant of an unheard grant pass.

use lock_safety::permits::checks::{self, Finding, Kind};
use lock_safety::{PermitHistory, PermitLease, PermitOp, PermitOpKind, PermitOutcome};

const MS: i64 = 1_000;
const S0: &str = "s0";
const LIMIT: u32 = 3;

struct Recorder {
    history: PermitHistory,
}

impl Recorder {
    fn new() -> Self {
        let mut history = PermitHistory::new(0, 42);
        history.names = vec![S0.to_owned(), "s1".to_owned()];
        history.horizon_us = 2_000 * MS;
        Self { history }
    }

    fn op(
        &mut self,
        name: &str,
        kind: PermitOpKind,
        from_ms: i64,
        to_ms: i64,
        outcome: PermitOutcome,
    ) -> usize {
        let client = kind.owner().map_or(99, client_of);
        self.history.push(PermitOp {
            id: 0,
            client,
            name: name.to_owned(),
            kind,
            invoke: from_ms * MS,
            complete: to_ms * MS,
            outcome,
        })
    }

    fn acquire(
        &mut self,
        owner: &str,
        permits: u32,
        from: i64,
        to: i64,
        outcome: PermitOutcome,
    ) -> usize {
        let kind = PermitOpKind::Acquire {
            owner: owner.to_owned(),
            ttl_seconds: 2,
            wait_seconds: 0,
            permits,
            limit: LIMIT,
        };
        self.op(S0, kind, from, to, outcome)
    }

    fn renew(&mut self, owner: &str, from: i64, to: i64, outcome: PermitOutcome) -> usize {
        let kind = PermitOpKind::Renew {
            owner: owner.to_owned(),
            ttl_seconds: 2,
        };
        self.op(S0, kind, from, to, outcome)
    }

    fn release(&mut self, owner: &str, from: i64, to: i64, outcome: PermitOutcome) -> usize {
        let kind = PermitOpKind::Release {
            owner: owner.to_owned(),
        };
        self.op(S0, kind, from, to, outcome)
    }

    fn status(&mut self, from: i64, to: i64, holders: Vec<PermitLease>) -> usize {
        self.op(
            S0,
            PermitOpKind::Status,
            from,
            to,
            PermitOutcome::Seen(holders),
        )
    }

    fn check(&self) -> Vec<Finding> {
        checks::run(&self.history)
    }
}

fn client_of(owner: &str) -> u32 {
    owner.bytes().map(u32::from).sum()
}

/// A grant of `permits` on s0 made at `acquired_ms`, ending at `expires_ms`.
fn lease(owner: &str, token: i64, permits: u32, acquired_ms: i64, expires_ms: i64) -> PermitLease {
    PermitLease {
        name: S0.to_owned(),
        owner: owner.to_owned(),
        token,
        permits,
        limit: LIMIT,
        acquired_at: acquired_ms * MS,
        expires_at: expires_ms * MS,
    }
}

fn granted(owner: &str, token: i64, permits: u32, at_ms: i64) -> PermitOutcome {
    PermitOutcome::Granted(lease(owner, token, permits, at_ms, at_ms + 2_000))
}

fn renewed(owner: &str, token: i64, permits: u32, acquired_ms: i64, at_ms: i64) -> PermitOutcome {
    PermitOutcome::Renewed(lease(owner, token, permits, acquired_ms, at_ms + 2_000))
}

fn unknown() -> PermitOutcome {
    PermitOutcome::Unknown {
        why: "timeout".to_owned(),
    }
}

fn kinds(findings: &[Finding]) -> Vec<Kind> {
    findings.iter().map(|f| f.kind).collect()
}

fn assert_passes(recorder: &Recorder) {
    let findings = recorder.check();
    assert!(
        findings.is_empty(),
        "expected no findings, got:{}",
        lock_safety::permits::report::render(&recorder.history, &findings)
    );
}

/// Owners a..=d each acquire one permit of a limit of 3, all answered within 40 ms and held for
/// 2 s; `holders` of them.
fn one_permit_each(holders: usize) -> Recorder {
    let mut r = Recorder::new();
    for (i, owner) in ["a", "b", "c", "d"].iter().take(holders).enumerate() {
        let at = 10 * i as i64;
        r.acquire(owner, 1, at, at + 5, granted(owner, i as i64 + 1, 1, at));
    }
    r
}

#[test]
fn one_permit_too_many_is_caught() {
    let r = one_permit_each(4);
    let findings = r.check();
    assert_eq!(kinds(&findings), vec![Kind::TooManyPermits], "{findings:?}");
    assert_eq!(findings[0].ops, vec![0, 1, 2, 3]);
    assert!(findings[0].message.contains("4 permits of a limit of 3"));
    let text = lock_safety::permits::report::render(&r.history, &findings);
    assert!(text.contains("seed 42") && text.contains("* #3"), "{text}");
}

#[test]
fn the_same_history_minus_one_hold_passes() {
    assert_passes(&one_permit_each(3));
}

#[test]
fn a_status_showing_one_permit_too_many_is_caught() {
    let mut r = one_permit_each(2);
    r.status(
        100,
        110,
        vec![
            lease("a", 1, 1, 0, 2_000),
            lease("b", 2, 1, 10, 2_010),
            lease("x", 9, 2, 50, 2_050),
        ],
    );
    assert!(kinds(&r.check()).contains(&Kind::TooManyPermits));
}

#[test]
fn a_hold_ends_at_its_release_or_expiry() {
    // Four one-permit grants, but a's is released before d's is granted; then e's comes after
    // b's and c's leases expired.
    let mut r = one_permit_each(3);
    r.release("a", 100, 110, PermitOutcome::Released);
    r.acquire("d", 1, 120, 130, granted("d", 4, 1, 125));
    r.acquire("e", 1, 2_100, 2_110, granted("e", 5, 1, 2_105));
    assert_passes(&r);
    // An unknown release may end the hold at once: a grant after its invoke is no proof.
    let mut r = one_permit_each(3);
    r.release("a", 100, 200, unknown());
    r.acquire("d", 1, 150, 160, granted("d", 4, 1, 155));
    assert_passes(&r);
}

#[test]
fn a_grant_and_its_renewal_count_once() {
    // a holds 1 (granted, then renewed twice), b holds 2: 3 of 3 throughout.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.acquire("b", 2, 10, 15, granted("b", 2, 2, 10));
    r.renew("a", 500, 510, renewed("a", 1, 1, 0, 505));
    r.renew("a", 1_000, 1_010, renewed("a", 1, 1, 0, 1_005));
    assert_passes(&r);
    // A third holder is one too many while the renewed grant is held.
    r.acquire("c", 1, 1_100, 1_110, granted("c", 3, 1, 1_105));
    let findings = r.check();
    assert_eq!(kinds(&findings), vec![Kind::TooManyPermits], "{findings:?}");
}

#[test]
fn same_owner_from_two_clients_is_one_holder() {
    // Two clients share owner "a" (1 permit and 2 permits): the second is refused (409), and a
    // release by either ends a's grant.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.acquire("a", 2, 10, 15, PermitOutcome::Conflict { status: 409 });
    r.acquire("b", 2, 20, 25, granted("b", 2, 2, 20));
    r.release("a", 100, 110, PermitOutcome::Released);
    r.acquire("c", 1, 120, 130, granted("c", 3, 1, 125));
    assert_passes(&r);
}

#[test]
fn a_token_regression_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 7, 1, 0));
    r.acquire("b", 1, 10, 15, granted("b", 6, 1, 10));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
    // A status showing a larger token earlier counts too.
    let mut r = Recorder::new();
    r.status(0, 5, vec![lease("x", 9, 1, 0, 2_000)]);
    r.acquire("a", 1, 10, 15, granted("a", 9, 1, 10));
    assert!(kinds(&r.check()).contains(&Kind::TokenRegression));
    let mut r = Recorder::new();
    r.status(0, 5, vec![lease("x", 9, 1, 0, 2_000)]);
    r.acquire("a", 1, 10, 15, granted("a", 8, 1, 10));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
}

#[test]
fn concurrent_grants_may_come_in_any_token_order() {
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 50, granted("a", 7, 1, 40));
    r.acquire("b", 1, 10, 20, granted("b", 6, 1, 15));
    assert_passes(&r);
}

#[test]
fn a_token_shown_for_two_owners_or_two_semaphores_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 7, 1, 0));
    r.status(10, 15, vec![lease("b", 7, 1, 0, 2_000)]);
    assert!(kinds(&r.check()).contains(&Kind::TokenReused));
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 7, 1, 0));
    let mut elsewhere = lease("a", 7, 1, 0, 2_000);
    elsewhere.name = "s1".to_owned();
    r.op(
        "s1",
        PermitOpKind::Status,
        10,
        15,
        PermitOutcome::Seen(vec![elsewhere]),
    );
    assert_eq!(kinds(&r.check()), vec![Kind::TokenReused]);
}

#[test]
fn a_regrant_keeps_its_token() {
    // a is granted token 1, b token 2; a's re-grant (same permits) keeps token 1.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.acquire("b", 1, 10, 15, granted("b", 2, 1, 10));
    r.acquire("a", 1, 100, 105, granted("a", 1, 1, 100));
    assert_passes(&r);
}

#[test]
fn a_regrant_of_an_unheard_grant_is_not_flagged() {
    // a's first acquire timed out, but was granted token 1; b got token 2; a's next acquire is
    // a re-grant of the grant a never heard of: token 1, never shown before.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 300, unknown());
    r.acquire("b", 1, 100, 105, granted("b", 2, 1, 100));
    r.acquire("a", 1, 400, 405, granted("a", 1, 1, 400));
    assert_passes(&r);
    // Once that unheard grant has surely expired (its latest effect, 2.3 s, plus its TTL, 2 s),
    // a grant with token 1 is new, and a regression.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 300, unknown());
    r.acquire("b", 1, 100, 105, granted("b", 2, 1, 100));
    r.acquire("a", 1, 4_400, 4_405, granted("a", 1, 1, 4_400));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
    // Unless a renew left unknown may have kept it alive.
    r.renew("a", 2_000, 2_600, unknown());
    assert_passes(&r);
    // Without the unknown acquire, token 1 after token 2 is a regression.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 300, PermitOutcome::Unavailable);
    r.acquire("b", 1, 100, 105, granted("b", 2, 1, 100));
    r.acquire("a", 1, 400, 405, granted("a", 1, 1, 400));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
}

#[test]
fn a_grant_renewed_after_its_expiry_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.renew("a", 2_100, 2_110, renewed("a", 1, 1, 0, 2_105));
    assert_eq!(kinds(&r.check()), vec![Kind::SeenAfterExpiry]);
    // Renewed in time, then again: fine.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.renew("a", 1_900, 1_910, renewed("a", 1, 1, 0, 1_905));
    r.renew("a", 3_800, 3_810, renewed("a", 1, 1, 0, 3_805));
    assert_passes(&r);
    // A renew left unknown may have extended it: no proof.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.renew("a", 1_900, 2_500, unknown());
    r.status(2_600, 2_610, vec![lease("a", 1, 1, 0, 4_200)]);
    assert_passes(&r);
}

#[test]
fn a_status_missing_an_acknowledged_grant_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.acquire("b", 2, 10, 15, granted("b", 2, 2, 10));
    r.status(100, 110, vec![lease("b", 2, 2, 10, 2_010)]);
    assert_eq!(kinds(&r.check()), vec![Kind::LostAcknowledgement]);
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.status(100, 110, Vec::new());
    assert_eq!(kinds(&r.check()), vec![Kind::LostAcknowledgement]);
    // After a's release was invoked, a status without it is no proof.
    let mut r = Recorder::new();
    r.acquire("a", 1, 0, 5, granted("a", 1, 1, 0));
    r.release("a", 90, 200, unknown());
    r.status(100, 110, Vec::new());
    assert_passes(&r);
}

#[test]
fn the_history_reads_back_as_written() {
    let mut r = one_permit_each(4);
    r.renew("a", 100, 110, renewed("a", 1, 1, 0, 105));
    r.release("b", 120, 130, PermitOutcome::NotFound);
    r.status(140, 150, vec![lease("a", 1, 1, 0, 2_105)]);
    r.acquire("c", 1, 160, 170, PermitOutcome::Failed { status: 429 });
    r.acquire("c", 1, 180, 190, unknown());
    let text = lock_safety::permits::json::write(&r.history);
    let read = lock_safety::permits::json::read(&text).expect("reads back");
    assert_eq!(read.ops, r.history.ops);
    assert_eq!(read.names, r.history.names);
    assert_eq!(kinds(&checks::run(&read)), kinds(&r.check()));
}

/// Under a lock-delay, a grant that ran out keeps its permits from other owners: another
/// owner's grant that needs them inside the delay is too many permits; after it, or the owner's
/// own new grant, is fine; and a status in the delay need not show the ended grant.
#[test]
fn permits_taken_inside_another_owners_lock_delay_are_caught() {
    let run = |b_at_ms: i64, b_owner: &str| {
        let mut h = Recorder::new();
        h.history.lock_delays.insert(S0.to_owned(), 2_000 * MS);
        // a holds all 3 permits until 2 s; its delay keeps them until 4 s.
        h.acquire("a", 3, 0, 10, granted("a", 1, 3, 0));
        h.status(2_500, 2_510, vec![]);
        h.acquire(
            b_owner,
            1,
            b_at_ms,
            b_at_ms + 10,
            granted(b_owner, 2, 1, b_at_ms),
        );
        h
    };
    let inside = run(2_600, "b");
    assert_eq!(kinds(&inside.check()), [Kind::TooManyPermits]);
    assert_passes(&run(4_200, "b"));
    assert_passes(&run(2_600, "a"));
    let mut plain = run(2_600, "b");
    plain.history.lock_delays.clear();
    assert_passes(&plain);
}
