//! The session clients: each opens a session, takes and releases locks of the plain resources
//! under it (beside the other clients' own leases), keeps it alive, reads, closes it, and now
//! and then walks away from it so that it runs out with its holds. Every request is recorded as
//! the lock operation it is, its holder the session (`history::session_owner`), so that the
//! model and the session checks judge it with the rest.

use std::time::{Duration, Instant};

use lock_safety::history::session_owner;
use lock_safety::{Op, OpKind, Outcome};
use serde_json::{json, Value};

use crate::cluster::Fleet;
use crate::rng::Rng;
use crate::workload::{agent, answer, classify, encode, owner_of, Answer, Clock, Plan};

/// Every client whose number is this modulo [`EVERY`] works under sessions.
const EVERY: usize = 5;

/// Whether client `c` works under sessions.
pub fn is_session_client(plan: &Plan, c: usize) -> bool {
    plan.sessions && c % EVERY == EVERY - 1
}

/// The session the client holds under.
struct Session {
    id: String,
    owner: String,
    ttl_seconds: u32,
}

/// One operation's request, answer and record.
struct Request<'a> {
    clock: &'a Clock,
    client: u32,
    timeout: Duration,
}

impl Request<'_> {
    /// Sends one request on a fresh connection and records it.
    fn record(
        &self,
        resource: String,
        kind: OpKind,
        send: impl FnOnce(&ureq::Agent) -> Answer,
    ) -> Op {
        let invoke = self.clock.now();
        let answer = send(&agent(self.timeout));
        let complete = self.clock.now();
        let outcome = match answer {
            Answer::Status(status, body) => outcome(&kind, &resource, status, &body),
            // The request reached no server: nothing happened.
            Answer::Refused => Outcome::Failed { status: 0 },
            Answer::Lost(why) => Outcome::Unknown { why },
        };
        Op {
            id: 0,
            client: self.client,
            resource,
            kind,
            invoke,
            complete,
            outcome,
        }
    }
}

/// What a session request's answer shows, as the lock history records it.
fn outcome(kind: &OpKind, resource: &str, status: u16, body: &str) -> Outcome {
    let expires = || {
        let v: Value = serde_json::from_str(body).ok()?;
        let at = chrono::DateTime::parse_from_rfc3339(v["session"]["expires_at"].as_str()?).ok()?;
        Some(at.timestamp_micros())
    };
    match (kind, status) {
        (_, 500..=599) => Outcome::Unknown {
            why: format!("{status}"),
        },
        (OpKind::OpenSession { .. }, 201) | (OpKind::KeepAlive { .. }, 200) => match expires() {
            Some(expires_at) => Outcome::Kept { expires_at },
            None => Outcome::Unknown {
                why: format!("unreadable session: {body}"),
            },
        },
        (OpKind::EndSession { .. }, 204) => Outcome::Released,
        (OpKind::KeepAlive { .. } | OpKind::EndSession { .. }, 404) => Outcome::NotFound,
        (
            OpKind::OpenSession { .. } | OpKind::KeepAlive { .. } | OpKind::EndSession { .. },
            400..=499,
        ) => Outcome::Failed { status },
        _ => classify(kind, resource, status, body),
    }
}

