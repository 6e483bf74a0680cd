//! The shared-lock checks must be able to fail: hand-made histories with a writer beside a
//! reader or beside another writer, a token reused or going backwards, a status showing a writer
//! among readers, a released or expired lease seen again and a status missing a held lease are
//! each caught; many readers at once, readers after a writer's release or expiry, re-grants and
//! unknown outcomes pass.

use super::{check, run, Finding, Kind};
use crate::shared::{json, report, Holder, Mode, SharedHistory, SharedOp, SharedOpKind};
use crate::shared::{Mode::Exclusive, Mode::Shared, SharedOutcome};

const MS: i64 = 1_000;
const R: &str = "rw0";

struct Recorder {
    history: SharedHistory,
}

impl Recorder {
    fn new() -> Self {
        let mut history = SharedHistory::new(0, 42);
        history.resources = vec![R.to_owned()];
        history.horizon_us = 2_000 * MS;
        Self { history }
    }

    fn op(
        &mut self,
        kind: SharedOpKind,
        from_ms: i64,
        to_ms: i64,
        outcome: SharedOutcome,
    ) -> usize {
        let client = kind.owner().map_or(99, |o| o.bytes().map(u32::from).sum());
        self.history.push(SharedOp {
            id: 0,
            client,
            resource: R.to_owned(),
            kind,
            invoke: from_ms * MS,
            complete: to_ms * MS,
            outcome,
        })
    }

    fn acquire(
        &mut self,
        owner: &str,
        mode: Mode,
        from: i64,
        to: i64,
        outcome: SharedOutcome,
    ) -> usize {
        let kind = SharedOpKind::Acquire {
            owner: owner.to_owned(),
            ttl_seconds: 2,
            wait_seconds: 0,
            mode,
        };
        self.op(kind, from, to, outcome)
    }

    fn renew(&mut self, owner: &str, from: i64, to: i64, outcome: SharedOutcome) -> usize {
        let kind = SharedOpKind::Renew {
            owner: owner.to_owned(),
            ttl_seconds: 2,
        };
        self.op(kind, from, to, outcome)
    }

    fn release(&mut self, owner: &str, from: i64, to: i64, outcome: SharedOutcome) -> usize {
        let kind = SharedOpKind::Release {
            owner: owner.to_owned(),
        };
        self.op(kind, from, to, outcome)
    }

    fn status(&mut self, from: i64, to: i64, holders: Vec<Holder>) -> usize {
        self.op(SharedOpKind::Status, from, to, SharedOutcome::Seen(holders))
    }

    fn check(&self) -> Vec<Finding> {
        run(&self.history)
    }
}

/// A lease of `owner` on R made at `acquired_ms`, ending at `expires_ms`.
fn lease(owner: &str, token: i64, mode: Mode, acquired_ms: i64, expires_ms: i64) -> Holder {
    Holder {
        resource: R.to_owned(),
        owner: owner.to_owned(),
        token,
        mode,
        acquired_at: acquired_ms * MS,
        expires_at: expires_ms * MS,
    }
}

/// Granted at `at_ms` for 2 s.
fn granted(owner: &str, token: i64, mode: Mode, at_ms: i64) -> SharedOutcome {
    SharedOutcome::Granted(lease(owner, token, mode, at_ms, at_ms + 2_000))
}

fn renewed(owner: &str, token: i64, mode: Mode, acquired_ms: i64, at_ms: i64) -> SharedOutcome {
    SharedOutcome::Renewed(lease(owner, token, mode, acquired_ms, at_ms + 2_000))
}

fn unknown() -> SharedOutcome {
    SharedOutcome::Unknown {
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
        report::render(&recorder.history, &findings)
    );
}

/// Readers a..=e, each granted within 50 ms and held for 2 s, renewed, and seen together.
fn many_readers() -> Recorder {
    let mut r = Recorder::new();
    let owners = ["a", "b", "c", "d", "e"];
    for (i, owner) in owners.iter().enumerate() {
        let at = 10 * i as i64;
        r.acquire(
            owner,
            Shared,
            at,
            at + 5,
            granted(owner, i as i64 + 1, Shared, at),
        );
    }
    r.status(
        100,
        110,
        owners
            .iter()
            .enumerate()
            .map(|(i, o)| {
                lease(
                    o,
                    i as i64 + 1,
                    Shared,
                    10 * i as i64,
                    10 * i as i64 + 2_000,
                )
            })
            .collect(),
    );
    r.renew("a", 500, 510, renewed("a", 1, Shared, 0, 505));
    r
}

#[test]
fn many_readers_at_once_pass() {
    let r = many_readers();
    assert_passes(&r);
    let report = check(&r.history);
    assert_eq!(report.readers, vec![(R.to_owned(), 5)]);
}

