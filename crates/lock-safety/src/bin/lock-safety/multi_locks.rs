//! The clients' multi-lock operations: `POST /locks` with 2 or 3 distinct resources (at once, or,
//! half of them, waiting 1 to 3 s), and `DELETE /locks` of 2 or 3, on the plain resources (always exclusive:
//! their history is the exclusive lock's) and the resources locked in both modes (either mode),
//! each recorded whole with its invoke and complete instants and its outcome as seen. The caller
//! also records each operation split into its resources' histories (`lock_safety::multi::split`).

use std::time::Duration;

use lock_safety::multi::Released;
use lock_safety::{Holder, Mode, MultiOp, MultiOpKind, MultiOutcome};
use serde_json::{json, Value};

use crate::rng::Rng;
use crate::shared_locks::parse_holder;
use crate::workload::{agent, answer, owner_of, Answer, Clock, Plan};

/// The share of the lock operations that are multi-lock operations, in percent (three in four
/// `POST /locks`, the others `DELETE /locks`).
pub const SHARE: u64 = 20;

/// Whether the plan has resources enough for sets of two.
pub fn possible(plan: &Plan) -> bool {
    let delayed = plan
        .resources
        .iter()
        .filter(|resource| plan.lock_delays.contains_key(*resource))
        .count();
    plan.resources.len() - delayed + plan.shared_resources.len() >= 2
}

/// Makes, performs and records one random multi-lock operation of client `c` through `base`.
pub fn operation(
    plan: &Plan,
    base: &str,
    clock: &Clock,
    rng: &mut Rng,
    c: usize,
    impatient: bool,
) -> MultiOp {
    // Not the lock-delayed resource: a set's grants have no delay, and the checker holds every
    // lease of that resource to its delay.
    let mut pool: Vec<&String> = plan
        .resources
        .iter()
        .filter(|resource| !plan.lock_delays.contains_key(*resource))
        .chain(&plan.shared_resources)
        .collect();
    let count = (2 + rng.below(2) as usize).min(pool.len());
    let mut picked = Vec::with_capacity(count);
    for _ in 0..count {
        picked.push(
            pool.swap_remove(rng.below(pool.len() as u64) as usize)
                .clone(),
        );
    }
    let owner = owner_of(plan, c);
    let timeout = if impatient {
        Duration::from_millis(200 + rng.below(1500))
    } else {
        Duration::from_secs(4)
    };
    let (kind, timeout) = if rng.below(4) < 3 {
        // Half of them wait: a set is granted only when all its locks are free at once.
        let wait_seconds = if rng.below(2) == 0 {
            1 + rng.below(3) as u32
        } else {
            0
        };
        let locks = picked
            .into_iter()
            .map(|resource| {
                let shared = plan.shared_resources.contains(&resource) && rng.below(2) == 0;
                (
                    resource,
                    if shared {
                        Mode::Shared
                    } else {
                        Mode::Exclusive
                    },
                )
            })
            .collect();
        let kind = MultiOpKind::AcquireAll {
            owner,
            ttl_seconds: 1 + rng.below(3) as u32,
            wait_seconds,
            locks,
        };
        let timeout = if impatient {
            timeout
        } else {
            timeout + Duration::from_secs(u64::from(wait_seconds))
        };
        (kind, timeout)
    } else {
        // As for single releases: one in ten by another client's owner, one in ten a stranger's.
        let owner = match rng.below(10) {
            0 => owner_of(plan, rng.below(plan.clients as u64) as usize),
            1 => format!("{}-stranger", plan.run_id),
            _ => owner,
        };
        let kind = MultiOpKind::ReleaseAll {
            owner,
            resources: picked,
        };
        (kind, timeout)
    };
    let invoke = clock.now();
    let outcome = perform(base, &kind, timeout);
    let complete = clock.now();
    MultiOp {
        id: 0,
        client: c as u32,
        kind,
        invoke,
        complete,
        outcome,
    }
}

/// Sends one request on a fresh connection and classifies the answer.
fn perform(base: &str, kind: &MultiOpKind, timeout: Duration) -> MultiOutcome {
    let agent = agent(timeout);
    let path = format!("{base}/locks");
    let result = match kind {
        MultiOpKind::AcquireAll {
            owner,
            ttl_seconds,
            wait_seconds,
            locks,
        } => {
            let locks: Vec<Value> = locks
                .iter()
                .map(|(resource, mode)| json!({"resource": resource, "mode": mode.as_str()}))
                .collect();
            let mut body = json!({"owner": owner, "ttl_seconds": ttl_seconds, "locks": locks});
            if *wait_seconds > 0 {
                body["wait_seconds"] = json!(wait_seconds);
            }
            agent.post(&path).send_json(body)
        }
        MultiOpKind::ReleaseAll { owner, resources } => agent
            .delete(&path)
            .send_json(json!({"owner": owner, "resources": resources})),
    };
    match answer(result) {
        Answer::Status(status, body) => classify(kind, status, &body),
        Answer::Refused => MultiOutcome::Failed { status: 0 },
        Answer::Lost(why) => MultiOutcome::Unknown { why },
    }
}