/// Runs one session client until the plan's end; returns its operations.
pub fn client(plan: &Plan, fleet: &Fleet, clock: &Clock, c: usize, rng: &mut Rng) -> Vec<Op> {
    // The sessions' label is another client's owner string: a label is no identity.
    let label = owner_of(plan, 0);
    let resources: Vec<&String> = plan
        .resources
        .iter()
        .filter(|r| !plan.lock_delays.contains_key(*r))
        .collect();
    let mut ops = Vec::new();
    let mut session: Option<Session> = None;
    while Instant::now() < plan.until {
        std::thread::sleep(Duration::from_millis(rng.below(40)));
        let Some(base) = crate::workload::pick_instance(fleet, rng) else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        // One request in five hangs up early: mid-wait, or before a slow answer.
        let timeout = if rng.below(5) == 0 {
            Duration::from_millis(200 + rng.below(1500))
        } else {
            Duration::from_secs(4)
        };
        let request = Request {
            clock,
            client: c as u32,
            timeout,
        };
        let Some(open) = &session else {
            let ttl_seconds = 2 + rng.below(2) as u32;
            let body = json!({"ttl_seconds": ttl_seconds, "owner": label, "lock_delay_seconds": 0});
            let url = format!("{base}/sessions");
            // An opening whose answer was lost names no session: nothing to record.
            let invoke = clock.now();
            let answer = answer(agent(timeout).post(&url).send_json(body));
            let complete = clock.now();
            if let Answer::Status(201, text) = answer {
                let json: Option<Value> = serde_json::from_str(&text).ok();
                let id = json.as_ref().and_then(|j| j["session"]["id"].as_str());
                if let Some(id) = id {
                    let owner = session_owner(id);
                    let kind = OpKind::OpenSession {
                        owner: owner.clone(),
                        ttl_seconds,
                    };
                    ops.push(Op {
                        id: 0,
                        client: c as u32,
                        resource: owner.clone(),
                        outcome: outcome(&kind, &owner, 201, &text),
                        kind,
                        invoke,
                        complete,
                    });
                    session = Some(Session {
                        id: id.to_owned(),
                        owner,
                        ttl_seconds,
                    });
                }
            }
            continue;
        };
        let id = open.id.clone();
        let owner = open.owner.clone();
        let resource = resources[rng.below(resources.len() as u64) as usize].clone();
        let lock = format!("{base}/locks/{}", encode(&resource));
        let session_url = format!("{base}/sessions/{id}");
        let (op, over) = match rng.below(100) {
            0..=34 => {
                let wait_seconds = if rng.below(5) < 3 {
                    0
                } else {
                    1 + rng.below(2) as u32
                };
                let kind = OpKind::Acquire {
                    owner: owner.clone(),
                    ttl_seconds: open.ttl_seconds,
                    wait_seconds,
                };
                let request = Request {
                    timeout: request.timeout + Duration::from_secs(u64::from(wait_seconds)),
                    ..request
                };
                let mut body = json!({"session": id});
                if wait_seconds > 0 {
                    body["wait_seconds"] = json!(wait_seconds);
                }
                let op = request.record(resource, kind, |a| answer(a.post(&lock).send_json(body)));
                // A 404 to an acquire under a session: the session is over.
                let over = op.outcome == Outcome::Failed { status: 404 };
                (op, over)
            }
            35..=44 => {
                let kind = OpKind::Release {
                    owner: owner.clone(),
                };
                let op = request.record(resource, kind, |a| {
                    answer(a.delete(&lock).query("session", &id).call())
                });
                (op, false)
            }
            45..=74 | 93..=99 => {
                let kind = OpKind::KeepAlive {
                    owner: owner.clone(),
                    ttl_seconds: open.ttl_seconds,
                };
                let url = format!("{session_url}/keepalive");
                let op = request.record(owner.clone(), kind, |a| {
                    answer(a.post(&url).send_json(json!({})))
                });
                let over = op.outcome == Outcome::NotFound;
                (op, over)
            }
            75..=86 => {
                let op = request.record(resource, OpKind::Status, |a| answer(a.get(&lock).call()));
                (op, false)
            }
            87..=89 => {
                // Walk away: the session runs out with its holds.
                session = None;
                continue;
            }
            _ => {
                let kind = OpKind::EndSession {
                    owner: owner.clone(),
                };
                let op = request.record(owner.clone(), kind, |a| {
                    answer(a.delete(&session_url).call())
                });
                // Closed, gone, or unknown: either way a new session comes next.
                (op, true)
            }
        };
        ops.push(op);
        if over {
            session = None;
        }
    }
    ops
}