#[test]
fn a_writer_beside_a_reader_is_caught() {
    let mut r = many_readers();
    r.acquire("w", Exclusive, 600, 610, granted("w", 9, Exclusive, 605));
    let findings = r.check();
    assert!(
        findings.iter().all(|f| f.kind == Kind::WriterBesideHolder),
        "{findings:?}"
    );
    // One finding for each reader still surely held (a's renewal counts as a's lease, once).
    assert_eq!(findings.len(), 5, "{findings:?}");
    assert!(
        findings[0].message.contains("w exclusive (token 9)"),
        "{}",
        findings[0].message
    );
    let text = report::render(&r.history, &findings);
    assert!(text.contains("seed 42") && text.contains("* #7"), "{text}");
}

#[test]
fn a_writer_beside_a_writer_is_caught() {
    let mut r = Recorder::new();
    r.acquire("v", Exclusive, 0, 5, granted("v", 1, Exclusive, 0));
    r.acquire("w", Exclusive, 100, 110, granted("w", 2, Exclusive, 105));
    assert_eq!(kinds(&r.check()), vec![Kind::WriterBesideHolder]);
}

#[test]
fn a_reader_granted_beside_a_writer_is_caught() {
    let mut r = Recorder::new();
    r.acquire("w", Exclusive, 0, 5, granted("w", 1, Exclusive, 0));
    r.acquire("a", Shared, 100, 110, granted("a", 2, Shared, 105));
    assert_eq!(kinds(&r.check()), vec![Kind::WriterBesideHolder]);
}

#[test]
fn a_writer_after_the_readers_release_or_expiry_passes() {
    // Two readers; one releases, the other expires; then a writer, then readers again after the
    // writer's release.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.acquire("b", Shared, 10, 15, granted("b", 2, Shared, 10));
    r.release("a", 100, 110, SharedOutcome::Released);
    r.acquire(
        "w",
        Exclusive,
        2_100,
        2_110,
        granted("w", 3, Exclusive, 2_105),
    );
    r.status(2_200, 2_210, vec![lease("w", 3, Exclusive, 2_105, 4_105)]);
    r.release("w", 2_300, 2_310, SharedOutcome::Released);
    r.acquire("a", Shared, 2_400, 2_410, granted("a", 4, Shared, 2_405));
    r.acquire("b", Shared, 2_420, 2_430, granted("b", 5, Shared, 2_425));
    assert_passes(&r);
}

#[test]
fn an_unknown_release_ends_the_hold_at_its_invoke() {
    // a's release timed out: it may have ended a's lease at once, so w's grant is no proof.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.release("a", 100, 300, unknown());
    r.acquire("w", Exclusive, 150, 160, granted("w", 2, Exclusive, 155));
    assert_passes(&r);
    // A renew answered 422 changed nothing: a's hold goes on, and a writer beside it is caught.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.renew("a", 100, 110, SharedOutcome::Failed { status: 422 });
    r.acquire("w", Exclusive, 150, 160, granted("w", 2, Exclusive, 155));
    assert_eq!(kinds(&r.check()), vec![Kind::WriterBesideHolder]);
}

#[test]
fn a_reused_token_is_caught() {
    // Two readers with one token.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 7, Shared, 0));
    r.acquire("b", Shared, 10, 15, granted("b", 7, Shared, 10));
    let found = kinds(&r.check());
    assert!(found.contains(&Kind::TokenReused), "{found:?}");
    // One owner's token in two modes: a re-grant keeps a token only in the same mode.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 7, Shared, 0));
    r.release("a", 10, 15, SharedOutcome::Released);
    r.acquire("a", Exclusive, 20, 25, granted("a", 7, Exclusive, 20));
    let found = kinds(&r.check());
    assert!(found.contains(&Kind::TokenReused), "{found:?}");
}

#[test]
fn a_token_going_backwards_is_caught() {
    // A writer's token smaller than a reader's granted before it was asked.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 7, Shared, 0));
    r.release("a", 10, 15, SharedOutcome::Released);
    r.acquire("w", Exclusive, 20, 25, granted("w", 6, Exclusive, 20));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
    // A reader's token smaller than another reader's shown by a status before.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 7, Shared, 0));
    r.status(10, 15, vec![lease("a", 7, Shared, 0, 2_000)]);
    r.acquire("b", Shared, 20, 25, granted("b", 5, Shared, 20));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
}

