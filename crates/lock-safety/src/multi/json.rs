//! The multi-lock history as JSON lines (a header, then one operation a line), so that a recorded
//! run can be checked again (`lock-safety --check`, with `multi.jsonl` beside the history).

use serde_json::{json, Value};

use super::{MultiHistory, MultiOp, MultiOpKind, MultiOutcome, Released};
use crate::jsonl::{self, Run};
use crate::shared::json::{holder, parse_holder};
use crate::shared::Mode;

/// Writes the history.
pub fn write(history: &MultiHistory) -> String {
    let run = Run {
        start: history.start,
        seed: history.seed,
        horizon_us: history.horizon_us,
        margin_us: history.margin_us,
    };
    jsonl::write(&run.header(None, None), history.ops.iter().map(op_line))
}

fn op_line(op: &MultiOp) -> Value {
    let kind = match &op.kind {
        MultiOpKind::AcquireAll {
            owner,
            ttl_seconds,
            wait_seconds,
            locks,
        } => {
            let locks: Vec<Value> = locks.iter().map(|(r, m)| json!([r, m.as_str()])).collect();
            json!(["acquire_all", owner, ttl_seconds, wait_seconds, locks])
        }
        MultiOpKind::ReleaseAll { owner, resources } => {
            json!(["release_all", owner, resources])
        }
    };
    let outcome = match &op.outcome {
        MultiOutcome::Granted(hs) => {
            json!(["granted", hs.iter().map(holder).collect::<Vec<_>>()])
        }
        MultiOutcome::Unavailable(names) => json!(["unavailable", names]),
        MultiOutcome::Results(results) => {
            let results: Vec<Value> = results
                .iter()
                .map(|(r, what)| json!([r, what.as_str()]))
                .collect();
            json!(["results", results])
        }
        MultiOutcome::Failed { status } => json!(["failed", status]),
        MultiOutcome::Unknown { why } => json!(["unknown", why]),
    };
    json!([op.client, kind, op.invoke, op.complete, outcome])
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<MultiHistory, String> {
    let header = |h: &Value| {
        let run = Run::read(h)?;
        let mut history = MultiHistory::new(run.start, run.seed);
        history.horizon_us = run.horizon_us;
        history.margin_us = run.margin_us;
        Some(history)
    };
    jsonl::read(text, "empty history", header, |history, v| {
        history.push(parse_op(v)?);
        Some(())
    })
}

fn parse_op(v: &Value) -> Option<MultiOp> {
    let k = &v[1];
    let owner = jsonl::text(&k[1])?;
    let strings = |v: &Value| jsonl::list(v, jsonl::text);
    let kind = match k[0].as_str()? {
        "acquire_all" => MultiOpKind::AcquireAll {
            owner,
            ttl_seconds: jsonl::number(&k[2])?,
            wait_seconds: jsonl::number(&k[3])?,
            locks: jsonl::list(&k[4], |l| {
                Some((jsonl::text(&l[0])?, Mode::parse(l[1].as_str()?)?))
            })?,
        },
        "release_all" => MultiOpKind::ReleaseAll {
            owner,
            resources: strings(&k[2])?,
        },
        _ => return None,
    };
    let o = &v[4];
    let outcome = match o[0].as_str()? {
        "granted" => MultiOutcome::Granted(jsonl::list(&o[1], parse_holder)?),
        "unavailable" => MultiOutcome::Unavailable(strings(&o[1])?),
        "results" => MultiOutcome::Results(jsonl::list(&o[1], |r| {
            Some((jsonl::text(&r[0])?, Released::parse(r[1].as_str()?)?))
        })?),
        "failed" => MultiOutcome::Failed {
            status: jsonl::status(&o[1])?,
        },
        "unknown" => MultiOutcome::Unknown {
            why: jsonl::text(&o[1])?,
        },
        _ => return None,
    };
    Some(MultiOp {
        id: 0,
        client: jsonl::number(&v[0])?,
        kind,
        invoke: v[2].as_i64()?,
        complete: v[3].as_i64()?,
        outcome,
    })
}
