//! What the checker reads: a history of operations, each with the instants its client invoked it
//! and saw it complete, and its outcome as the client saw it.
//!
//! Instants are microseconds since the Unix epoch on one machine's clock, taken from a monotonic
//! clock anchored once to the wall clock, so that they can be compared with the server's
//! `acquired_at` and `expires_at` (the server runs on the same machine; the checker's margin
//! covers the rest, see [`History::margin_us`]).

use std::fmt;

/// Microseconds since the Unix epoch.
pub type Micros = i64;

/// A lease as an answer showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub resource: String,
    pub owner: String,
    pub token: i64,
    pub acquired_at: Micros,
    pub expires_at: Micros,
}

/// What the client asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpKind {
    /// `POST /locks/{resource}`; `wait_seconds` 0 answers at once.
    Acquire {
        owner: String,
        ttl_seconds: u32,
        wait_seconds: u32,
    },
    /// `DELETE /locks/{resource}`.
    Release { owner: String },
    /// `POST /locks/{resource}/renew`.
    Renew { owner: String, ttl_seconds: u32 },
    /// `GET /locks/{resource}`.
    Status,
    /// `GET /locks?prefix=…`, one page that covers every resource of the history: a resource
    /// missing from the answer had no live lock when the page was read.
    List,
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Acquire: 200 `acquired: true`.
    Granted(Lease),
    /// Acquire: 200 `acquired: false` (held by another owner, after the wait if any).
    Held,
    /// Release: 204.
    Released,
    /// Renew: 200.
    Renewed(Lease),
    /// Status: 200 with the lease, or 404 (`None`).
    Seen(Option<Lease>),
    /// List: the live locks of the page.
    Listed(Vec<Lease>),
    /// Release or renew: 403, another owner holds the lock.
    Forbidden,
    /// Release or renew: 404, no live lock.
    NotFound,
    /// A definite failure that changed nothing (a 4xx other than the above).
    Failed { status: u16 },
    /// No usable answer: 503, 500, a timeout, a lost connection, a client that hung up on
    /// purpose. The operation may have taken effect at any instant after its invoke (up to the
    /// history's horizon after its completion), or never.
    Unknown { why: String },
}

impl Outcome {
    pub fn is_unknown(&self) -> bool {
        matches!(self, Outcome::Unknown { .. })
    }
}

/// One operation of one client on one resource (the whole listing for [`OpKind::List`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Its index in [`History::ops`].
    pub id: usize,
    pub client: u32,
    /// The resource; for a listing, the prefix that was listed.
    pub resource: String,
    pub kind: OpKind,
    pub invoke: Micros,
    pub complete: Micros,
    pub outcome: Outcome,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub ops: Vec<Op>,
    /// The resources the run used; a listing reports on each of them.
    pub resources: Vec<String>,
    /// The instant the run started (times are printed relative to it).
    pub start: Micros,
    /// How long after its completion an operation with an unknown outcome may still take effect
    /// (for instance a request held in a paused instance that runs when the instance resumes).
    pub horizon_us: Micros,
    /// The tolerance for comparing the client's instants with the server's timestamps: the
    /// server truncates them to milliseconds and its clock is read at a slightly different
    /// moment (PostgreSQL's transaction start on PostgreSQL).
    pub margin_us: Micros,
    /// The seed that made the run, printed with every violation.
    pub seed: u64,
    /// The lock-delay (µs) every acquire of a resource asked for, by resource; absent: none.
    pub lock_delays: std::collections::BTreeMap<String, Micros>,
}

impl History {
    /// An empty history with the default horizon (30 s) and margin (50 ms).
    pub fn new(start: Micros, seed: u64) -> Self {
        Self {
            ops: Vec::new(),
            resources: Vec::new(),
            start,
            horizon_us: 30_000_000,
            margin_us: 50_000,
            seed,
            lock_delays: std::collections::BTreeMap::new(),
        }
    }

    /// Appends an operation, giving it the next id.
    pub fn push(&mut self, mut op: Op) -> usize {
        op.id = self.ops.len();
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// Renders one operation on one line, times relative to the start of the run.
    pub fn describe(&self, op: &Op) -> String {
        OpLine {
            op,
            start: self.start,
        }
        .to_string()
    }
}

struct OpLine<'a> {
    op: &'a Op,
    start: Micros,
}

