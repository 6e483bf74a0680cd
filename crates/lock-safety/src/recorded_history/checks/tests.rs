//! The recorded-history checks must be able to fail: hand-made records with a token that goes
//! back, two leases at once, a renewal of a released lease, an expiry before the lease's end, an
//! acknowledged grant or release with no record, a force-release whose records differ from its
//! answer, records no request explains, pages out of order and a reader's record are each caught;
//! a run with grants, renewals, a takeover, re-grants (two in one millisecond), force-releases
//! (answered, 404 and unanswered), an undone grant and a last lease with no expiry yet passes.

use super::{check, Finding, Kind};
use crate::history::{EndedLease, History, Lease, Op, OpKind, Outcome};
use crate::recorded_history::{json, report, Event, NameHistory, Record, RecordedHistory};

const MS: i64 = 1_000;
const R: &str = "r";

struct Run {
    history: History,
    /// Oldest first.
    records: Vec<Record>,
}

impl Run {
    fn new() -> Self {
        let mut history = History::new(0, 42);
        history.resources = vec![R.to_owned()];
        history.horizon_us = 2_000 * MS;
        Self {
            history,
            records: Vec::new(),
        }
    }

    fn op(&mut self, kind: OpKind, from_ms: i64, to_ms: i64, outcome: Outcome) -> usize {
        self.history.push(Op {
            id: 0,
            client: 1,
            resource: R.to_owned(),
            kind,
            invoke: from_ms * MS,
            complete: to_ms * MS,
            outcome,
        })
    }

    fn acquire(&mut self, owner: &str, from_ms: i64, to_ms: i64, outcome: Outcome) -> usize {
        let kind = OpKind::Acquire {
            owner: owner.to_owned(),
            ttl_seconds: 3,
            wait_seconds: 0,
        };
        self.op(kind, from_ms, to_ms, outcome)
    }

    fn release(&mut self, owner: &str, from_ms: i64, to_ms: i64, outcome: Outcome) -> usize {
        let kind = OpKind::Release {
            owner: owner.to_owned(),
        };
        self.op(kind, from_ms, to_ms, outcome)
    }

    fn force(&mut self, reason: &str, from_ms: i64, to_ms: i64, outcome: Outcome) -> usize {
        let kind = OpKind::ForceRelease {
            reason: reason.to_owned(),
        };
        self.op(kind, from_ms, to_ms, outcome)
    }

    fn record(&mut self, event: Event, owner: &str, token: i64, at_ms: i64) -> i64 {
        let id = 10 * (self.records.len() as i64 + 1);
        self.records.push(Record {
            id,
            kind: "lock".to_owned(),
            name: R.to_owned(),
            owner: owner.to_owned(),
            token,
            event,
            at: at_ms * MS,
            reason: None,
            shared: false,
        });
        id
    }

    fn forced(&mut self, owner: &str, token: i64, at_ms: i64, reason: &str) -> i64 {
        let id = self.record(Event::ForceReleased, owner, token, at_ms);
        self.records.last_mut().expect("just pushed").reason = Some(reason.to_owned());
        id
    }

    /// The records as lockd answers them: newest first.
    fn recorded(&self) -> RecordedHistory {
        let mut records = self.records.clone();
        records.reverse();
        let mut recorded = RecordedHistory::default();
        recorded.names.insert(
            R.to_owned(),
            NameHistory {
                kind: "lock".to_owned(),
                records,
            },
        );
        recorded
    }

    fn findings(&self) -> Vec<Finding> {
        check(&self.history, &self.recorded())
    }

    fn kinds(&self) -> Vec<Kind> {
        let mut kinds: Vec<Kind> = self.findings().iter().map(|f| f.kind).collect();
        kinds.dedup();
        kinds
    }

    fn render(&self) -> String {
        report::render(&self.history, &self.recorded(), &self.findings())
    }
}

/// A lease of `owner` acquired at `acquired_ms` for `ttl_ms`.
fn lease(owner: &str, token: i64, acquired_ms: i64, ttl_ms: i64) -> Lease {
    Lease {
        resource: R.to_owned(),
        owner: owner.to_owned(),
        token,
        acquired_at: acquired_ms * MS,
        expires_at: (acquired_ms + ttl_ms) * MS,
    }
}

fn granted(owner: &str, token: i64, acquired_ms: i64, ttl_ms: i64) -> Outcome {
    Outcome::Granted(lease(owner, token, acquired_ms, ttl_ms))
}

fn ended(owner: &str, token: i64) -> Outcome {
    Outcome::ForceReleased(vec![EndedLease {
        owner: owner.to_owned(),
        token,
    }])
}

fn unknown() -> Outcome {
    Outcome::Unknown {
        why: "timeout".to_owned(),
    }
}

