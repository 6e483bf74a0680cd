//! The history as JSON lines (a header, then one operation a line), so that a recorded run can
//! be checked again (`lock-safety --check FILE`).

use serde_json::{json, Value};

use super::{EndedLease, History, Lease, Op, OpKind, Outcome};
use crate::jsonl::{self, Run};

fn lease(l: &Lease) -> Value {
    json!([l.resource, l.owner, l.token, l.acquired_at, l.expires_at])
}

fn parse_lease(v: &Value) -> Option<Lease> {
    Some(Lease {
        resource: v[0].as_str()?.to_owned(),
        owner: v[1].as_str()?.to_owned(),
        token: v[2].as_i64()?,
        acquired_at: v[3].as_i64()?,
        expires_at: v[4].as_i64()?,
    })
}

/// Writes the history.
pub fn write(history: &History) -> String {
    let run = Run {
        start: history.start,
        seed: history.seed,
        horizon_us: history.horizon_us,
        margin_us: history.margin_us,
    };
    let header = run.header(
        Some(("resources", &history.resources)),
        Some(&history.lock_delays),
    );
    jsonl::write(&header, history.ops.iter().map(op_line))
}

fn op_line(op: &Op) -> Value {
    let kind = match &op.kind {
        OpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
        } => json!(["acquire", owner, ttl_seconds, wait_seconds]),
        OpKind::Release { owner } => json!(["release", owner]),
        OpKind::Renew { owner, ttl_seconds } => json!(["renew", owner, ttl_seconds]),
        OpKind::Status => json!(["status"]),
        OpKind::List => json!(["list"]),
        OpKind::ForceRelease { reason } => json!(["force_release", reason]),
        OpKind::OpenSession { owner, ttl_seconds } => json!(["open_session", owner, ttl_seconds]),
        OpKind::KeepAlive { owner, ttl_seconds } => json!(["keepalive", owner, ttl_seconds]),
        OpKind::EndSession { owner } => json!(["end_session", owner]),
    };
    let outcome = match &op.outcome {
        Outcome::Granted(l) => json!(["granted", lease(l)]),
        Outcome::Held => json!(["held"]),
        Outcome::Released => json!(["released"]),
        Outcome::Renewed(l) => json!(["renewed", lease(l)]),
        Outcome::Seen(l) => json!(["seen", l.as_ref().map(lease)]),
        Outcome::Listed(ls) => json!(["listed", ls.iter().map(lease).collect::<Vec<_>>()]),
        Outcome::Forbidden => json!(["forbidden"]),
        Outcome::NotFound => json!(["not_found"]),
        Outcome::ForceReleased(ended) => json!([
            "force_released",
            ended
                .iter()
                .map(|e| json!([e.owner, e.token]))
                .collect::<Vec<_>>()
        ]),
        Outcome::Kept { expires_at } => json!(["kept", expires_at]),
        Outcome::Failed { status } => json!(["failed", status]),
        Outcome::Unknown { why } => json!(["unknown", why]),
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
pub fn read(text: &str) -> Result<History, String> {
    let header = |h: &Value| {
        let run = Run::read(h)?;
        let mut history = History::new(run.start, run.seed);
        history.horizon_us = run.horizon_us;
        history.margin_us = run.margin_us;
        history.lock_delays = jsonl::lock_delays(&h["lock_delays_us"]);
        history.resources = jsonl::names_of(&h["resources"]);
        Some(history)
    };
    jsonl::read(text, "empty history", header, |history, v| {
        history.push(parse_op(v)?);
        Some(())
    })
}

fn parse_op(v: &Value) -> Option<Op> {
    // The lock history has always cut a number too large for its field (`as`) where the other
    // histories refuse it (`jsonl::number`, `jsonl::status`): stored files read as they did.
    let k = &v[2];
    let owner = || k[1].as_str().map(str::to_owned);
    let kind = match k[0].as_str()? {
        "acquire" => OpKind::Acquire {
            owner: owner()?,
            ttl_seconds: k[2].as_u64()? as u32,
            wait_seconds: k[3].as_u64()? as u32,
        },
        "release" => OpKind::Release { owner: owner()? },
        "renew" => OpKind::Renew {
            owner: owner()?,
            ttl_seconds: k[2].as_u64()? as u32,
        },
        "status" => OpKind::Status,
        "list" => OpKind::List,
        "force_release" => OpKind::ForceRelease {
            reason: k[1].as_str()?.to_owned(),
        },
        "open_session" => OpKind::OpenSession {
            owner: owner()?,
            ttl_seconds: u32::try_from(k[2].as_u64()?).ok()?,
        },
        "keepalive" => OpKind::KeepAlive {
            owner: owner()?,
            ttl_seconds: u32::try_from(k[2].as_u64()?).ok()?,
        },
        "end_session" => OpKind::EndSession { owner: owner()? },
        _ => return None,
    };
    let o = &v[5];
    let outcome = match o[0].as_str()? {
        "granted" => Outcome::Granted(parse_lease(&o[1])?),
        "held" => Outcome::Held,
        "released" => Outcome::Released,
        "renewed" => Outcome::Renewed(parse_lease(&o[1])?),
        "seen" if o[1].is_null() => Outcome::Seen(None),
        "seen" => Outcome::Seen(Some(parse_lease(&o[1])?)),
        "listed" => Outcome::Listed(jsonl::list(&o[1], parse_lease)?),
        "forbidden" => Outcome::Forbidden,
        "not_found" => Outcome::NotFound,
        "force_released" => Outcome::ForceReleased(jsonl::list(&o[1], |e| {
            Some(EndedLease {
                owner: jsonl::text(&e[0])?,
                token: e[1].as_i64()?,
            })
        })?),
        "kept" => Outcome::Kept {
            expires_at: o[1].as_i64()?,
        },
        "failed" => Outcome::Failed {
            status: o[1].as_u64()? as u16,
        },
        "unknown" => Outcome::Unknown {
            why: o[1].as_str()?.to_owned(),
        },
        _ => return None,
    };
    Some(Op {
        id: 0,
        client: v[0].as_u64()? as u32,
        resource: v[1].as_str()?.to_owned(),
        kind,
        invoke: v[3].as_i64()?,
        complete: v[4].as_i64()?,
        outcome,
    })
}