fn seconds(at: Micros, start: Micros) -> String {
    format!("{:.3}s", (at - start) as f64 / 1e6)
}

impl fmt::Display for OpLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.op;
        let s = self.start;
        write!(
            f,
            "#{:<6} client {:<3} [{} .. {}] {} ",
            op.id,
            op.client,
            seconds(op.invoke, s),
            seconds(op.complete, s),
            op.resource
        )?;
        match &op.kind {
            OpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds,
            } => write!(
                f,
                "acquire(owner={owner}, ttl={ttl_seconds}s, wait={wait_seconds}s)"
            )?,
            OpKind::Release { owner } => write!(f, "release(owner={owner})")?,
            OpKind::Renew { owner, ttl_seconds } => {
                write!(f, "renew(owner={owner}, ttl={ttl_seconds}s)")?
            }
            OpKind::Status => write!(f, "status")?,
            OpKind::List => write!(f, "list")?,
        }
        let lease = |l: &Lease| {
            format!(
                "{} token={} acquired_at={} expires_at={}",
                l.owner,
                l.token,
                seconds(l.acquired_at, s),
                seconds(l.expires_at, s)
            )
        };
        match &op.outcome {
            Outcome::Granted(l) => write!(f, " -> granted to {}", lease(l)),
            Outcome::Held => write!(f, " -> held by another owner"),
            Outcome::Released => write!(f, " -> released (204)"),
            Outcome::Renewed(l) => write!(f, " -> renewed: {}", lease(l)),
            Outcome::Seen(Some(l)) => write!(f, " -> live: {}", lease(l)),
            Outcome::Seen(None) => write!(f, " -> no live lock (404)"),
            Outcome::Listed(ls) => {
                write!(f, " -> [")?;
                for (i, l) in ls.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    write!(f, "{}: {}", l.resource, lease(l))?;
                }
                write!(f, "]")
            }
            Outcome::Forbidden => write!(f, " -> forbidden (403)"),
            Outcome::NotFound => write!(f, " -> not found (404)"),
            Outcome::Failed { status } => write!(f, " -> failed ({status}), no effect"),
            Outcome::Unknown { why } => write!(f, " -> UNKNOWN ({why}): may have happened"),
        }
    }
}

/// The history as JSON lines (a header, then one operation a line), so that a recorded run can
/// be checked again (`lock-safety --check FILE`).
pub mod json {
    use serde_json::{json, Value};

    use super::{History, Lease, Op, OpKind, Outcome};

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
        let mut out = json!({
            "resources": history.resources, "start": history.start, "horizon_us": history.horizon_us,
            "margin_us": history.margin_us, "seed": history.seed,
            "lock_delays_us": history.lock_delays,
        })
        .to_string();
        out.push('\n');
        for op in &history.ops {
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
                Outcome::Failed { status } => json!(["failed", status]),
                Outcome::Unknown { why } => json!(["unknown", why]),
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
    pub fn read(text: &str) -> Result<History, String> {
        let mut lines = text.lines().enumerate();
        let bad = |n: usize, line: &str| format!("line {}: {line}", n + 1);
        let (n, header) = lines.next().ok_or("empty history")?;
        let h: Value = serde_json::from_str(header).map_err(|_| bad(n, header))?;
        let mut history = History::new(h["start"].as_i64().ok_or_else(|| bad(n, header))?, 0);
        history.seed = h["seed"].as_u64().unwrap_or(0);
        history.horizon_us = h["horizon_us"].as_i64().unwrap_or(history.horizon_us);
        history.margin_us = h["margin_us"].as_i64().unwrap_or(history.margin_us);
        if let Some(delays) = h["lock_delays_us"].as_object() {
            history.lock_delays = delays
                .iter()
                .filter_map(|(resource, us)| Some((resource.clone(), us.as_i64()?)))
                .collect();
        }
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

    fn parse_op(line: &str) -> Option<Op> {
        let v: Value = serde_json::from_str(line).ok()?;
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
            "listed" => Outcome::Listed(
                o[1].as_array()?
                    .iter()
                    .map(parse_lease)
                    .collect::<Option<Vec<_>>>()?,
            ),
            "forbidden" => Outcome::Forbidden,
            "not_found" => Outcome::NotFound,
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
}
