//! The clients: threads doing random lock operations on a few resources, some of them on
//! resources locked in both modes (see `shared_locks.rs`), some on several resources at once (see
//! `multi_locks.rs`), the same operations on two elections (see `elections.rs`), and semaphore
//! operations on two semaphores (see `semaphores.rs`), and now and then an admin's force-release
//! of a lock or an election (see `force_release.rs`); every fifth client works under sessions
//! instead (see `sessions.rs`); through
//! random instances, each operation recorded with its invoke and complete instants and its outcome
//! as seen.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use lock_safety::history::{session_owner, Micros};
use lock_safety::{multi, Lease, MultiOp, Op, OpKind, Outcome, PermitOp, SharedOp};
use serde_json::{json, Value};

use crate::cluster::Fleet;
use crate::rng::Rng;
use crate::{elections, force_release, multi_locks, semaphores, sessions, shared_locks};

/// Instants in microseconds since the Unix epoch, from a monotonic clock anchored once to the
/// wall clock (the server's timestamps come from the same machine's wall clock).
#[derive(Clone, Copy)]
pub struct Clock {
    anchor: Instant,
    anchor_wall: Micros,
}

impl Clock {
    pub fn new() -> Self {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock after 1970");
        Self {
            anchor: Instant::now(),
            anchor_wall: wall.as_micros() as Micros,
        }
    }

    pub fn now(&self) -> Micros {
        self.anchor_wall + self.anchor.elapsed().as_micros() as Micros
    }
}

/// What every client shares.
pub struct Plan {
    pub resources: Vec<String>,
    /// The lock-delay (seconds) every acquire of some of `resources` (and of `semaphores`) asks
    /// for.
    pub lock_delays: std::collections::BTreeMap<String, u32>,
    /// The resources locked in both modes (none with `--no-shared`), outside the listings'
    /// prefix: a listing's view of a shared hold is not part of the contract.
    pub shared_resources: Vec<String>,
    /// The elections (none with `--no-elections`), outside the listings' prefix: an election is
    /// no lock, and a listing never shows one.
    pub elections: Vec<String>,
    /// The semaphores, all with the limit [`semaphores::LIMIT`].
    pub semaphores: Vec<String>,
    /// Whether the clients send multi-lock operations (`POST /locks`, `DELETE /locks`).
    pub multi: bool,
    /// Whether the clients force-release locks and elections now and then (an admin's
    /// `?force=true&reason=…`).
    pub force_release: bool,
    /// Whether some clients work under sessions (see `sessions.rs`).
    pub sessions: bool,
    pub prefix: String,
    pub run_id: String,
    pub clients: usize,
    pub until: Instant,
    pub seed: u64,
}

/// The owner string of client `c`: clients 0 and 1 share one, and so do 2 and 3 (same owner, same
/// identity: the contract allows it, and it is where a same-owner re-grant meets a concurrent
/// release on another instance).
pub fn owner_of(plan: &Plan, c: usize) -> String {
    let slot = if c < 4 { c / 2 * 2 } else { c };
    format!("{}-owner-{slot}", plan.run_id)
}

/// One client's operations, ids not yet assigned.
pub struct Recorded {
    pub locks: Vec<Op>,
    pub permits: Vec<PermitOp>,
    /// The operations on the resources locked in both modes, multi-lock parts included.
    pub shared: Vec<SharedOp>,
    /// The multi-lock operations, whole (their parts are in `locks` and `shared` too).
    pub multi: Vec<MultiOp>,
}

