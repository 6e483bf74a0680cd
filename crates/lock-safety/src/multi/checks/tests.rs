//! The multi-lock checks must be able to fail: hand-made histories with a granted answer listing
//! fewer locks than asked (or others), a status proving one lock of a granted set held by another
//! owner once another client had seen the set's other lock, a "held" to the set's owner while the
//! set's other lock was surely held, and a refused set whose lease shows up later are each caught;
//! sets granted whole, sets refused, sets left unknown and overlapping sets taking turns pass, and
//! so do the per-resource histories they were split into.

use super::{check, run, Finding, Kind};
use crate::history::{History, Lease, Op, OpKind, Outcome};
use crate::multi::{json, report, split, MultiHistory, MultiOp, MultiOpKind, MultiOutcome};
use crate::multi::{OpRef, Released};
use crate::shared::Mode::{Exclusive, Shared};
use crate::shared::{self, Holder, Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};

const MS: i64 = 1_000;

struct Recorder {
    locks: History,
    shared: SharedHistory,
    multi: MultiHistory,
}

impl Recorder {
    fn new() -> Self {
        let mut locks = History::new(0, 42);
        locks.resources = vec!["p0".to_owned(), "p1".to_owned()];
        locks.horizon_us = 2_000 * MS;
        let mut shared = SharedHistory::new(0, 42);
        shared.resources = vec!["s0".to_owned(), "s1".to_owned()];
        shared.horizon_us = 2_000 * MS;
        let mut multi = MultiHistory::new(0, 42);
        multi.horizon_us = 2_000 * MS;
        Self {
            locks,
            shared,
            multi,
        }
    }

    /// Records a multi-lock operation and its parts in the per-resource histories.
    fn multi(&mut self, client: u32, kind: MultiOpKind, from: i64, to: i64, outcome: MultiOutcome) {
        let mut op = MultiOp {
            id: 0,
            client,
            kind,
            invoke: from * MS,
            complete: to * MS,
            outcome,
        };
        let parts = split(&op, &self.shared.resources);
        for part in parts.locks {
            self.locks.push(part);
        }
        for part in parts.shared {
            self.shared.push(part);
        }
        op.id = self.multi.push(op.clone());
    }

    fn set(
        &mut self,
        client: u32,
        owner: &str,
        locks: &[(&str, Mode)],
        (from, to): (i64, i64),
        outcome: MultiOutcome,
    ) {
        let kind = MultiOpKind::AcquireAll {
            owner: owner.to_owned(),
            ttl_seconds: 2,
            wait_seconds: 1,
            locks: locks.iter().map(|(r, m)| ((*r).to_owned(), *m)).collect(),
        };
        self.multi(client, kind, from, to, outcome);
    }

    fn release_all(
        &mut self,
        client: u32,
        owner: &str,
        results: &[(&str, Released)],
        from: i64,
        to: i64,
    ) {
        let kind = MultiOpKind::ReleaseAll {
            owner: owner.to_owned(),
            resources: results.iter().map(|(r, _)| (*r).to_owned()).collect(),
        };
        let results = results
            .iter()
            .map(|(r, what)| ((*r).to_owned(), *what))
            .collect();
        self.multi(client, kind, from, to, MultiOutcome::Results(results));
    }

    fn lock(
        &mut self,
        client: u32,
        resource: &str,
        kind: OpKind,
        from: i64,
        to: i64,
        outcome: Outcome,
    ) -> usize {
        self.locks.push(Op {
            id: 0,
            client,
            resource: resource.to_owned(),
            kind,
            invoke: from * MS,
            complete: to * MS,
            outcome,
        })
    }

    fn shared(
        &mut self,
        client: u32,
        resource: &str,
        kind: SharedOpKind,
        from: i64,
        to: i64,
        outcome: SharedOutcome,
    ) -> usize {
        self.shared.push(SharedOp {
            id: 0,
            client,
            resource: resource.to_owned(),
            kind,
            invoke: from * MS,
            complete: to * MS,
            outcome,
        })
    }

    fn findings(&self) -> Vec<Finding> {
        run(&self.multi, &self.locks, &self.shared)
    }

