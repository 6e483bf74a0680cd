//! The semaphore history as JSON lines (a header, then one operation a line), so that a recorded
//! run can be checked again (`lock-safety --check`, with `permits.jsonl` beside the history).

use serde_json::{json, Value};

use super::{PermitHistory, PermitLease, PermitOp, PermitOpKind, PermitOutcome};

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
        name: v[0].as_str()?.to_owned(),
        owner: v[1].as_str()?.to_owned(),
        token: v[2].as_i64()?,
        permits: u32::try_from(v[3].as_u64()?).ok()?,
        limit: u32::try_from(v[4].as_u64()?).ok()?,
        acquired_at: v[5].as_i64()?,
        expires_at: v[6].as_i64()?,
    })
}

/// Writes the history.
pub fn write(history: &PermitHistory) -> String {
    let mut out = json!({
        "names": history.names, "start": history.start, "horizon_us": history.horizon_us,
        "margin_us": history.margin_us, "seed": history.seed,
        "lock_delays_us": history.lock_delays,
    })
    .to_string();
    out.push('\n');
    for op in &history.ops {
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
        out.push_str(
            &json!([op.client, op.name, kind, op.invoke, op.complete, outcome]).to_string(),
        );
        out.push('\n');
    }
    out
}

/// Reads a history written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<PermitHistory, String> {
    let mut lines = text.lines().enumerate();
    let bad = |n: usize, line: &str| format!("line {}: {line}", n + 1);
    let (n, header) = lines.next().ok_or("empty history")?;
    let h: Value = serde_json::from_str(header).map_err(|_| bad(n, header))?;
    let mut history = PermitHistory::new(h["start"].as_i64().ok_or_else(|| bad(n, header))?, 0);
    history.seed = h["seed"].as_u64().unwrap_or(0);
    history.horizon_us = h["horizon_us"].as_i64().unwrap_or(history.horizon_us);
    history.margin_us = h["margin_us"].as_i64().unwrap_or(history.margin_us);
    if let Some(delays) = h["lock_delays_us"].as_object() {
        history.lock_delays = delays
            .iter()
            .filter_map(|(name, us)| Some((name.clone(), us.as_i64()?)))
            .collect();
    }
    history.names = h["names"]
        .as_array()
        .map(|ns| {
            ns.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for (n, line) in lines {
        let op = parse_op(line).ok_or_else(|| bad(n, line))?;
        history.push(op);
    }
    Ok(history)
}

fn parse_op(line: &str) -> Option<PermitOp> {
    let v: Value = serde_json::from_str(line).ok()?;
    let k = &v[2];
    let owner = || k[1].as_str().map(str::to_owned);
    let number = |i: usize| k[i].as_u64().and_then(|n| u32::try_from(n).ok());
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
    let status = || o[1].as_u64().and_then(|s| u16::try_from(s).ok());
    let outcome = match o[0].as_str()? {
        "granted" => PermitOutcome::Granted(parse_lease(&o[1])?),
        "unavailable" => PermitOutcome::Unavailable,
        "conflict" => PermitOutcome::Conflict { status: status()? },
        "released" => PermitOutcome::Released,
        "renewed" => PermitOutcome::Renewed(parse_lease(&o[1])?),
        "seen" => PermitOutcome::Seen(
            o[1].as_array()?
                .iter()
                .map(parse_lease)
                .collect::<Option<Vec<_>>>()?,
        ),
        "not_found" => PermitOutcome::NotFound,
        "failed" => PermitOutcome::Failed { status: status()? },
        "unknown" => PermitOutcome::Unknown {
            why: o[1].as_str()?.to_owned(),
        },
        _ => return None,
    };
    Some(PermitOp {
        id: 0,
        client: u32::try_from(v[0].as_u64()?).ok()?,
        name: v[1].as_str()?.to_owned(),
        kind,
        invoke: v[3].as_i64()?,
        complete: v[4].as_i64()?,
        outcome,
    })
}
