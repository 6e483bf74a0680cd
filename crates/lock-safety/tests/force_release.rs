//! Force-releases in the lock history: a lease acknowledged and then force-released is
//! legitimately gone, so the next owner's grant, a 404 to the old holder's renew and a status
//! without it pass every check (the search and the direct checks); an unanswered force-release
//! may have ended the lease or not. A force-release's answer is held to the truth like any other:
//! a 404 while a lease was surely held, an ended lease seen again, a token not larger after it, or
//! an answer naming another lease than the live one are caught.

use lock_safety::checks::Kind;
use lock_safety::linearizability::Verdict;
use lock_safety::{check, CheckReport, EndedLease, History, Lease, Op, OpKind, Outcome};

const MS: i64 = 1_000;
const R: &str = "r";

fn history() -> History {
    let mut history = History::new(0, 42);
    history.resources = vec![R.to_owned()];
    history.horizon_us = 2_000 * MS;
    history
}

fn push(
    history: &mut History,
    client: u32,
    kind: OpKind,
    from_ms: i64,
    to_ms: i64,
    outcome: Outcome,
) {
    history.push(Op {
        id: 0,
        client,
        resource: R.to_owned(),
        kind,
        invoke: from_ms * MS,
        complete: to_ms * MS,
        outcome,
    });
}

fn acquire(owner: &str) -> OpKind {
    OpKind::Acquire {
        owner: owner.to_owned(),
        ttl_seconds: 10,
        wait_seconds: 0,
    }
}

fn force() -> OpKind {
    OpKind::ForceRelease {
        reason: "wedged".to_owned(),
    }
}

/// A lease of ten seconds acquired at `acquired_ms`.
fn lease(owner: &str, token: i64, acquired_ms: i64) -> Lease {
    Lease {
        resource: R.to_owned(),
        owner: owner.to_owned(),
        token,
        acquired_at: acquired_ms * MS,
        expires_at: (acquired_ms + 10_000) * MS,
    }
}

fn ended(owner: &str, token: i64) -> Outcome {
    Outcome::ForceReleased(vec![EndedLease {
        owner: owner.to_owned(),
        token,
    }])
}

fn violations(history: &History) -> (CheckReport, bool) {
    let report = check(history, 200_000);
    let failed = report.violations() > 0
        || report
            .partitions
            .iter()
            .any(|p| matches!(p.verdict, Verdict::Violation { .. }));
    (report, failed)
}

/// `a` is granted token 1 at 0 s (ten seconds), and force-released at 1 s.
fn forced_at_one_second() -> History {
    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    push(&mut h, 9, force(), 1000, 1010, ended("a", 1));
    h
}

#[test]
fn a_force_released_lease_is_gone_and_the_next_owner_may_take_it() {
    let mut h = forced_at_one_second();
    push(
        &mut h,
        2,
        acquire("b"),
        1100,
        1110,
        Outcome::Granted(lease("b", 2, 1105)),
    );
    push(
        &mut h,
        99,
        OpKind::Status,
        1200,
        1210,
        Outcome::Seen(Some(lease("b", 2, 1105))),
    );
    // The old holder learns it at its next renew, and its release finds nothing of its own.
    let renew = OpKind::Renew {
        owner: "a".to_owned(),
        ttl_seconds: 10,
    };
    push(&mut h, 1, renew, 1300, 1310, Outcome::Forbidden);
    let release = OpKind::Release {
        owner: "a".to_owned(),
    };
    push(&mut h, 1, release, 1400, 1410, Outcome::Forbidden);
    push(
        &mut h,
        2,
        OpKind::Release {
            owner: "b".to_owned(),
        },
        1500,
        1510,
        Outcome::Released,
    );
    push(&mut h, 9, force(), 1600, 1610, Outcome::NotFound);
    push(&mut h, 99, OpKind::Status, 1700, 1710, Outcome::Seen(None));
    let (report, failed) = violations(&h);
    assert!(!failed, "{}", report.render(&h));
}

#[test]
fn an_unanswered_force_release_may_have_ended_the_lease_or_not() {
    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    push(
        &mut h,
        9,
        force(),
        1000,
        1010,
        Outcome::Unknown {
            why: "timeout".to_owned(),
        },
    );
    push(
        &mut h,
        2,
        acquire("b"),
        1100,
        1110,
        Outcome::Granted(lease("b", 2, 1105)),
    );
    let (report, failed) = violations(&h);
    assert!(!failed, "{}", report.render(&h));

    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    push(
        &mut h,
        9,
        force(),
        1000,
        1010,
        Outcome::Unknown {
            why: "timeout".to_owned(),
        },
    );
    push(
        &mut h,
        99,
        OpKind::Status,
        1100,
        1110,
        Outcome::Seen(Some(lease("a", 1, 5))),
    );
    let (report, failed) = violations(&h);
    assert!(!failed, "{}", report.render(&h));
}