fn unknown(why: String) -> MultiOutcome {
    MultiOutcome::Unknown { why }
}

fn classify(kind: &MultiOpKind, status: u16, body: &str) -> MultiOutcome {
    let json: Option<Value> = serde_json::from_str(body).ok();
    match (kind, status) {
        (_, 500..=599) => unknown(format!("{status}")),
        (MultiOpKind::AcquireAll { .. }, 200) => {
            let json = json.unwrap_or_default();
            match &json["acquired"] {
                Value::Bool(true) => match holders(&json["locks"]) {
                    Some(holders) => MultiOutcome::Granted(holders),
                    None => unknown(format!("unreadable grant: {body}")),
                },
                // lockd names nothing only in the answer to a waiter that hung up (nobody reads
                // it): its grant was undone, if it could be.
                Value::Bool(false) => match names(&json["unavailable"]) {
                    Some(names) if !names.is_empty() => MultiOutcome::Unavailable(names),
                    _ => unknown(format!("refusal naming nothing: {body}")),
                },
                _ => unknown(format!("unreadable acquire answer: {body}")),
            }
        }
        (MultiOpKind::ReleaseAll { .. }, 200) => {
            match json.as_ref().and_then(|j| results(&j["results"])) {
                Some(results) => MultiOutcome::Results(results),
                None => unknown(format!("unreadable release answer: {body}")),
            }
        }
        (_, 400..=499) => MultiOutcome::Failed { status },
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

/// The locks of a grant, each as `POST /locks/{resource}` shows one.
fn holders(v: &Value) -> Option<Vec<Holder>> {
    v.as_array()?
        .iter()
        .map(|l| parse_holder(l, Mode::Exclusive))
        .collect()
}

fn names(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|n| n.as_str().map(str::to_owned))
        .collect()
}

fn results(v: &Value) -> Option<Vec<(String, Released)>> {
    v.as_array()?
        .iter()
        .map(|r| {
            let what = Released::parse(r["result"].as_str()?)?;
            Some((r["resource"].as_str()?.to_owned(), what))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acquire_all() -> MultiOpKind {
        MultiOpKind::AcquireAll {
            owner: "o".to_owned(),
            ttl_seconds: 2,
            wait_seconds: 0,
            locks: vec![
                ("a".to_owned(), Mode::Exclusive),
                ("b".to_owned(), Mode::Shared),
            ],
        }
    }

    #[test]
    fn answers_are_read_as_lockd_writes_them() {
        let lease = |r: &str, mode: &str, token: u32| {
            format!(
                r#"{{"resource":"{r}","owner":"o","acquired_at":"2024-01-01T00:00:00Z","expires_at":"2024-01-01T00:00:02Z","fencing_token":{token},"mode":"{mode}"}}"#
            )
        };
        let granted = format!(
            r#"{{"acquired":true,"locks":[{},{}]}}"#,
            lease("a", "exclusive", 4),
            lease("b", "shared", 5)
        );
        let MultiOutcome::Granted(holders) = classify(&acquire_all(), 200, &granted) else {
            panic!("{granted}")
        };
        let modes: Vec<Mode> = holders.iter().map(|h| h.mode).collect();
        assert_eq!(modes, vec![Mode::Exclusive, Mode::Shared]);
        assert_eq!(
            classify(
                &acquire_all(),
                200,
                r#"{"acquired":false,"unavailable":["b"]}"#
            ),
            MultiOutcome::Unavailable(vec!["b".to_owned()])
        );
        assert!(classify(
            &acquire_all(),
            200,
            r#"{"acquired":false,"unavailable":[]}"#
        )
        .is_unknown());
        assert!(classify(&acquire_all(), 503, "").is_unknown());
        assert_eq!(
            classify(&acquire_all(), 422, "{}"),
            MultiOutcome::Failed { status: 422 }
        );
        let release = MultiOpKind::ReleaseAll {
            owner: "o".to_owned(),
            resources: vec!["a".to_owned(), "b".to_owned()],
        };
        let body = r#"{"results":[{"resource":"a","result":"released","fencing_token":4},{"resource":"b","result":"not_found"}]}"#;
        assert_eq!(
            classify(&release, 200, body),
            MultiOutcome::Results(vec![
                ("a".to_owned(), Released::Released),
                ("b".to_owned(), Released::NotFound)
            ])
        );
    }
}