/// A valid run: every rule has something to judge, and nothing to find.
fn valid() -> Run {
    let mut run = Run::new();
    // a: granted, renewed, released.
    run.acquire("a", 0, 10, granted("a", 1, 5, 3_000));
    run.record(Event::Granted, "a", 1, 5);
    let renew = OpKind::Renew {
        owner: "a".to_owned(),
        ttl_seconds: 3,
    };
    run.op(
        renew,
        1_000,
        1_010,
        Outcome::Renewed(lease("a", 1, 5, 4_000)),
    );
    run.record(Event::Renewed, "a", 1, 1_005);
    run.release("a", 2_000, 2_010, Outcome::Released);
    run.record(Event::Released, "a", 1, 2_005);
    // b's lease runs out and c takes over: the expiry is recorded at the takeover.
    run.acquire("b", 2_100, 2_110, granted("b", 2, 2_105, 1_000));
    run.record(Event::Granted, "b", 2, 2_105);
    run.acquire("c", 3_000, 4_200, granted("c", 3, 4_150, 3_000));
    run.record(Event::Expired, "b", 2, 4_150);
    run.record(Event::Granted, "c", 3, 4_150);
    // Two re-grants by c in one millisecond: the second changes nothing, and has no record.
    run.acquire("c", 4_300, 4_310, granted("c", 3, 4_305, 3_000));
    run.acquire("c", 4_300, 4_312, granted("c", 3, 4_305, 3_000));
    run.record(Event::Regranted, "c", 3, 4_305);
    // An admin force-releases c; then finds nothing.
    run.force("f1", 5_000, 5_010, ended("c", 3));
    run.forced("c", 3, 5_005, "f1");
    run.force("f2", 5_100, 5_110, Outcome::NotFound);
    // d's acquire went unanswered: granted, then undone by lockd.
    run.acquire("d", 6_000, 6_010, unknown());
    run.record(Event::Granted, "d", 4, 6_005);
    run.record(Event::Undone, "d", 4, 6_500);
    // e's acquire and a force-release both unanswered, both took effect.
    run.acquire("e", 7_000, 7_010, unknown());
    run.record(Event::Granted, "e", 5, 7_005);
    run.force("f3", 7_100, 7_110, unknown());
    run.forced("e", 5, 7_105, "f3");
    // Another unanswered force-release made nothing; f's lease is the last, not expired yet.
    run.force("f4", 7_200, 7_210, unknown());
    run.acquire("f", 8_000, 8_010, granted("f", 6, 8_005, 3_000));
    run.record(Event::Granted, "f", 6, 8_005);
    run.op(
        OpKind::Status,
        8_100,
        8_110,
        Outcome::Seen(Some(lease("f", 6, 8_005, 3_000))),
    );
    run
}

#[test]
fn a_valid_run_passes() {
    let run = valid();
    assert!(run.findings().is_empty(), "{}", run.render());
}

#[test]
fn a_granted_token_not_larger_is_caught() {
    let mut run = valid();
    run.acquire("g", 9_000, 9_010, unknown());
    run.record(Event::Expired, "f", 6, 11_005);
    run.record(Event::Granted, "g", 6, 11_005);
    assert_eq!(run.kinds(), vec![Kind::TokenOrder], "{}", run.render());
}

#[test]
fn a_grant_while_the_lease_before_has_no_end_is_caught() {
    let mut run = valid();
    run.acquire("g", 9_000, 9_010, granted("g", 7, 9_005, 3_000));
    run.record(Event::Granted, "g", 7, 9_005);
    assert_eq!(run.kinds(), vec![Kind::Overlap], "{}", run.render());
    assert!(run.render().contains("seed 42"), "{}", run.render());
}

#[test]
fn a_record_of_an_ended_lease_is_caught() {
    let mut run = valid();
    // c was force-released at 5 s; a renewal of it after that is no change of a live lease.
    let at = run
        .records
        .iter()
        .position(|r| r.event == Event::ForceReleased);
    let renewed = Record {
        event: Event::Renewed,
        reason: None,
        ..run.records[at.expect("f1's record")].clone()
    };
    run.records.insert(at.expect("f1's record") + 1, renewed);
    for (i, r) in run.records.iter_mut().enumerate() {
        r.id = 10 * (i as i64 + 1);
    }
    // The renewal's answer, so that only the lease's life is wrong.
    let renew = OpKind::Renew {
        owner: "c".to_owned(),
        ttl_seconds: 3,
    };
    run.op(renew, 5_050, 5_060, unknown());
    assert_eq!(run.kinds(), vec![Kind::NotLive], "{}", run.render());
}

#[test]
fn an_expiry_recorded_before_the_lease_ended_is_caught() {
    let mut run = Run::new();
    run.acquire("a", 0, 10, granted("a", 1, 5, 3_000));
    run.record(Event::Granted, "a", 1, 5);
    run.acquire("b", 1_000, 1_010, granted("b", 2, 1_005, 3_000));
    run.record(Event::Expired, "a", 1, 1_005);
    run.record(Event::Granted, "b", 2, 1_005);
    assert_eq!(run.kinds(), vec![Kind::EarlyExpiry], "{}", run.render());
    // A re-grant may have shortened it: then the end is not known, and nothing is claimed.
    let mut run = Run::new();
    run.acquire("a", 0, 10, granted("a", 1, 5, 3_000));
    run.record(Event::Granted, "a", 1, 5);
    run.acquire("a", 20, 30, unknown());
    run.record(Event::Regranted, "a", 1, 25);
    run.acquire("b", 1_100, 1_110, granted("b", 2, 1_105, 3_000));
    run.record(Event::Expired, "a", 1, 1_105);
    run.record(Event::Granted, "b", 2, 1_105);
    assert!(run.findings().is_empty(), "{}", run.render());
}

