//! The checker judges holds under a session: hand-made histories where a keepalive revives a
//! session, a hold outlives its session, a session's holds do not end together, or another owner
//! is granted a place the session's keepalive kept, are each caught; a valid history with
//! keepalives, a close and a session that ran out passes.

use lock_safety::checks::Kind;
use lock_safety::history::session_owner;
use lock_safety::linearizability::Verdict;
use lock_safety::{check, CheckReport, History, Lease, Op, OpKind, Outcome};

const MS: i64 = 1_000;
const S: i64 = 1_000_000;
const BUDGET: u64 = 200_000;

struct Recorder {
    history: History,
    session: String,
}

impl Recorder {
    fn new() -> Self {
        let mut history = History::new(0, 7);
        history.resources = vec!["a".to_owned(), "b".to_owned()];
        history.horizon_us = 2 * S;
        Self {
            history,
            session: session_owner("s1"),
        }
    }

    fn op(&mut self, resource: &str, kind: OpKind, at_ms: (i64, i64), outcome: Outcome) -> usize {
        self.history.push(Op {
            id: 0,
            client: 0,
            resource: resource.to_owned(),
            kind,
            invoke: at_ms.0 * MS,
            complete: at_ms.1 * MS,
            outcome,
        })
    }

    fn open(&mut self, at_ms: (i64, i64), expires_ms: i64) {
        let owner = self.session.clone();
        let kind = OpKind::OpenSession {
            owner: owner.clone(),
            ttl_seconds: 3,
        };
        let outcome = Outcome::Kept {
            expires_at: expires_ms * MS,
        };
        self.op(&owner, kind, at_ms, outcome);
    }

    fn keepalive(&mut self, at_ms: (i64, i64), outcome: Outcome) -> usize {
        let owner = self.session.clone();
        let kind = OpKind::KeepAlive {
            owner: owner.clone(),
            ttl_seconds: 3,
        };
        self.op(&owner, kind, at_ms, outcome)
    }

    fn close(&mut self, at_ms: (i64, i64), outcome: Outcome) -> usize {
        let owner = self.session.clone();
        let kind = OpKind::EndSession {
            owner: owner.clone(),
        };
        self.op(&owner, kind, at_ms, outcome)
    }

    fn acquire(&mut self, resource: &str, owner: &str, at_ms: (i64, i64), outcome: Outcome) {
        let kind = OpKind::Acquire {
            owner: owner.to_owned(),
            ttl_seconds: 3,
            wait_seconds: 0,
        };
        self.op(resource, kind, at_ms, outcome);
    }

    fn status(&mut self, resource: &str, at_ms: (i64, i64), seen: Option<Lease>) -> usize {
        self.op(resource, OpKind::Status, at_ms, Outcome::Seen(seen))
    }

    fn lease(&self, resource: &str, token: i64, acquired_ms: i64, expires_ms: i64) -> Lease {
        Lease {
            resource: resource.to_owned(),
            owner: self.session.clone(),
            token,
            acquired_at: acquired_ms * MS,
            expires_at: expires_ms * MS,
        }
    }

    /// The session opened at 0 ms (until 3 s), holding `a` (token 1) and `b` (token 2).
    fn holding_two() -> Self {
        let mut r = Self::new();
        r.open((0, 10), 3_000);
        let a = r.lease("a", 1, 20, 3_000);
        r.acquire("a", &r.session.clone(), (20, 30), Outcome::Granted(a));
        let b = r.lease("b", 2, 40, 3_000);
        r.acquire("b", &r.session.clone(), (40, 50), Outcome::Granted(b));
        r
    }

    fn check(&self) -> CheckReport {
        check(&self.history, BUDGET)
    }
}

fn kinds(report: &CheckReport) -> Vec<Kind> {
    report.findings.iter().map(|f| f.kind).collect()
}

fn not_linearizable(report: &CheckReport) -> Vec<String> {
    report
        .partitions
        .iter()
        .filter(|p| matches!(p.verdict, Verdict::Violation { .. }))
        .map(|p| p.resource.clone())
        .collect()
}

fn kept(expires_ms: i64) -> Outcome {
    Outcome::Kept {
        expires_at: expires_ms * MS,
    }
}

#[test]
fn keepalives_a_close_and_a_session_that_ran_out_pass() {
    let mut r = Recorder::holding_two();
    r.keepalive((2_000, 2_010), kept(5_000));
    // Kept alive past the first end: still held at 4 s.
    let a = r.lease("a", 1, 20, 5_000);
    r.status("a", (4_000, 4_010), Some(a));
    r.keepalive((4_500, 4_510), kept(7_500));
    r.close((5_000, 5_010), Outcome::Released);
    r.status("b", (5_100, 5_110), None);
    r.acquire(
        "a",
        "other",
        (5_200, 5_210),
        Outcome::Granted(Lease {
            resource: "a".to_owned(),
            owner: "other".to_owned(),
            token: 3,
            acquired_at: 5_200 * MS,
            expires_at: 8_200 * MS,
        }),
    );
    let report = r.check();
    assert_eq!(kinds(&report), vec![]);
    assert_eq!(not_linearizable(&report), Vec::<String>::new());
}

