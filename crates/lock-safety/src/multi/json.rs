//! The multi-lock history as JSON lines (a header, then one operation a line), so that a recorded
//! run can be checked again (`lock-safety --check`, with `multi.jsonl` beside the history).

use serde_json::{json, Value};

use super::{MultiHistory, MultiOp, MultiOpKind, MultiOutcome, Released};
use crate::shared::{Holder, Mode};

fn holder(h: &Holder) -> Value {
    json!([
        h.resource,
        h.owner,
        h.token,
        h.mode.as_str(),
        h.acquired_at,
        h.expires_at
    ])
}

fn parse_holder(v: &Value) -> Option<Holder> {
    Some(Holder {
        resource: v[0].as_str()?.to_owned(),
        owner: v[1].as_str()?.to_owned(),
        token: v[2].as_i64()?,
        mode: Mode::parse(v[3].as_str()?)?,
        acquired_at: v[4].as_i64()?,
        expires_at: v[5].as_i64()?,
    })
}

/// Writes the history.
pub fn write(history: &MultiHistory) -> String {
    let mut out = json!({
        "start": history.start, "horizon_us": history.horizon_us,
        "margin_us": history.margin_us, "seed": history.seed,
    })
    .to_string();
    out.push('\n');
    for op in &history.ops {
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
        out.push_str(&json!([op.client, kind, op.invoke, op.complete, outcome]).to_string());
        out.push('\n');
    }
    out
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<MultiHistory, String> {
    let mut lines = text.lines().enumerate();
    let bad = |n: usize, line: &str| format!("line {}: {line}", n + 1);
    let (n, header) = lines.next().ok_or("empty history")?;
    let h: Value = serde_json::from_str(header).map_err(|_| bad(n, header))?;
    let mut history = MultiHistory::new(h["start"].as_i64().ok_or_else(|| bad(n, header))?, 0);
    history.seed = h["seed"].as_u64().unwrap_or(0);
    history.horizon_us = h["horizon_us"].as_i64().unwrap_or(history.horizon_us);
    history.margin_us = h["margin_us"].as_i64().unwrap_or(history.margin_us);
    for (n, line) in lines {
        let op = parse_op(line).ok_or_else(|| bad(n, line))?;
        history.push(op);
    }
    Ok(history)
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn parse_op(line: &str) -> Option<MultiOp> {
    let v: Value = serde_json::from_str(line).ok()?;
    let k = &v[1];
    let owner = k[1].as_str()?.to_owned();
    let number = |i: usize| k[i].as_u64().and_then(|n| u32::try_from(n).ok());
    let kind = match k[0].as_str()? {
        "acquire_all" => MultiOpKind::AcquireAll {
            owner,
            ttl_seconds: number(2)?,
            wait_seconds: number(3)?,
            locks: k[4]
                .as_array()?
                .iter()
                .map(|l| Some((l[0].as_str()?.to_owned(), Mode::parse(l[1].as_str()?)?)))
                .collect::<Option<Vec<_>>>()?,
        },
        "release_all" => MultiOpKind::ReleaseAll {
            owner,
            resources: strings(&k[2])?,
        },
        _ => return None,
    };
    let o = &v[4];
    let outcome = match o[0].as_str()? {
        "granted" => MultiOutcome::Granted(
            o[1].as_array()?
                .iter()
                .map(parse_holder)
                .collect::<Option<Vec<_>>>()?,
        ),
        "unavailable" => MultiOutcome::Unavailable(strings(&o[1])?),
        "results" => MultiOutcome::Results(
            o[1].as_array()?
                .iter()
                .map(|r| Some((r[0].as_str()?.to_owned(), Released::parse(r[1].as_str()?)?)))
                .collect::<Option<Vec<_>>>()?,
        ),
        "failed" => MultiOutcome::Failed {
            status: o[1].as_u64().and_then(|s| u16::try_from(s).ok())?,
        },
        "unknown" => MultiOutcome::Unknown {
            why: o[1].as_str()?.to_owned(),
        },
        _ => return None,
    };
    Some(MultiOp {
        id: 0,
        client: u32::try_from(v[0].as_u64()?).ok()?,
        kind,
        invoke: v[2].as_i64()?,
        complete: v[3].as_i64()?,
        outcome,
    })
}