#[test]
fn an_acknowledged_change_without_its_record_is_caught() {
    // A grant answered, no record of it.
    let mut run = valid();
    run.records.pop();
    assert_eq!(run.kinds(), vec![Kind::Unrecorded], "{}", run.render());
    // A release answered 204, recorded as nothing.
    let mut run = valid();
    run.records.retain(|r| r.event != Event::Released);
    assert!(run.kinds().contains(&Kind::Unrecorded), "{}", run.render());
    // Two re-grants in different milliseconds, one record.
    let mut run = valid();
    run.acquire("f", 8_200, 8_210, granted("f", 6, 8_205, 3_000));
    run.acquire("f", 8_300, 8_310, granted("f", 6, 8_305, 3_000));
    run.record(Event::Regranted, "f", 6, 8_305);
    assert_eq!(run.kinds(), vec![Kind::Unrecorded], "{}", run.render());
}

#[test]
fn a_force_release_recorded_otherwise_than_answered_is_caught() {
    // Answered 200 ending c's lease; recorded with another token.
    let mut run = valid();
    for r in &mut run.records {
        if r.reason.as_deref() == Some("f1") {
            r.token = 2;
        }
    }
    assert!(
        run.kinds().contains(&Kind::ForceMismatch),
        "{}",
        run.render()
    );
    // Answered 404, yet a record carries its reason.
    let mut run = valid();
    for r in &mut run.records {
        if r.reason.as_deref() == Some("f1") {
            r.reason = Some("f2".to_owned());
        }
    }
    assert!(
        run.kinds().contains(&Kind::ForceMismatch),
        "{}",
        run.render()
    );
    // A reason nobody sent.
    let mut run = valid();
    run.force("f5", 9_000, 9_010, unknown());
    run.record(Event::Expired, "f", 6, 11_005);
    run.acquire("g", 11_000, 11_010, granted("g", 7, 11_005, 3_000));
    run.record(Event::Granted, "g", 7, 11_005);
    run.forced("g", 7, 11_500, "nobody's");
    assert_eq!(run.kinds(), vec![Kind::ForceMismatch], "{}", run.render());
}

#[test]
fn records_no_request_explains_are_caught() {
    // A grant to an owner whose only acquire was answered "held".
    let mut run = valid();
    run.record(Event::Released, "f", 6, 9_000);
    run.release("f", 8_900, 9_010, Outcome::Released);
    run.acquire("g", 9_100, 9_110, Outcome::Held);
    run.record(Event::Granted, "g", 7, 9_105);
    assert_eq!(run.kinds(), vec![Kind::Unexplained], "{}", run.render());
    // A release nobody asked for (f's own release answered 404).
    let mut run = valid();
    run.release("f", 8_900, 9_010, Outcome::NotFound);
    run.record(Event::Released, "f", 6, 9_000);
    assert_eq!(run.kinds(), vec![Kind::Unexplained], "{}", run.render());
    // An undo of a grant its owner heard of.
    let mut run = valid();
    run.record(Event::Undone, "f", 6, 9_000);
    assert_eq!(run.kinds(), vec![Kind::Unexplained], "{}", run.render());
    // More grants (and undos) of d than its one acquire left unknown can have made.
    let mut run = valid();
    run.release("f", 8_900, 9_010, Outcome::Released);
    run.record(Event::Released, "f", 6, 9_000);
    run.record(Event::Granted, "d", 7, 9_100);
    run.record(Event::Undone, "d", 7, 9_600);
    assert_eq!(run.kinds(), vec![Kind::Unexplained], "{}", run.render());
}

#[test]
fn pages_out_of_order_and_foreign_records_are_caught() {
    let run = valid();
    let mut recorded = run.recorded();
    let records = &mut recorded.names.get_mut(R).expect("r").records;
    records.swap(0, 1);
    let kinds: Vec<Kind> = check(&run.history, &recorded)
        .iter()
        .map(|f| f.kind)
        .collect();
    assert_eq!(kinds, vec![Kind::OutOfOrder]);
    let mut run = valid();
    run.records[0].shared = true;
    assert_eq!(run.kinds(), vec![Kind::Foreign], "{}", run.render());
}

#[test]
fn the_records_read_back() {
    let run = valid();
    let mut recorded = run.recorded();
    recorded
        .unread
        .insert("other".to_owned(), "503: database unavailable".to_owned());
    assert_eq!(json::read(&json::write(&recorded)), Ok(recorded));
}