/// Runs one client until the plan's end; returns its operations.
pub fn client(plan: Arc<Plan>, fleet: Arc<Fleet>, clock: Clock, c: usize) -> Recorded {
    let mut rng = Rng::new(plan.seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let own = owner_of(&plan, c);
    // Impatient clients hang up early: mid-wait, or before a slow answer.
    let impatient = c % 4 == 3;
    let mut ops = Vec::new();
    let mut permit_ops = Vec::new();
    let mut shared_ops = Vec::new();
    let mut multi_ops = Vec::new();
    let mut forced = 0;
    if sessions::is_session_client(&plan, c) {
        return Recorded {
            locks: sessions::client(&plan, &fleet, &clock, c, &mut rng),
            permits: permit_ops,
            shared: shared_ops,
            multi: multi_ops,
        };
    }
    while Instant::now() < plan.until {
        thread::sleep(Duration::from_millis(rng.below(40)));
        let Some(base) = pick_instance(&fleet, &mut rng) else {
            thread::sleep(Duration::from_millis(50));
            continue;
        };
        if rng.below(100) < semaphores::SHARE {
            permit_ops.push(semaphores::operation(
                &plan, &base, &clock, &mut rng, c, impatient,
            ));
            continue;
        }
        // Drawn only when on, so that without them a seed makes the run it made before.
        if plan.multi && rng.below(100) < multi_locks::SHARE {
            let op = multi_locks::operation(&plan, &base, &clock, &mut rng, c, impatient);
            let parts = multi::split(&op, &plan.shared_resources);
            ops.extend(parts.locks);
            shared_ops.extend(parts.shared);
            multi_ops.push(op);
            continue;
        }
        if !plan.shared_resources.is_empty() && rng.below(100) < shared_locks::SHARE {
            shared_ops.push(shared_locks::operation(
                &plan, &base, &clock, &mut rng, c, impatient,
            ));
            continue;
        }
        let choices = plan.resources.len() + plan.elections.len();
        let pick = rng.below(choices as u64) as usize;
        let (resource, election) = match plan.resources.get(pick) {
            Some(resource) => (resource.clone(), false),
            None => (plan.elections[pick - plan.resources.len()].clone(), true),
        };
        // Acquires use our own owner; renews and releases sometimes another client's (a wrong
        // owner, or the same identity used by someone else) or a stranger's (never a holder).
        let wrong_owner = match rng.below(10) {
            0 => Some(owner_of(&plan, rng.below(plan.clients as u64) as usize)),
            1 => Some(format!("{}-stranger", plan.run_id)),
            _ => None,
        };
        let owner = own.clone();
        let ttl = 1 + rng.below(3) as u32;
        let timeout = if impatient {
            Duration::from_millis(200 + rng.below(1500))
        } else {
            Duration::from_secs(4)
        };
        let kind = match rng.below(100) {
            0..=24 => OpKind::Acquire {
                owner,
                ttl_seconds: ttl,
                wait_seconds: 0,
            },
            25..=39 => OpKind::Acquire {
                owner,
                ttl_seconds: ttl,
                wait_seconds: 1 + rng.below(3) as u32,
            },
            40..=54 => OpKind::Renew {
                owner: wrong_owner.unwrap_or(owner),
                ttl_seconds: ttl,
            },
            55..=69 => OpKind::Release {
                owner: wrong_owner.unwrap_or(owner),
            },
            70..=94 => OpKind::Status,
            _ => OpKind::List,
        };
        // Drawn only when on, so that without them a seed makes the run it made before.
        let kind = if plan.force_release && rng.below(1000) < force_release::PER_MILLE {
            forced += 1;
            OpKind::ForceRelease {
                reason: force_release::reason(&plan, c, forced),
            }
        } else {
            kind
        };
        let timeout = match &kind {
            OpKind::Acquire { wait_seconds, .. } if !impatient => {
                timeout + Duration::from_secs(u64::from(*wait_seconds))
            }
            _ => timeout,
        };
        // An election has no listing: read its leader instead.
        let kind = if election && kind == OpKind::List {
            OpKind::Status
        } else {
            kind
        };
        let resource = if kind == OpKind::List {
            plan.prefix.clone()
        } else {
            resource
        };
        let invoke = clock.now();
        let outcome = if election {
            elections::perform(&base, &resource, &kind, timeout)
        } else {
            let lock_delay = plan.lock_delays.get(&resource).copied();
            perform(&base, &resource, &plan.prefix, &kind, lock_delay, timeout)
        };
        let complete = clock.now();
        ops.push(Op {
            id: 0,
            client: c as u32,
            resource,
            kind,
            invoke,
            complete,
            outcome,
        });
    }
    Recorded {
        locks: ops,
        permits: permit_ops,
        shared: shared_ops,
        multi: multi_ops,
    }
}

pub fn pick_instance(fleet: &Fleet, rng: &mut Rng) -> Option<String> {
    let n = fleet.len();
    let first = rng.below(n as u64) as usize;
    (0..n).find_map(|k| fleet.base((first + k) % n))
}

/// An agent that sends each request on a fresh connection (never a pooled one: a request
/// retried on a stale pooled connection could take effect twice).
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .max_idle_connections(0)
        .timeout_connect(Duration::from_millis(500))
        .timeout(timeout)
        .build()
}

/// What came back for one request.
pub enum Answer {
    /// A status and its body.
    Status(u16, String),
    /// The connection was refused: the request reached no server, nothing happened.
    Refused,
    /// No usable answer (a timeout, a lost connection, a body that broke off).
    Lost(String),
}

/// Reads the answer of one request.
pub fn answer(result: Result<ureq::Response, ureq::Error>) -> Answer {
    match result {
        Ok(response) => {
            let status = response.status();
            match response.into_string() {
                Ok(text) => Answer::Status(status, text),
                Err(e) => Answer::Lost(format!("{status} answer broke off: {e}")),
            }
        }
        Err(ureq::Error::Status(status, response)) => {
            Answer::Status(status, response.into_string().unwrap_or_default())
        }
        Err(ureq::Error::Transport(t)) if t.kind() == ureq::ErrorKind::ConnectionFailed => {
            Answer::Refused
        }
        Err(ureq::Error::Transport(t)) => Answer::Lost(format!("transport: {t}")),
    }
}