    /// No finding, and none in the per-resource histories either (the search included).
    fn assert_passes(&self) {
        let findings = self.findings();
        assert!(
            findings.is_empty(),
            "expected no findings, got:{}",
            report::render(&self.multi, &self.locks, &self.shared, &findings)
        );
        let locks = crate::check(&self.locks, 200_000);
        assert_eq!(
            (locks.violations(), locks.unknown()),
            (0, 0),
            "{}",
            locks.render(&self.locks)
        );
        let shared = shared::checks::run(&self.shared);
        assert!(
            shared.is_empty(),
            "{}",
            shared::report::render(&self.shared, &shared)
        );
    }
}

fn holder(resource: &str, owner: &str, token: i64, mode: Mode, at_ms: i64, ends_ms: i64) -> Holder {
    Holder {
        resource: resource.to_owned(),
        owner: owner.to_owned(),
        token,
        mode,
        acquired_at: at_ms * MS,
        expires_at: ends_ms * MS,
    }
}

fn lease(resource: &str, owner: &str, token: i64, at_ms: i64, ends_ms: i64) -> Lease {
    Lease {
        resource: resource.to_owned(),
        owner: owner.to_owned(),
        token,
        acquired_at: at_ms * MS,
        expires_at: ends_ms * MS,
    }
}

fn acquire(owner: &str) -> OpKind {
    OpKind::Acquire {
        owner: owner.to_owned(),
        ttl_seconds: 2,
        wait_seconds: 0,
    }
}

fn shared_acquire(owner: &str, mode: Mode) -> SharedOpKind {
    SharedOpKind::Acquire {
        owner: owner.to_owned(),
        ttl_seconds: 2,
        wait_seconds: 0,
        mode,
    }
}

fn kinds(findings: &[Finding]) -> Vec<Kind> {
    findings.iter().map(|f| f.kind).collect()
}

/// o's set of p0 (exclusive) and s0 (shared), asked at 100 ms and answered at 400 ms, granted at
/// 140 ms with tokens 5 and 6; x held s0 exclusively until 260 ms.
fn set_granted_while_x_held_s0() -> Recorder {
    let mut r = Recorder::new();
    let x = holder("s0", "x", 3, Exclusive, 5, 260);
    r.shared(
        2,
        "s0",
        shared_acquire("x", Exclusive),
        0,
        10,
        SharedOutcome::Granted(x),
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("s0", Shared)],
        (100, 400),
        MultiOutcome::Granted(vec![
            holder("p0", "o", 5, Exclusive, 140, 2_140),
            holder("s0", "o", 6, Shared, 140, 2_140),
        ]),
    );
    r
}

#[test]
fn an_answer_listing_fewer_locks_or_others_is_caught() {
    let asked = [("p0", Exclusive), ("s0", Shared)];
    let p0 = holder("p0", "o", 5, Exclusive, 140, 2_140);
    let s0 = holder("s0", "o", 6, Shared, 140, 2_140);
    let answers = [
        (vec![p0.clone()], "lists 1 locks of the 2 asked: s0 missing"),
        (
            vec![s0.clone(), p0.clone()],
            "lock 1 is s0 where p0 was asked",
        ),
        (
            vec![
                p0.clone(),
                Holder {
                    mode: Exclusive,
                    ..s0.clone()
                },
            ],
            "s0 granted to o exclusive where o asked it shared",
        ),
        (vec![p0.clone(), Holder { token: 5, ..s0 }], "one token, 5"),
    ];
    for (answer, why) in answers {
        let mut r = Recorder::new();
        r.set(1, "o", &asked, (100, 200), MultiOutcome::Granted(answer));
        let findings = r.findings();
        assert_eq!(
            kinds(&findings),
            vec![Kind::IncompleteGrant],
            "{findings:?}"
        );
        assert!(findings[0].message.contains(why), "{}", findings[0].message);
    }
    // The lock the answer did not show is unknown in its resource's history, not granted.
    let mut r = Recorder::new();
    r.set(1, "o", &asked, (100, 200), MultiOutcome::Granted(vec![p0]));
    assert!(r.shared.ops[0].outcome.is_unknown());
    assert!(matches!(r.locks.ops[0].outcome, Outcome::Granted(_)));
}

