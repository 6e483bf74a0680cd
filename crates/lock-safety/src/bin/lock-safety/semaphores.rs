//! The clients' semaphore operations: acquires (at once, or waiting 1 to 3 s), renews, releases
//! and status reads on the plan's semaphores, each recorded with its invoke and complete instants
//! and its outcome as seen. Every client always asks the same number of permits (1 or 2), so that
//! its acquires while it holds a grant are re-grants; the two clients sharing one owner ask
//! different numbers (a 409 for the second).

use std::time::Duration;

use lock_safety::{PermitLease, PermitOp, PermitOpKind, PermitOutcome};
use serde_json::{json, Value};

use crate::rng::Rng;
use crate::workload::{agent, answer, encode, owner_of, Answer, Clock, Plan};

/// The share of the clients' operations that go to semaphores, in percent.
pub const SHARE: u64 = 30;
/// Every semaphore's limit.
pub const LIMIT: u32 = 3;

/// The permits client `c` always asks for.
fn permits_of(c: usize) -> u32 {
    1 + (c % 2) as u32
}

/// Makes, performs and records one random semaphore operation of client `c` through `base`.
pub fn operation(
    plan: &Plan,
    base: &str,
    clock: &Clock,
    rng: &mut Rng,
    c: usize,
    impatient: bool,
) -> PermitOp {
    let name = plan.semaphores[rng.below(plan.semaphores.len() as u64) as usize].clone();
    // As for locks: acquires use the client's own owner; renews and releases sometimes another
    // client's or a stranger's.
    let wrong_owner = match rng.below(10) {
        0 => Some(owner_of(plan, rng.below(plan.clients as u64) as usize)),
        1 => Some(format!("{}-stranger", plan.run_id)),
        _ => None,
    };
    let owner = owner_of(plan, c);
    let ttl = 1 + rng.below(3) as u32;
    let timeout = if impatient {
        Duration::from_millis(200 + rng.below(1500))
    } else {
        Duration::from_secs(4)
    };
    let acquire = |wait_seconds| PermitOpKind::Acquire {
        owner: owner.clone(),
        ttl_seconds: ttl,
        wait_seconds,
        permits: permits_of(c),
        limit: LIMIT,
    };
    let kind = match rng.below(100) {
        0..=29 => acquire(0),
        30..=49 => acquire(1 + rng.below(3) as u32),
        50..=69 => PermitOpKind::Renew {
            owner: wrong_owner.unwrap_or(owner.clone()),
            ttl_seconds: ttl,
        },
        70..=84 => PermitOpKind::Release {
            owner: wrong_owner.unwrap_or(owner.clone()),
        },
        _ => PermitOpKind::Status,
    };
    let timeout = match &kind {
        PermitOpKind::Acquire { wait_seconds, .. } if !impatient => {
            timeout + Duration::from_secs(u64::from(*wait_seconds))
        }
        _ => timeout,
    };
    let invoke = clock.now();
    let lock_delay = plan.lock_delays.get(&name).copied();
    let outcome = perform(base, &name, &kind, lock_delay, timeout);
    let complete = clock.now();
    PermitOp {
        id: 0,
        client: c as u32,
        name,
        kind,
        invoke,
        complete,
        outcome,
    }
}

/// Sends one request on a fresh connection and classifies the answer; an acquire asks for
/// `lock_delay` seconds of lock-delay when given.
fn perform(
    base: &str,
    name: &str,
    kind: &PermitOpKind,
    lock_delay: Option<u32>,
    timeout: Duration,
) -> PermitOutcome {
    let agent = agent(timeout);
    let path = format!("{base}/semaphores/{}", encode(name));
    let result = match kind {
        PermitOpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
            permits,
            limit,
        } => {
            let mut body = json!({
                "owner": owner, "ttl_seconds": ttl_seconds, "limit": limit, "permits": permits,
            });
            if *wait_seconds > 0 {
                body["wait_seconds"] = json!(wait_seconds);
            }
            if let Some(lock_delay) = lock_delay {
                body["lock_delay_seconds"] = json!(lock_delay);
            }
            agent.post(&path).send_json(body)
        }
        PermitOpKind::Release { owner } => agent.delete(&path).send_json(json!({"owner": owner})),
        PermitOpKind::Renew { owner, ttl_seconds } => agent
            .post(&format!("{path}/renew"))
            .send_json(json!({"owner": owner, "ttl_seconds": ttl_seconds})),
        PermitOpKind::Status => agent.get(&path).call(),
    };
    match answer(result) {
        Answer::Status(status, body) => classify(kind, status, &body),
        Answer::Refused => PermitOutcome::Failed { status: 0 },
        Answer::Lost(why) => PermitOutcome::Unknown { why },
    }
}

fn unknown(why: String) -> PermitOutcome {
    PermitOutcome::Unknown { why }
}

fn classify(kind: &PermitOpKind, status: u16, body: &str) -> PermitOutcome {
    let json: Option<Value> = serde_json::from_str(body).ok();
    match (kind, status) {
        (_, 500..=599) => unknown(format!("{status}")),
        (PermitOpKind::Acquire { .. }, 200) => match json.as_ref().map(|j| &j["acquired"]) {
            Some(Value::Bool(true)) => {
                match json.as_ref().and_then(|j| parse_lease(&j["permit"])) {
                    Some(lease) => PermitOutcome::Granted(lease),
                    None => unknown(format!("unreadable grant: {body}")),
                }
            }
            // A real refusal names the limit; limit 0 is the answer nobody was meant to read (its
            // client hung up, and a grant made for it was undone).
            Some(Value::Bool(false))
                if json
                    .as_ref()
                    .and_then(|j| j["limit"].as_u64())
                    .is_some_and(|l| l > 0) =>
            {
                PermitOutcome::Unavailable
            }
            _ => unknown(format!("unreadable acquire answer: {body}")),
        },
        (PermitOpKind::Acquire { .. }, 409) => PermitOutcome::Conflict { status },
        (PermitOpKind::Release { .. }, 204) => PermitOutcome::Released,
        (PermitOpKind::Renew { .. }, 200) => match json.as_ref().and_then(parse_lease) {
            Some(lease) => PermitOutcome::Renewed(lease),
            None => unknown(format!("unreadable renew answer: {body}")),
        },
        (PermitOpKind::Release { .. } | PermitOpKind::Renew { .. }, 404) => PermitOutcome::NotFound,
        (PermitOpKind::Status, 200) => {
            let holders = json.as_ref().and_then(|j| j["holders"].as_array());
            match holders.map(|hs| hs.iter().map(parse_lease).collect::<Option<Vec<_>>>()) {
                Some(Some(leases)) => PermitOutcome::Seen(leases),
                _ => unknown(format!("unreadable status answer: {body}")),
            }
        }
        (PermitOpKind::Status, 404) => PermitOutcome::Seen(Vec::new()),
        (_, 400..=499) => PermitOutcome::Failed { status },
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

fn parse_lease(v: &Value) -> Option<PermitLease> {
    let time = |key: &str| {
        chrono::DateTime::parse_from_rfc3339(v[key].as_str()?)
            .ok()
            .map(|t| t.timestamp_micros())
    };
    let number = |key: &str| v[key].as_u64().and_then(|n| u32::try_from(n).ok());
    Some(PermitLease {
        name: v["name"].as_str()?.to_owned(),
        owner: v["owner"].as_str()?.to_owned(),
        token: v["fencing_token"].as_i64()?,
        permits: number("permits")?,
        limit: number("limit")?,
        acquired_at: time("acquired_at")?,
        expires_at: time("expires_at")?,
    })
}
