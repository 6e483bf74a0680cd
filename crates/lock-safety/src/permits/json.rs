//! The semaphore history as JSON lines (a header, then one operation a line), so that a recorded
//! run can be checked again (`lock-safety --check`, with `permits.jsonl` beside the history).

use serde_json::{json, Value};

use super::{PermitHistory, PermitLease, PermitOp, PermitOpKind, PermitOutcome};
use crate::jsonl::{self, Run};

fn lease(l: &PermitLease) -> Value {
    json!([
        l.name,
        l.owner,
        l.token,
        l.permits,
        l.limit,
        l.acquired_at,
        l.expires_at
    ])
}

fn parse_lease(v: &Value) -> Option<PermitLease> {
    Some(PermitLease {
        name: jsonl::text(&v[0])?,
        owner: jsonl::text(&v[1])?,
        token: v[2].as_i64()?,
        permits: jsonl::number(&v[3])?,
        limit: jsonl::number(&v[4])?,
        acquired_at: v[5].as_i64()?,
        expires_at: v[6].as_i64()?,
    })
}

/// Writes the history.
pub fn write(history: &PermitHistory) -> String {
    let run = Run {
        start: history.start,
        seed: history.seed,
        horizon_us: history.horizon_us,
        margin_us: history.margin_us,
    };
    let header = run.header(Some(("names", &history.names)), Some(&history.lock_delays));
    jsonl::write(&header, history.ops.iter().map(op_line))
}

fn op_line(op: &PermitOp) -> Value {
    let kind = match &op.kind {
        PermitOpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
            permits,
            limit,
        } => json!(["acquire", owner, ttl_seconds, wait_seconds, permits, limit]),
        PermitOpKind::Release { owner } => json!(["release", owner]),
        PermitOpKind::Renew { owner, ttl_seconds } => json!(["renew", owner, ttl_seconds]),
        PermitOpKind::Status => json!(["status"]),
    };
    let outcome = match &op.outcome {
        PermitOutcome::Granted(l) => json!(["granted", lease(l)]),
        PermitOutcome::Unavailable => json!(["unavailable"]),
        PermitOutcome::Conflict { status } => json!(["conflict", status]),
        PermitOutcome::Released => json!(["released"]),
        PermitOutcome::Renewed(l) => json!(["renewed", lease(l)]),
        PermitOutcome::Seen(ls) => json!(["seen", ls.iter().map(lease).collect::<Vec<_>>()]),
        PermitOutcome::NotFound => json!(["not_found"]),
        PermitOutcome::Failed { status } => json!(["failed", status]),
        PermitOutcome::Unknown { why } => json!(["unknown", why]),
    };
    json!([op.client, op.name, kind, op.invoke, op.complete, outcome])
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<PermitHistory, String> {
    let header = |h: &Value| {
        let run = Run::read(h)?;
        let mut history = PermitHistory::new(run.start, run.seed);
        history.horizon_us = run.horizon_us;
        history.margin_us = run.margin_us;
        history.lock_delays = jsonl::lock_delays(&h["lock_delays_us"]);
        history.names = jsonl::names_of(&h["names"]);
        Some(history)
    };
    jsonl::read(text, "empty history", header, |history, v| {
        history.push(parse_op(v)?);
        Some(())
    })
}

fn parse_op(v: &Value) -> Option<PermitOp> {
    let k = &v[2];
    let owner = || jsonl::text(&k[1]);
    let number = |i: usize| jsonl::number(&k[i]);
    let kind = match k[0].as_str()? {
        "acquire" => PermitOpKind::Acquire {
            owner: owner()?,
            ttl_seconds: number(2)?,
            wait_seconds: number(3)?,
            permits: number(4)?,
            limit: number(5)?,
        },
        "release" => PermitOpKind::Release { owner: owner()? },
        "renew" => PermitOpKind::Renew {
            owner: owner()?,
            ttl_seconds: number(2)?,
        },
        "status" => PermitOpKind::Status,
        _ => return None,
    };
    let o = &v[5];
    let status = || jsonl::status(&o[1]);
    let outcome = match o[0].as_str()? {
        "granted" => PermitOutcome::Granted(parse_lease(&o[1])?),
        "unavailable" => PermitOutcome::Unavailable,
        "conflict" => PermitOutcome::Conflict { status: status()? },
        "released" => PermitOutcome::Released,
        "renewed" => PermitOutcome::Renewed(parse_lease(&o[1])?),
        "seen" => PermitOutcome::Seen(jsonl::list(&o[1], parse_lease)?),
        "not_found" => PermitOutcome::NotFound,
        "failed" => PermitOutcome::Failed { status: status()? },
        "unknown" => PermitOutcome::Unknown {
            why: jsonl::text(&o[1])?,
        },
        _ => return None,
    };
    Some(PermitOp {
        id: 0,
        client: jsonl::number(&v[0])?,
        name: jsonl::text(&v[1])?,
        kind,
        invoke: v[3].as_i64()?,
        complete: v[4].as_i64()?,
        outcome,
    })
}
