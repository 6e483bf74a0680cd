//! The clients' operations on the resources locked in both modes: acquires (at once, or waiting 1
//! to 3 s; two in three ask `"mode": "shared"`, the others exclusive), renews, releases and status
//! reads, each recorded with its invoke and complete instants and its outcome as seen. An owner
//! holding one mode and asking the other is answered 409 (`/problems/mode-mismatch`).

use std::time::Duration;

use lock_safety::{Holder, Mode, SharedOp, SharedOpKind, SharedOutcome};
use serde_json::{json, Value};

use crate::rng::Rng;
use crate::workload::{agent, answer, encode, owner_of, Answer, Clock, Plan};

/// The share of the lock operations that go to the resources locked in both modes, in percent.
pub const SHARE: u64 = 30;

/// Makes, performs and records one random operation of client `c` through `base` on one of the
/// plan's resources locked in both modes (there must be one).
pub fn operation(
    plan: &Plan,
    base: &str,
    clock: &Clock,
    rng: &mut Rng,
    c: usize,
    impatient: bool,
) -> SharedOp {
    let resources = &plan.shared_resources;
    let resource = resources[rng.below(resources.len() as u64) as usize].clone();
    // As for the other locks: acquires use the client's own owner; renews and releases sometimes
    // another client's or a stranger's.
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
    let mode = if rng.below(3) < 2 {
        Mode::Shared
    } else {
        Mode::Exclusive
    };
    let acquire = |wait_seconds| SharedOpKind::Acquire {
        owner: owner.clone(),
        ttl_seconds: ttl,
        wait_seconds,
        mode,
    };
    let kind = match rng.below(100) {
        0..=24 => acquire(0),
        25..=39 => acquire(1 + rng.below(3) as u32),
        40..=54 => SharedOpKind::Renew {
            owner: wrong_owner.unwrap_or(owner.clone()),
            ttl_seconds: ttl,
        },
        55..=69 => SharedOpKind::Release {
            owner: wrong_owner.unwrap_or(owner.clone()),
        },
        _ => SharedOpKind::Status,
    };
    let timeout = match &kind {
        SharedOpKind::Acquire { wait_seconds, .. } if !impatient => {
            timeout + Duration::from_secs(u64::from(*wait_seconds))
        }
        _ => timeout,
    };
    let invoke = clock.now();
    let outcome = perform(base, &resource, &kind, timeout);
    let complete = clock.now();
    SharedOp {
        id: 0,
        client: c as u32,
        resource,
        kind,
        invoke,
        complete,
        outcome,
    }
}

/// Sends one request on a fresh connection and classifies the answer.
fn perform(base: &str, resource: &str, kind: &SharedOpKind, timeout: Duration) -> SharedOutcome {
    let agent = agent(timeout);
    let path = format!("{base}/locks/{}", encode(resource));
    let result = match kind {
        SharedOpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
            mode,
        } => {
            let mut body = json!({
                "owner": owner, "ttl_seconds": ttl_seconds, "mode": mode.as_str(),
            });
            if *wait_seconds > 0 {
                body["wait_seconds"] = json!(wait_seconds);
            }
            agent.post(&path).send_json(body)
        }
        SharedOpKind::Release { owner } => agent.delete(&path).query("owner", owner).call(),
        SharedOpKind::Renew { owner, ttl_seconds } => agent
            .post(&format!("{path}/renew"))
            .send_json(json!({"owner": owner, "ttl_seconds": ttl_seconds})),
        SharedOpKind::Status => agent.get(&path).call(),
    };
    match answer(result) {
        Answer::Status(status, body) => classify(kind, status, &body),
        Answer::Refused => SharedOutcome::Failed { status: 0 },
        Answer::Lost(why) => SharedOutcome::Unknown { why },
    }
}

fn unknown(why: String) -> SharedOutcome {
    SharedOutcome::Unknown { why }
}

