//! Election operations of the clients. An election is a lock in a namespace of its own, so its
//! operations go into the lock history as operations on a resource of their own (the election's
//! name, outside the listings' prefix) and are checked against the same model: one leader at a
//! time (at most one holder), terms that only grow (fencing tokens), only the leader renews or
//! resigns. A campaign is an acquire, a leader's renew a renew, a resign a release, reading the
//! leader a status, an admin's force-release of the leader a force-release.

use std::time::Duration;

use lock_safety::{Lease, OpKind, Outcome};
use serde_json::{json, Value};

use crate::force_release;
use crate::workload::{agent, answer, encode, Answer};

/// How many elections the clients share.
pub const ELECTIONS: usize = 2;

/// Sends one election operation on a fresh connection and classifies the answer as the lock
/// operation it is.
pub fn perform(base: &str, election: &str, kind: &OpKind, timeout: Duration) -> Outcome {
    let agent = agent(timeout);
    let path = format!("{base}/elections/{}", encode(election));
    let result = match kind {
        OpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
        } => {
            let mut body = json!({"candidate": owner, "ttl_seconds": ttl_seconds});
            if *wait_seconds > 0 {
                body["wait_seconds"] = json!(wait_seconds);
            }
            agent.post(&format!("{path}/campaign")).send_json(body)
        }
        OpKind::Release { owner } => agent
            .delete(&format!("{path}/leader"))
            .send_json(json!({"candidate": owner})),
        OpKind::Renew { owner, ttl_seconds } => agent
            .post(&format!("{path}/renew"))
            .send_json(json!({"candidate": owner, "ttl_seconds": ttl_seconds})),
        OpKind::Status | OpKind::List => agent.get(&path).call(),
        OpKind::ForceRelease { reason } => {
            return force_release::perform(&agent, &format!("{path}/leader"), reason)
        }
        OpKind::OpenSession { .. } | OpKind::KeepAlive { .. } | OpKind::EndSession { .. } => {
            unreachable!("no election is campaigned for under a session here")
        }
    };
    match answer(result) {
        Answer::Status(status, body) => classify(kind, status, &body),
        Answer::Refused => Outcome::Failed { status: 0 },
        Answer::Lost(why) => Outcome::Unknown { why },
    }
}

fn classify(kind: &OpKind, status: u16, body: &str) -> Outcome {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let leader = |v: Option<&Value>| v.and_then(parse_leader);
    let unknown = |why: String| Outcome::Unknown { why };
    match (kind, status) {
        (_, 500..=599) => unknown(format!("{status}")),
        (OpKind::Acquire { .. }, 200) => match json.as_ref().map(|j| &j["elected"]) {
            Some(Value::Bool(true)) => match leader(json.as_ref().map(|j| &j["leader"])) {
                Some(l) => Outcome::Granted(l),
                None => unknown(format!("unreadable election: {body}")),
            },
            Some(Value::Bool(false)) => Outcome::Held,
            _ => unknown(format!("unreadable campaign answer: {body}")),
        },
        (OpKind::Release { .. }, 204) => Outcome::Released,
        (OpKind::Renew { .. }, 200) => match leader(json.as_ref()) {
            Some(l) => Outcome::Renewed(l),
            None => unknown(format!("unreadable renew answer: {body}")),
        },
        (OpKind::Release { .. } | OpKind::Renew { .. }, 403) => Outcome::Forbidden,
        (OpKind::Release { .. } | OpKind::Renew { .. }, 404) => Outcome::NotFound,
        (OpKind::Status | OpKind::List, 200) => match leader(json.as_ref()) {
            Some(l) => Outcome::Seen(Some(l)),
            None => unknown(format!("unreadable leader: {body}")),
        },
        (OpKind::Status | OpKind::List, 404) => Outcome::Seen(None),
        (_, 400..=499) => Outcome::Failed { status },
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

/// A leader as the lease it is: its election is the resource, its candidate the owner, its term
/// the fencing token.
fn parse_leader(v: &Value) -> Option<Lease> {
    let time = |key: &str| {
        chrono::DateTime::parse_from_rfc3339(v[key].as_str()?)
            .ok()
            .map(|t| t.timestamp_micros())
    };
    Some(Lease {
        resource: v["election"].as_str()?.to_owned(),
        owner: v["candidate"].as_str()?.to_owned(),
        token: v["term"].as_i64()?,
        acquired_at: time("elected_at")?,
        expires_at: time("expires_at")?,
    })
}