#[test]
fn concurrent_grants_and_regrants_keep_their_tokens() {
    // Concurrent grants may draw their tokens in either order; a re-grant keeps its token.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 50, granted("a", 7, Shared, 40));
    r.acquire("b", Shared, 10, 20, granted("b", 6, Shared, 15));
    r.acquire("c", Shared, 60, 70, granted("c", 8, Shared, 65));
    r.acquire("b", Shared, 100, 110, granted("b", 6, Shared, 105));
    assert_passes(&r);
    // A re-grant of a grant that a timed-out acquire made unseen, still live then.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 300, unknown());
    r.acquire("b", Shared, 100, 105, granted("b", 2, Shared, 100));
    r.acquire("a", Shared, 400, 405, granted("a", 1, Shared, 400));
    assert_passes(&r);
    // Once that unseen grant has surely expired (its latest effect, 2.3 s, plus its TTL, 2 s),
    // a grant with token 1 is new, and a regression.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 300, unknown());
    r.acquire("b", Shared, 100, 105, granted("b", 2, Shared, 100));
    r.acquire("a", Shared, 4_400, 4_405, granted("a", 1, Shared, 4_400));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
    // So is a re-grant in the other mode: the unseen grant was shared.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 300, unknown());
    r.acquire("b", Shared, 100, 105, granted("b", 2, Shared, 100));
    r.release("b", 200, 205, SharedOutcome::Released);
    r.acquire("a", Exclusive, 400, 405, granted("a", 1, Exclusive, 400));
    assert_eq!(kinds(&r.check()), vec![Kind::TokenRegression]);
}

#[test]
fn a_status_with_a_writer_among_readers_is_caught() {
    let mut r = Recorder::new();
    r.status(
        0,
        10,
        vec![
            lease("a", 1, Shared, 0, 2_000),
            lease("w", 2, Exclusive, 0, 2_000),
        ],
    );
    assert_eq!(kinds(&r.check()), vec![Kind::ImpossibleRead]);
    let mut r = Recorder::new();
    r.status(
        0,
        10,
        vec![
            lease("a", 1, Shared, 0, 2_000),
            lease("a", 2, Shared, 0, 2_000),
        ],
    );
    assert_eq!(kinds(&r.check()), vec![Kind::ImpossibleRead]);
}

#[test]
fn a_released_lease_seen_again_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.acquire("b", Shared, 10, 15, granted("b", 2, Shared, 10));
    r.release("a", 100, 110, SharedOutcome::Released);
    r.status(
        200,
        210,
        vec![
            lease("a", 1, Shared, 0, 2_000),
            lease("b", 2, Shared, 10, 2_010),
        ],
    );
    let findings = r.check();
    assert_eq!(kinds(&findings), vec![Kind::Revived], "{findings:?}");
    assert_eq!(findings[0].ops, vec![0, 2, 3]);
    // A reader shown after a writer's grant proved it over.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.release("a", 100, 300, unknown());
    r.acquire("w", Exclusive, 150, 160, granted("w", 2, Exclusive, 155));
    r.renew("a", 400, 410, renewed("a", 1, Shared, 0, 405));
    let found = kinds(&r.check());
    assert!(found.contains(&Kind::Revived), "{found:?}");
    // While the release is unanswered, a status may still show the lease.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.release("a", 100, 300, unknown());
    r.status(200, 210, vec![lease("a", 1, Shared, 0, 2_000)]);
    assert_passes(&r);
}

#[test]
fn an_expired_lease_seen_again_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.status(2_100, 2_110, vec![lease("a", 1, Shared, 0, 2_000)]);
    assert_eq!(kinds(&r.check()), vec![Kind::SeenAfterExpiry]);
    // Renewed in time: fine. A renew left unknown may have extended it: no proof either.
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.renew("a", 1_900, 1_910, renewed("a", 1, Shared, 0, 1_905));
    r.renew("a", 3_800, 4_500, unknown());
    r.status(4_600, 4_610, vec![lease("a", 1, Shared, 0, 6_500)]);
    assert_passes(&r);
}

#[test]
fn a_status_missing_a_held_reader_is_caught() {
    let mut r = Recorder::new();
    r.acquire("a", Shared, 0, 5, granted("a", 1, Shared, 0));
    r.acquire("b", Shared, 10, 15, granted("b", 2, Shared, 10));
    r.status(100, 110, vec![lease("b", 2, Shared, 10, 2_010)]);
    let found = kinds(&r.check());
    assert!(found.contains(&Kind::LostAcknowledgement), "{found:?}");
}

#[test]
fn the_history_reads_back_as_written() {
    let mut r = many_readers();
    r.acquire("w", Exclusive, 600, 610, granted("w", 9, Exclusive, 605));
    r.acquire("a", Exclusive, 620, 630, SharedOutcome::ModeMismatch);
    r.acquire("x", Exclusive, 640, 650, SharedOutcome::Held);
    r.release("x", 660, 670, SharedOutcome::Forbidden);
    r.renew("y", 680, 690, SharedOutcome::NotFound);
    r.acquire("z", Shared, 700, 710, SharedOutcome::Failed { status: 429 });
    r.acquire("z", Shared, 720, 730, unknown());
    let text = json::write(&r.history);
    let read = json::read(&text).expect("reads back");
    assert_eq!(read.ops, r.history.ops);
    assert_eq!(read.resources, r.history.resources);
    assert_eq!(kinds(&run(&read)), kinds(&r.check()));
}