fn classify(kind: &SharedOpKind, status: u16, body: &str) -> SharedOutcome {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let holder = |v: Option<&Value>| v.and_then(|v| parse_holder(v, Mode::Exclusive));
    match (kind, status) {
        (_, 500..=599) => unknown(format!("{status}")),
        (SharedOpKind::Acquire { .. }, 200) => match json.as_ref().map(|j| &j["acquired"]) {
            Some(Value::Bool(true)) => match holder(json.as_ref().map(|j| &j["lock"])) {
                Some(h) => SharedOutcome::Granted(h),
                None => unknown(format!("unreadable grant: {body}")),
            },
            Some(Value::Bool(false)) => SharedOutcome::Held,
            _ => unknown(format!("unreadable acquire answer: {body}")),
        },
        (SharedOpKind::Acquire { .. }, 409)
            if json
                .as_ref()
                .and_then(|j| j["type"].as_str())
                .is_some_and(|t| t.ends_with("/problems/mode-mismatch")) =>
        {
            SharedOutcome::ModeMismatch
        }
        (SharedOpKind::Release { .. }, 204) => SharedOutcome::Released,
        (SharedOpKind::Renew { .. }, 200) => match holder(json.as_ref()) {
            Some(h) => SharedOutcome::Renewed(h),
            None => unknown(format!("unreadable renew answer: {body}")),
        },
        (SharedOpKind::Release { .. } | SharedOpKind::Renew { .. }, 403) => {
            SharedOutcome::Forbidden
        }
        (SharedOpKind::Release { .. } | SharedOpKind::Renew { .. }, 404) => SharedOutcome::NotFound,
        (SharedOpKind::Status, 200) => match json.as_ref().and_then(parse_status) {
            Some(holders) => SharedOutcome::Seen(holders),
            None => unknown(format!("unreadable status answer: {body}")),
        },
        (SharedOpKind::Status, 404) => SharedOutcome::Seen(Vec::new()),
        (_, 400..=499) => SharedOutcome::Failed { status },
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

/// A status: one exclusive holder (the lease itself), or the shared holders
/// (`{"resource", "mode": "shared", "holders": [...]}`). Each holder keeps the mode it names;
/// one that names none takes the answer's.
fn parse_status(v: &Value) -> Option<Vec<Holder>> {
    let mode = v["mode"]
        .as_str()
        .map_or(Some(Mode::Exclusive), Mode::parse)?;
    match v.get("holders") {
        Some(holders) => holders
            .as_array()?
            .iter()
            .map(|h| parse_holder(h, mode))
            .collect(),
        None => Some(vec![parse_holder(v, mode)?]),
    }
}

/// A lease `L`; `mode` when it names none (a server that knows no modes grants exclusively).
pub(crate) fn parse_holder(v: &Value, mode: Mode) -> Option<Holder> {
    let time = |key: &str| {
        chrono::DateTime::parse_from_rfc3339(v[key].as_str()?)
            .ok()
            .map(|t| t.timestamp_micros())
    };
    Some(Holder {
        resource: v["resource"].as_str()?.to_owned(),
        owner: v["owner"].as_str()?.to_owned(),
        token: v["fencing_token"].as_i64()?,
        mode: v["mode"].as_str().map_or(Some(mode), Mode::parse)?,
        acquired_at: time("acquired_at")?,
        expires_at: time("expires_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: &str = r#""resource":"r","acquired_at":"2024-01-01T00:00:00Z","expires_at":"2024-01-01T00:00:02Z""#;

    fn status(body: &str) -> SharedOutcome {
        classify(&SharedOpKind::Status, 200, body)
    }

    #[test]
    fn a_status_reads_either_shape() {
        let exclusive = format!(r#"{{{LEASE},"owner":"w","fencing_token":3,"mode":"exclusive"}}"#);
        let SharedOutcome::Seen(holders) = status(&exclusive) else {
            panic!("{exclusive}")
        };
        assert_eq!((holders.len(), holders[0].mode), (1, Mode::Exclusive));
        let shared = format!(
            r#"{{"resource":"r","mode":"shared","holders":[{{{LEASE},"owner":"a","fencing_token":4,"mode":"shared"}},{{{LEASE},"owner":"b","fencing_token":5}}]}}"#
        );
        let SharedOutcome::Seen(holders) = status(&shared) else {
            panic!("{shared}")
        };
        let modes: Vec<Mode> = holders.iter().map(|h| h.mode).collect();
        assert_eq!(modes, vec![Mode::Shared, Mode::Shared]);
        assert!(status(r#"{"mode":"shared","holders":[{"owner":"a"}]}"#).is_unknown());
    }

    #[test]
    fn only_a_mode_mismatch_409_is_one() {
        let acquire = SharedOpKind::Acquire {
            owner: "a".to_owned(),
            ttl_seconds: 1,
            wait_seconds: 0,
            mode: Mode::Shared,
        };
        let mismatch = r#"{"type":"https://lockd.dev/problems/mode-mismatch","status":409}"#;
        assert_eq!(
            classify(&acquire, 409, mismatch),
            SharedOutcome::ModeMismatch
        );
        assert_eq!(
            classify(&acquire, 409, r#"{"type":"/problems/other"}"#),
            SharedOutcome::Failed { status: 409 }
        );
    }
}