#[test]
fn another_writer_seen_once_the_other_lock_was_seen_is_caught() {
    // A status shows o's p0 lease (token 5, acquired at 140 ms: only the set made it) at 160 ms,
    // so the whole set had been granted; yet at 200 ms x still held s0.
    let mut r = set_granted_while_x_held_s0();
    let pin = r.lock(
        3,
        "p0",
        OpKind::Status,
        150,
        160,
        Outcome::Seen(Some(lease("p0", "o", 5, 140, 2_140))),
    );
    let x = holder("s0", "x", 3, Exclusive, 5, 260);
    let proof = r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        200,
        210,
        SharedOutcome::Seen(vec![x]),
    );
    let findings = r.findings();
    assert_eq!(kinds(&findings), vec![Kind::HalfGranted], "{findings:?}");
    assert_eq!(
        findings[0].ops,
        vec![OpRef::Locks(pin), OpRef::Shared(proof)]
    );
    let coverage = check(&r.multi, &r.locks, &r.shared).coverage;
    assert_eq!((coverage.sets, coverage.seen_before_answer), (1, 1));
    assert!(
        findings[0]
            .message
            .contains("proved s0 token 6 not held by o"),
        "{}",
        findings[0].message
    );
    // Only the set's history shows it: each resource's own checks pass.
    assert!(shared::checks::run(&r.shared).is_empty());
    assert_eq!(crate::check(&r.locks, 200_000).violations(), 0);
    let text = report::render(&r.multi, &r.locks, &r.shared, &findings);
    assert!(
        text.contains("seed 42") && text.contains("* multi  #0") && text.contains("* shared #2"),
        "{text}"
    );
}

#[test]
fn without_a_sign_of_the_grant_a_read_during_the_request_proves_nothing() {
    // The same status on s0, but nothing showed the set's grant before it: the set may have been
    // granted after it, at any instant up to its answer.
    let mut r = set_granted_while_x_held_s0();
    let x = holder("s0", "x", 3, Exclusive, 5, 260);
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        200,
        210,
        SharedOutcome::Seen(vec![x]),
    );
    r.assert_passes();
    // A lease with the set's token and acquired_at that another acquire of o (left unknown,
    // running then) may have made is no sign of the set's grant either.
    let mut r = set_granted_while_x_held_s0();
    r.lock(
        7,
        "p0",
        acquire("o"),
        120,
        130,
        Outcome::Unknown {
            why: "timeout".to_owned(),
        },
    );
    r.lock(
        3,
        "p0",
        OpKind::Status,
        150,
        160,
        Outcome::Seen(Some(lease("p0", "o", 5, 140, 2_140))),
    );
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        200,
        210,
        SharedOutcome::Seen(vec![holder("s0", "x", 3, Exclusive, 5, 260)]),
    );
    assert!(r.findings().is_empty(), "{:?}", r.findings());
}

#[test]
fn a_lock_of_a_granted_set_missing_while_the_other_is_held_is_caught() {
    // After the answer: a status showing s0 free while p0 is surely held.
    let mut r = set_granted_while_x_held_s0();
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        500,
        510,
        SharedOutcome::Seen(Vec::new()),
    );
    assert_eq!(kinds(&r.findings()), vec![Kind::HalfGranted]);
    // A "held" to the set's own owner on p1 while p0 is surely held: o did not hold p1.
    let mut r = Recorder::new();
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("p1", Exclusive)],
        (100, 200),
        MultiOutcome::Granted(vec![
            holder("p0", "o", 5, Exclusive, 150, 2_150),
            holder("p1", "o", 6, Exclusive, 150, 2_150),
        ]),
    );
    r.lock(1, "p1", acquire("o"), 300, 310, Outcome::Held);
    assert_eq!(kinds(&r.findings()), vec![Kind::HalfGranted]);
}

#[test]
fn a_refused_set_that_left_a_lease_is_caught() {
    let mut r = Recorder::new();
    r.lock(
        2,
        "p0",
        acquire("x"),
        0,
        10,
        Outcome::Granted(lease("p0", "x", 1, 5, 2_005)),
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("s0", Shared)],
        (100, 120),
        MultiOutcome::Unavailable(vec!["p0".to_owned()]),
    );
    let proof = r.shared(
        3,
        "s0",
        SharedOpKind::Status,
        300,
        310,
        SharedOutcome::Seen(vec![holder("s0", "o", 2, Shared, 110, 2_110)]),
    );
    let findings = r.findings();
    assert_eq!(
        kinds(&findings),
        vec![Kind::RefusedLeftLease],
        "{findings:?}"
    );
    assert_eq!(findings[0].ops, vec![OpRef::Shared(proof)]);
    // The shared-lock checks alone do not see it.
    assert!(shared::checks::run(&r.shared).is_empty());
}

