//! The shared-lock history as JSON lines (a header, then one operation a line), so that a
//! recorded run can be checked again (`lock-safety --check`, with `shared.jsonl` beside the
//! history).

use serde_json::{json, Value};

use super::{Holder, Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};

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
pub fn write(history: &SharedHistory) -> String {
    let mut out = json!({
        "resources": history.resources, "start": history.start, "horizon_us": history.horizon_us,
        "margin_us": history.margin_us, "seed": history.seed,
    })
    .to_string();
    out.push('\n');
    for op in &history.ops {
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
        out.push_str(
            &json!([
                op.client,
                op.resource,
                kind,
                op.invoke,
                op.complete,
                outcome
            ])
            .to_string(),
        );
        out.push('\n');
    }
    out
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<SharedHistory, String> {
    let mut lines = text.lines().enumerate();
    let bad = |n: usize, line: &str| format!("line {}: {line}", n + 1);
    let (n, header) = lines.next().ok_or("empty history")?;
    let h: Value = serde_json::from_str(header).map_err(|_| bad(n, header))?;
    let mut history = SharedHistory::new(h["start"].as_i64().ok_or_else(|| bad(n, header))?, 0);
    history.seed = h["seed"].as_u64().unwrap_or(0);
    history.horizon_us = h["horizon_us"].as_i64().unwrap_or(history.horizon_us);
    history.margin_us = h["margin_us"].as_i64().unwrap_or(history.margin_us);
    history.resources = h["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter_map(|r| r.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for (n, line) in lines {
        let op = parse_op(line).ok_or_else(|| bad(n, line))?;
        history.push(op);
    }
    Ok(history)
}

fn parse_op(line: &str) -> Option<SharedOp> {
    let v: Value = serde_json::from_str(line).ok()?;
    let k = &v[2];
    let owner = || k[1].as_str().map(str::to_owned);
    let number = |i: usize| k[i].as_u64().and_then(|n| u32::try_from(n).ok());
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
        "seen" => SharedOutcome::Seen(
            o[1].as_array()?
                .iter()
                .map(parse_holder)
                .collect::<Option<Vec<_>>>()?,
        ),
        "forbidden" => SharedOutcome::Forbidden,
        "not_found" => SharedOutcome::NotFound,
        "failed" => SharedOutcome::Failed {
            status: o[1].as_u64().and_then(|s| u16::try_from(s).ok())?,
        },
        "unknown" => SharedOutcome::Unknown {
            why: o[1].as_str()?.to_owned(),
        },
        _ => return None,
    };
    Some(SharedOp {
        id: 0,
        client: u32::try_from(v[0].as_u64()?).ok()?,
        resource: v[1].as_str()?.to_owned(),
        kind,
        invoke: v[3].as_i64()?,
        complete: v[4].as_i64()?,
        outcome,
    })
}