/// Sends one request on a fresh connection and classifies the answer; an acquire asks for
/// `lock_delay` seconds of lock-delay when given.
fn perform(
    base: &str,
    resource: &str,
    prefix: &str,
    kind: &OpKind,
    lock_delay: Option<u32>,
    timeout: Duration,
) -> Outcome {
    let agent = agent(timeout);
    let path = format!("{base}/locks/{}", encode(resource));
    let result = match kind {
        OpKind::Acquire {
            owner,
            ttl_seconds,
            wait_seconds,
        } => {
            let mut body = json!({"owner": owner, "ttl_seconds": ttl_seconds});
            if *wait_seconds > 0 {
                body["wait_seconds"] = json!(wait_seconds);
            }
            if let Some(lock_delay) = lock_delay {
                body["lock_delay_seconds"] = json!(lock_delay);
            }
            agent.post(&path).send_json(body)
        }
        OpKind::Release { owner } => agent.delete(&path).send_json(json!({"owner": owner})),
        OpKind::Renew { owner, ttl_seconds } => agent
            .post(&format!("{path}/renew"))
            .send_json(json!({"owner": owner, "ttl_seconds": ttl_seconds})),
        OpKind::Status => agent.get(&path).call(),
        OpKind::List => agent
            .get(&format!("{base}/locks"))
            .query("prefix", prefix)
            .query("limit", "1000")
            .call(),
        OpKind::ForceRelease { reason } => return force_release::perform(&agent, &path, reason),
        OpKind::OpenSession { .. } | OpKind::KeepAlive { .. } | OpKind::EndSession { .. } => {
            unreachable!("sessions.rs sends the session operations")
        }
    };
    match answer(result) {
        Answer::Status(status, body) => classify(kind, resource, status, &body),
        Answer::Refused => Outcome::Failed { status: 0 },
        Answer::Lost(why) => unknown(why),
    }
}

fn unknown(why: String) -> Outcome {
    Outcome::Unknown { why }
}

pub fn classify(kind: &OpKind, resource: &str, status: u16, body: &str) -> Outcome {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let lease = |v: Option<&Value>| v.and_then(parse_lease);
    match (kind, status) {
        (_, 500..=599) => unknown(format!("{status}")),
        (OpKind::Acquire { .. }, 200) => match json.as_ref().map(|j| &j["acquired"]) {
            Some(Value::Bool(true)) => match lease(json.as_ref().map(|j| &j["lock"])) {
                Some(l) => Outcome::Granted(l),
                None => unknown(format!("unreadable grant: {body}")),
            },
            Some(Value::Bool(false)) => Outcome::Held,
            _ => unknown(format!("unreadable acquire answer: {body}")),
        },
        (OpKind::Release { .. }, 204) => Outcome::Released,
        (OpKind::Renew { .. }, 200) => match lease(json.as_ref()) {
            Some(l) => Outcome::Renewed(l),
            None => unknown(format!("unreadable renew answer: {body}")),
        },
        (OpKind::Release { .. } | OpKind::Renew { .. }, 403) => Outcome::Forbidden,
        (OpKind::Release { .. } | OpKind::Renew { .. }, 404) => Outcome::NotFound,
        (OpKind::Status, 200) => match lease(json.as_ref()) {
            Some(l) => Outcome::Seen(Some(l)),
            None => unknown(format!("unreadable status answer: {body}")),
        },
        (OpKind::Status, 404) => Outcome::Seen(None),
        (OpKind::List, 200) => {
            let locks = json.as_ref().and_then(|j| j["locks"].as_array());
            let more = json
                .as_ref()
                .is_some_and(|j| j.get("next_cursor").is_some());
            match locks.map(|ls| ls.iter().map(parse_lease).collect::<Option<Vec<_>>>()) {
                Some(Some(leases)) if !more => Outcome::Listed(leases),
                _ => unknown(format!("unreadable or partial listing: {body}")),
            }
        }
        (_, 400..=499) => {
            let _ = resource;
            Outcome::Failed { status }
        }
        _ => unknown(format!("unexpected {status}: {body}")),
    }
}

/// The holder of a lease (or record) as lockd shows it: its owner, or for a hold under a session,
/// the session (whose owner label is no identity).
pub fn holder(v: &Value) -> Option<String> {
    match &v["session"] {
        Value::Null => Some(v["owner"].as_str()?.to_owned()),
        session => Some(session_owner(session.as_str()?)),
    }
}

pub fn parse_lease(v: &Value) -> Option<Lease> {
    let time = |key: &str| {
        chrono::DateTime::parse_from_rfc3339(v[key].as_str()?)
            .ok()
            .map(|t| t.timestamp_micros())
    };
    Some(Lease {
        resource: v["resource"].as_str()?.to_owned(),
        owner: holder(v)?,
        token: v["fencing_token"].as_i64()?,
        acquired_at: time("acquired_at")?,
        expires_at: time("expires_at")?,
    })
}

/// Percent-encodes a path segment (resources here are letters, digits, `-`, `/` and `:`).
pub fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
