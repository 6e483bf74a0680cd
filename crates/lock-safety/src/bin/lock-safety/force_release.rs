//! Force-releases of the clients: an admin's `DELETE /locks/{resource}?force=true&reason=…` (an
//! election's `DELETE /elections/{name}/leader?force=true&reason=…`), a few in a hundred lock
//! operations. lockd runs here without API keys, so every caller is an admin. Each reason names
//! the run, the client and its count, unique in the run, so that the check of lockd's history
//! can find the records of each force-release.

use lock_safety::{EndedLease, Outcome};
use serde_json::Value;

use crate::workload::{answer, Answer, Plan};

/// Force-releases per thousand lock operations on the plain resources and the elections.
pub const PER_MILLE: u64 = 20;

/// The reason of client `client`'s `n`th force-release.
pub fn reason(plan: &Plan, client: usize, n: u64) -> String {
    format!("{} client {client} force-release {n}", plan.run_id)
}

/// Sends one force-release to `url` (the lock's, or the election's leader) on `agent` and
/// classifies the answer.
pub fn perform(agent: &ureq::Agent, url: &str, reason: &str) -> Outcome {
    let result = agent
        .delete(url)
        .query("force", "true")
        .query("reason", reason)
        .call();
    match answer(result) {
        Answer::Status(status, body) => classify(status, &body),
        Answer::Refused => Outcome::Failed { status: 0 },
        Answer::Lost(why) => Outcome::Unknown { why },
    }
}

fn classify(status: u16, body: &str) -> Outcome {
    let unknown = |why: String| Outcome::Unknown { why };
    match status {
        200 => {
            let json: Option<Value> = serde_json::from_str(body).ok();
            let ended = json
                .as_ref()
                .and_then(|j| j["force_released"].as_array())
                .and_then(|ended| ended.iter().map(parse_ended).collect::<Option<Vec<_>>>());
            match ended {
                Some(ended) => Outcome::ForceReleased(ended),
                None => unknown(format!("unreadable force-release answer: {body}")),
            }
        }
        404 => Outcome::NotFound,
        500..=599 => unknown(format!("{status}")),
        400..=499 => Outcome::Failed { status },
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

fn parse_ended(v: &Value) -> Option<EndedLease> {
    Some(EndedLease {
        owner: crate::workload::holder(v)?,
        token: v["fencing_token"].as_i64()?,
    })
}