#[test]
fn sets_granted_whole_pass() {
    let mut r = Recorder::new();
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        120,
        130,
        SharedOutcome::Seen(Vec::new()),
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("s0", Shared)],
        (100, 200),
        MultiOutcome::Granted(vec![
            holder("p0", "o", 5, Exclusive, 150, 2_150),
            holder("s0", "o", 6, Shared, 150, 2_150),
        ]),
    );
    r.lock(
        3,
        "p0",
        OpKind::Status,
        160,
        170,
        Outcome::Seen(Some(lease("p0", "o", 5, 150, 2_150))),
    );
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        180,
        190,
        SharedOutcome::Seen(vec![holder("s0", "o", 6, Shared, 150, 2_150)]),
    );
    r.shared(
        5,
        "s0",
        shared_acquire("y", Shared),
        300,
        310,
        SharedOutcome::Granted(holder("s0", "y", 7, Shared, 305, 2_305)),
    );
    r.lock(2, "p0", acquire("x"), 320, 330, Outcome::Held);
    r.lock(
        3,
        "p0",
        OpKind::List,
        340,
        350,
        Outcome::Listed(vec![lease("p0", "o", 5, 150, 2_150)]),
    );
    r.release_all(
        1,
        "o",
        &[("p0", Released::Released), ("s0", Released::Released)],
        500,
        510,
    );
    r.lock(3, "p0", OpKind::Status, 600, 610, Outcome::Seen(None));
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        620,
        630,
        SharedOutcome::Seen(vec![holder("s0", "y", 7, Shared, 305, 2_305)]),
    );
    r.assert_passes();
    // The status of each lock after the other was seen, y's grant, x's "held" and the listing.
    let coverage = check(&r.multi, &r.locks, &r.shared).coverage;
    assert_eq!((coverage.sets, coverage.seen_before_answer), (1, 1));
    assert_eq!(coverage.answers_judged, 4);
}

#[test]
fn refused_and_unknown_sets_pass() {
    let mut r = Recorder::new();
    // o held p0 before; its set of p0 and p1 is refused (x holds p1): p0 keeps its old lease.
    r.lock(
        1,
        "p0",
        acquire("o"),
        0,
        10,
        Outcome::Granted(lease("p0", "o", 1, 5, 2_005)),
    );
    r.lock(
        2,
        "p1",
        acquire("x"),
        20,
        30,
        Outcome::Granted(lease("p1", "x", 2, 25, 2_025)),
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("p1", Exclusive)],
        (100, 120),
        MultiOutcome::Unavailable(vec!["p1".to_owned()]),
    );
    r.lock(
        3,
        "p0",
        OpKind::Status,
        200,
        210,
        Outcome::Seen(Some(lease("p0", "o", 1, 5, 2_005))),
    );
    // A refused set of s0 and p1 while the other client of o (client 0) acquires s0 at once: the
    // lease o holds afterwards is that acquire's.
    r.set(
        1,
        "o",
        &[("s0", Shared), ("p1", Exclusive)],
        (300, 320),
        MultiOutcome::Unavailable(vec!["p1".to_owned()]),
    );
    r.shared(
        0,
        "s0",
        shared_acquire("o", Shared),
        305,
        315,
        SharedOutcome::Granted(holder("s0", "o", 3, Shared, 310, 2_310)),
    );
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        400,
        410,
        SharedOutcome::Seen(vec![holder("s0", "o", 3, Shared, 310, 2_310)]),
    );
    // A set left unknown: it may have been granted at any instant, or not, so reads during it and
    // after it may show any of its locks, or none.
    r.set(
        5,
        "y",
        &[("s1", Exclusive), ("p1", Exclusive)],
        (500, 900),
        MultiOutcome::Unknown {
            why: "503".to_owned(),
        },
    );
    r.shared(
        4,
        "s1",
        SharedOpKind::Status,
        600,
        610,
        SharedOutcome::Seen(vec![holder("s1", "y", 4, Exclusive, 550, 2_550)]),
    );
    r.lock(
        3,
        "p1",
        OpKind::Status,
        620,
        630,
        Outcome::Seen(Some(lease("p1", "x", 2, 25, 2_025))),
    );
    r.assert_passes();
}

