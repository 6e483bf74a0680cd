//! The shared-lock history as JSON lines (a header, then one operation a line), so that a
//! recorded run can be checked again (`lock-safety --check`, with `shared.jsonl` beside the
//! history).

use serde_json::{json, Value};

use super::{Holder, Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};
use crate::jsonl::{self, Run};

/// A holder's lease, as the shared-lock and the multi-lock histories spell it.
pub(crate) fn holder(h: &Holder) -> Value {
    json!([
        h.resource,
        h.owner,
        h.token,
        h.mode.as_str(),
        h.acquired_at,
        h.expires_at
    ])
}

/// Reads a holder's lease written by [`holder`].
pub(crate) fn parse_holder(v: &Value) -> Option<Holder> {
    Some(Holder {
        resource: jsonl::text(&v[0])?,
        owner: jsonl::text(&v[1])?,
        token: v[2].as_i64()?,
        mode: Mode::parse(v[3].as_str()?)?,
        acquired_at: v[4].as_i64()?,
        expires_at: v[5].as_i64()?,
    })
}

/// Writes the history.
pub fn write(history: &SharedHistory) -> String {
    let run = Run {
        start: history.start,
        seed: history.seed,
        horizon_us: history.horizon_us,
        margin_us: history.margin_us,
    };
    let header = run.header(Some(("resources", &history.resources)), None);
    jsonl::write(&header, history.ops.iter().map(op_line))
}

fn op_line(op: &SharedOp) -> Value {
    let kind = match &op.kind {
        SharedOpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
            mode,
        } => json!(["acquire", owner, ttl_seconds, wait_seconds, mode.as_str()]),
        SharedOpKind::Release { owner } => json!(["release", owner]),
        SharedOpKind::Renew { owner, ttl_seconds } => json!(["renew", owner, ttl_seconds]),
        SharedOpKind::Status => json!(["status"]),
    };
    let outcome = match &op.outcome {
        SharedOutcome::Granted(h) => json!(["granted", holder(h)]),
        SharedOutcome::Held => json!(["held"]),
        SharedOutcome::ModeMismatch => json!(["mode_mismatch"]),
        SharedOutcome::Released => json!(["released"]),
        SharedOutcome::Renewed(h) => json!(["renewed", holder(h)]),
        SharedOutcome::Seen(hs) => json!(["seen", hs.iter().map(holder).collect::<Vec<_>>()]),
        SharedOutcome::Forbidden => json!(["forbidden"]),
        SharedOutcome::NotFound => json!(["not_found"]),
        SharedOutcome::Failed { status } => json!(["failed", status]),
        SharedOutcome::Unknown { why } => json!(["unknown", why]),
    };
    json!([
        op.client,
        op.resource,
        kind,
        op.invoke,
        op.complete,
        outcome
    ])
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<SharedHistory, String> {
    let header = |h: &Value| {
        let run = Run::read(h)?;
        let mut history = SharedHistory::new(run.start, run.seed);
        history.horizon_us = run.horizon_us;
        history.margin_us = run.margin_us;
        history.resources = jsonl::names_of(&h["resources"]);
        Some(history)
    };
    jsonl::read(text, "empty history", header, |history, v| {
        history.push(parse_op(v)?);
        Some(())
    })
}

fn parse_op(v: &Value) -> Option<SharedOp> {
    let k = &v[2];
    let owner = || jsonl::text(&k[1]);
    let number = |i: usize| jsonl::number(&k[i]);
    let kind = match k[0].as_str()? {
        "acquire" => SharedOpKind::Acquire {
            owner: owner()?,
            ttl_seconds: number(2)?,
            wait_seconds: number(3)?,
            mode: Mode::parse(k[4].as_str()?)?,
        },
        "release" => SharedOpKind::Release { owner: owner()? },
        "renew" => SharedOpKind::Renew {
            owner: owner()?,
            ttl_seconds: number(2)?,
        },
        "status" => SharedOpKind::Status,
        _ => return None,
    };
    let o = &v[5];
    let outcome = match o[0].as_str()? {
        "granted" => SharedOutcome::Granted(parse_holder(&o[1])?),
        "held" => SharedOutcome::Held,
        "mode_mismatch" => SharedOutcome::ModeMismatch,
        "released" => SharedOutcome::Released,
        "renewed" => SharedOutcome::Renewed(parse_holder(&o[1])?),
        "seen" => SharedOutcome::Seen(jsonl::list(&o[1], parse_holder)?),
        "forbidden" => SharedOutcome::Forbidden,
        "not_found" => SharedOutcome::NotFound,
        "failed" => SharedOutcome::Failed {
            status: jsonl::status(&o[1])?,
        },
        "unknown" => SharedOutcome::Unknown {
            why: jsonl::text(&o[1])?,
        },
        _ => return None,
    };
    Some(SharedOp {
        id: 0,
        client: jsonl::number(&v[0])?,
        resource: jsonl::text(&v[1])?,
        kind,
        invoke: v[3].as_i64()?,
        complete: v[4].as_i64()?,
        outcome,
    })
}