#[test]
fn a_404_while_a_lease_was_surely_held_is_caught() {
    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    push(&mut h, 9, force(), 1000, 1010, Outcome::NotFound);
    let (report, failed) = violations(&h);
    assert!(failed);
    assert!(report
        .findings
        .iter()
        .any(|f| f.kind == Kind::LostAcknowledgement));
}

#[test]
fn a_force_released_lease_seen_again_is_caught() {
    let mut h = forced_at_one_second();
    push(
        &mut h,
        99,
        OpKind::Status,
        1100,
        1110,
        Outcome::Seen(Some(lease("a", 1, 5))),
    );
    let (report, failed) = violations(&h);
    assert!(failed);
    assert!(
        report.findings.iter().any(|f| f.kind == Kind::Revived),
        "{}",
        report.render(&h)
    );
}

#[test]
fn a_renewal_after_the_force_release_is_caught() {
    let mut h = forced_at_one_second();
    let renew = OpKind::Renew {
        owner: "a".to_owned(),
        ttl_seconds: 10,
    };
    push(
        &mut h,
        1,
        renew,
        1100,
        1110,
        Outcome::Renewed(lease("a", 1, 5)),
    );
    let (report, failed) = violations(&h);
    assert!(failed, "{}", report.render(&h));
}

#[test]
fn a_token_not_larger_after_the_force_release_is_caught() {
    let mut h = forced_at_one_second();
    push(
        &mut h,
        2,
        acquire("b"),
        1100,
        1110,
        Outcome::Granted(lease("b", 1, 1105)),
    );
    let (report, failed) = violations(&h);
    assert!(failed, "{}", report.render(&h));
}

#[test]
fn a_force_release_naming_another_lease_than_the_live_one_is_caught() {
    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    push(&mut h, 9, force(), 1000, 1010, ended("b", 7));
    let (report, failed) = violations(&h);
    assert!(failed, "{}", report.render(&h));
    // Two leases at once is no answer an exclusive lock can give either.
    let mut h = history();
    push(
        &mut h,
        1,
        acquire("a"),
        0,
        10,
        Outcome::Granted(lease("a", 1, 5)),
    );
    let two = Outcome::ForceReleased(vec![
        EndedLease {
            owner: "a".to_owned(),
            token: 1,
        },
        EndedLease {
            owner: "b".to_owned(),
            token: 2,
        },
    ]);
    push(&mut h, 9, force(), 1000, 1010, two);
    let (report, failed) = violations(&h);
    assert!(failed, "{}", report.render(&h));
}

/// A set of `p0` and `p1` granted to `o` at 0.1 s (for ten seconds), split into the lock history
/// as the runner does, then a force-release of `p0` answered `ended`, then a status of `p0`
/// showing nothing while `p1` is still surely held.
fn set_then_force(ended: Outcome) -> Vec<lock_safety::multi::checks::Finding> {
    use lock_safety::{multi, Holder, Mode, MultiHistory, MultiOp, MultiOpKind, MultiOutcome};
    let mut h = history();
    h.resources = vec!["p0".to_owned(), "p1".to_owned()];
    let holder = |resource: &str, token| Holder {
        resource: resource.to_owned(),
        owner: "o".to_owned(),
        token,
        mode: Mode::Exclusive,
        acquired_at: 150 * MS,
        expires_at: 10_150 * MS,
    };
    let set = MultiOp {
        id: 0,
        client: 1,
        kind: MultiOpKind::AcquireAll {
            owner: "o".to_owned(),
            ttl_seconds: 10,
            wait_seconds: 0,
            locks: vec![
                ("p0".to_owned(), Mode::Exclusive),
                ("p1".to_owned(), Mode::Exclusive),
            ],
        },
        invoke: 100 * MS,
        complete: 200 * MS,
        outcome: MultiOutcome::Granted(vec![holder("p0", 5), holder("p1", 6)]),
    };
    for part in multi::split(&set, &[]).locks {
        h.push(part);
    }
    let mut on_p0 = |client, kind, from: i64, to: i64, outcome| {
        h.push(Op {
            id: 0,
            client,
            resource: "p0".to_owned(),
            kind,
            invoke: from * MS,
            complete: to * MS,
            outcome,
        })
    };
    on_p0(9, force(), 1000, 1010, ended);
    on_p0(99, OpKind::Status, 1100, 1110, Outcome::Seen(None));
    let mut sets = MultiHistory::new(0, 42);
    sets.horizon_us = h.horizon_us;
    sets.push(set);
    let shared = lock_safety::SharedHistory::new(0, 42);
    multi::checks::run(&sets, &h, &shared)
}

#[test]
fn a_lock_of_a_set_force_released_is_not_half_granted() {
    assert!(set_then_force(ended("o", 5)).is_empty());
    assert!(set_then_force(Outcome::Unknown {
        why: "timeout".to_owned()
    })
    .is_empty());
    // A force-release that ended someone else's lease there did not end the set's.
    let findings = set_then_force(ended("x", 9));
    assert_eq!(findings.len(), 1, "{findings:?}");
}