#[test]
fn overlapping_sets_taking_turns_pass() {
    let mut r = Recorder::new();
    // a takes p0 and s0; b waits for s0 and p1 (refused meanwhile to c); a releases both; b gets
    // its set; c, asking p0 and p1, is refused on p1 only.
    r.set(
        1,
        "a",
        &[("p0", Exclusive), ("s0", Exclusive)],
        (0, 10),
        MultiOutcome::Granted(vec![
            holder("p0", "a", 1, Exclusive, 5, 2_005),
            holder("s0", "a", 2, Exclusive, 5, 2_005),
        ]),
    );
    r.set(
        2,
        "b",
        &[("s0", Exclusive), ("p1", Exclusive)],
        (20, 700),
        MultiOutcome::Granted(vec![
            holder("s0", "b", 3, Exclusive, 650, 2_650),
            holder("p1", "b", 4, Exclusive, 650, 2_650),
        ]),
    );
    r.set(
        3,
        "c",
        &[("s0", Shared), ("p1", Exclusive)],
        (100, 110),
        MultiOutcome::Unavailable(vec!["s0".to_owned()]),
    );
    r.shared(
        4,
        "s0",
        SharedOpKind::Status,
        300,
        310,
        SharedOutcome::Seen(vec![holder("s0", "a", 2, Exclusive, 5, 2_005)]),
    );
    r.release_all(
        1,
        "a",
        &[("p0", Released::Released), ("s0", Released::Released)],
        600,
        640,
    );
    r.lock(
        4,
        "p1",
        OpKind::Status,
        660,
        670,
        Outcome::Seen(Some(lease("p1", "b", 4, 650, 2_650))),
    );
    r.shared(
        5,
        "s0",
        SharedOpKind::Status,
        680,
        690,
        SharedOutcome::Seen(vec![holder("s0", "b", 3, Exclusive, 650, 2_650)]),
    );
    r.set(
        3,
        "c",
        &[("p0", Exclusive), ("p1", Exclusive)],
        (750, 760),
        MultiOutcome::Unavailable(vec!["p1".to_owned()]),
    );
    r.lock(4, "p0", OpKind::Status, 800, 810, Outcome::Seen(None));
    r.release_all(
        2,
        "b",
        &[
            ("s0", Released::Released),
            ("p1", Released::Released),
            ("p0", Released::NotFound),
        ],
        900,
        910,
    );
    r.set(
        3,
        "c",
        &[("p0", Exclusive), ("p1", Exclusive)],
        (950, 960),
        MultiOutcome::Granted(vec![
            holder("p0", "c", 5, Exclusive, 955, 2_955),
            holder("p1", "c", 6, Exclusive, 955, 2_955),
        ]),
    );
    r.assert_passes();
}

#[test]
fn the_history_splits_and_reads_back() {
    let mut r = Recorder::new();
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("s0", Shared), ("p1", Exclusive)],
        (0, 10),
        MultiOutcome::Unavailable(vec!["s0".to_owned()]),
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive), ("s1", Shared)],
        (20, 30),
        MultiOutcome::Failed { status: 429 },
    );
    r.release_all(
        1,
        "o",
        &[("p0", Released::NotFound), ("s1", Released::Forbidden)],
        40,
        50,
    );
    r.set(
        1,
        "o",
        &[("p0", Exclusive)],
        (60, 70),
        MultiOutcome::Unknown {
            why: "timeout".to_owned(),
        },
    );
    // Only the lock named unavailable is an acquire ("held"); the failed set left nothing.
    let shared: Vec<&SharedOutcome> = r.shared.ops.iter().map(|op| &op.outcome).collect();
    assert_eq!(
        shared,
        vec![&SharedOutcome::Held, &SharedOutcome::Forbidden]
    );
    let locks: Vec<&Outcome> = r.locks.ops.iter().map(|op| &op.outcome).collect();
    assert_eq!(locks.len(), 2);
    assert_eq!(locks[0], &Outcome::NotFound);
    assert!(locks[1].is_unknown());
    let again = json::read(&json::write(&r.multi)).expect("reads back");
    assert_eq!(again.ops, r.multi.ops);
    assert_eq!((again.seed, again.horizon_us), (42, 2_000 * MS));
}