#[test]
fn a_keepalive_after_a_close_is_a_revival() {
    let mut r = Recorder::holding_two();
    r.close((1_000, 1_010), Outcome::Released);
    r.keepalive((1_500, 1_510), kept(4_500));
    assert!(kinds(&r.check()).contains(&Kind::SessionRevived));
}

#[test]
fn a_keepalive_after_the_session_ran_out_is_a_revival() {
    let mut r = Recorder::holding_two();
    // Its end was 3 s; nothing kept it alive.
    r.keepalive((3_500, 3_510), kept(6_500));
    let report = r.check();
    assert!(kinds(&report).contains(&Kind::SessionRevived));
    // The model finds it too: the holds were surely over.
    assert!(!not_linearizable(&report).is_empty());
}

#[test]
fn a_hold_seen_after_its_session_ran_out_is_caught() {
    let mut r = Recorder::holding_two();
    let b = r.lease("b", 2, 40, 3_000);
    r.status("b", (3_500, 3_510), Some(b));
    assert!(kinds(&r.check()).contains(&Kind::SessionHoldAfterEnd));
}

#[test]
fn holds_that_do_not_end_together_are_caught() {
    let mut r = Recorder::holding_two();
    r.keepalive((2_000, 2_010), kept(5_000));
    // `a` is taken over at 2.5 s (the session never released it): the session is over...
    r.acquire(
        "a",
        "other",
        (2_500, 2_510),
        Outcome::Granted(Lease {
            resource: "a".to_owned(),
            owner: "other".to_owned(),
            token: 3,
            acquired_at: 2_500 * MS,
            expires_at: 5_500 * MS,
        }),
    );
    // ...yet its hold of `b` is seen live after.
    let b = r.lease("b", 2, 40, 5_000);
    r.status("b", (2_600, 2_610), Some(b));
    assert!(kinds(&r.check()).contains(&Kind::SessionHoldAfterEnd));
}

#[test]
fn a_grant_into_a_place_a_keepalive_kept_is_a_double_grant() {
    let mut r = Recorder::holding_two();
    r.keepalive((2_000, 2_010), kept(5_000));
    // Without the keepalive the session's hold of `a` would have ended at 3 s.
    r.acquire(
        "a",
        "other",
        (3_500, 3_510),
        Outcome::Granted(Lease {
            resource: "a".to_owned(),
            owner: "other".to_owned(),
            token: 3,
            acquired_at: 3_500 * MS,
            expires_at: 6_500 * MS,
        }),
    );
    let report = r.check();
    assert_eq!(not_linearizable(&report), vec!["a".to_owned()]);
}

#[test]
fn a_keepalive_left_unanswered_may_have_kept_the_holds() {
    let mut r = Recorder::holding_two();
    r.keepalive(
        (2_000, 2_010),
        Outcome::Unknown {
            why: "timeout".to_owned(),
        },
    );
    let a = r.lease("a", 1, 20, 5_000);
    r.status("a", (4_000, 4_010), Some(a));
    let report = r.check();
    assert_eq!(kinds(&report), vec![]);
    assert_eq!(not_linearizable(&report), Vec::<String>::new());
}

#[test]
fn an_ended_sessions_release_finds_nothing_whoever_holds_the_place() {
    let mut r = Recorder::holding_two();
    let other = Lease {
        resource: "a".to_owned(),
        owner: "other".to_owned(),
        token: 3,
        acquired_at: 3_500 * MS,
        expires_at: 6_500 * MS,
    };
    // The session ran out at 3 s; another owner holds `a`.
    r.acquire(
        "a",
        "other",
        (3_500, 3_510),
        Outcome::Granted(other.clone()),
    );
    let release = OpKind::Release {
        owner: r.session.clone(),
    };
    r.op("a", release.clone(), (4_000, 4_010), Outcome::NotFound);
    // The other owner's lease was not ended by that 404.
    r.status("a", (4_100, 4_110), Some(other));
    let report = r.check();
    assert_eq!(kinds(&report), vec![]);
    assert_eq!(not_linearizable(&report), Vec::<String>::new());

    // But while the session's own hold is surely live, a 404 has no explanation.
    let mut r = Recorder::holding_two();
    r.op("b", release, (1_000, 1_010), Outcome::NotFound);
    assert_eq!(not_linearizable(&r.check()), vec!["b".to_owned()]);
}
