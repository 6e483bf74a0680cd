//! What the checker reads: a history of operations, each with the instants its client invoked it
//! and saw it complete, and its outcome as the client saw it.
//!
//! Instants are microseconds since the Unix epoch on one machine's clock, taken from a monotonic
//! clock anchored once to the wall clock, so that they can be compared with the server's
//! `acquired_at` and `expires_at` (the server runs on the same machine; the checker's margin
//! covers the rest, see [`History::margin_us`]).

pub mod json;

use std::fmt;

use crate::op_line::{seconds, write_start};

pub use crate::micros::Micros;

/// The horizon of a new history of any primitive: 30 s (see [`History::horizon_us`]).
pub const DEFAULT_HORIZON_US: Micros = 30_000_000;

/// The margin of a new history of any primitive: 50 ms (see [`History::margin_us`]).
pub const DEFAULT_MARGIN_US: Micros = 50_000;

/// A lease as an answer showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub resource: String,
    pub owner: String,
    pub token: i64,
    pub acquired_at: Micros,
    pub expires_at: Micros,
}

/// A lease a force-release ended, as its answer listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedLease {
    pub owner: String,
    pub token: i64,
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
    /// `DELETE /locks/{resource}?force=true&reason=…` (an election's `DELETE …/leader?force=true…`):
    /// an admin ends whatever lease is there. Each one's reason is unique in the run, so that
    /// its records in lockd's history can be told apart.
    ForceRelease { reason: String },
    /// `POST /sessions` that answered with the session (`owner` is its [`session_owner`]; the
    /// op's resource too). An open whose answer was lost names no session and is not recorded.
    OpenSession { owner: String, ttl_seconds: u32 },
    /// `POST /sessions/{id}/keepalive` (the op's resource is the session's owner): every hold of
    /// the session, on any resource, now ends with the session's new end.
    KeepAlive { owner: String, ttl_seconds: u32 },
    /// `DELETE /sessions/{id}` (the op's resource is the session's owner): every hold of the
    /// session, on any resource, is released at once.
    EndSession { owner: String },
}

/// The owner string by which the checker knows the holds of session `id`: lockd shows a
/// session's hold with the session's owner label and its id (`"session": id`), and the holder
/// is the session, whatever its label. No client's owner string has this form.
pub fn session_owner(id: &str) -> String {
    format!("session {id}")
}

/// Whether `owner` is a session's (see [`session_owner`]).
pub fn is_session_owner(owner: &str) -> bool {
    owner.starts_with("session ")
}

impl OpKind {
    /// Whether the operation acts on the session of its owner, and so on every hold of it on
    /// any resource (its op's resource is the session's owner, not a resource).
    pub fn is_session_wide(&self) -> bool {
        matches!(
            self,
            OpKind::OpenSession { .. } | OpKind::KeepAlive { .. } | OpKind::EndSession { .. }
        )
    }
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
    /// Release, renew or force-release: 404, no live lock.
    NotFound,
    /// Force-release: 200, the leases it ended.
    ForceReleased(Vec<EndedLease>),
    /// Open or keepalive of a session: 200/201, the session (and every hold of it) lives until
    /// `expires_at`.
    Kept { expires_at: Micros },
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
            horizon_us: DEFAULT_HORIZON_US,
            margin_us: DEFAULT_MARGIN_US,
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

impl fmt::Display for OpLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.op;
        let s = self.start;
        write_start(f, (op.id, op.client), (op.invoke, op.complete), s)?;
        write!(f, "{} ", op.resource)?;
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
            OpKind::ForceRelease { reason } => write!(f, "force-release(reason={reason})")?,
            OpKind::OpenSession { owner, ttl_seconds } => {
                write!(f, "open-session(owner={owner}, ttl={ttl_seconds}s)")?
            }
            OpKind::KeepAlive { owner, ttl_seconds } => {
                write!(f, "keepalive(owner={owner}, ttl={ttl_seconds}s)")?
            }
            OpKind::EndSession { owner } => write!(f, "end-session(owner={owner})")?,
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
            Outcome::ForceReleased(ended) => {
                let ended: Vec<String> = ended
                    .iter()
                    .map(|e| format!("{} token={}", e.owner, e.token))
                    .collect();
                write!(f, " -> force-released [{}]", ended.join("; "))
            }
            Outcome::Kept { expires_at } => {
                write!(f, " -> live until {}", seconds(*expires_at, s))
            }
            Outcome::Failed { status } => write!(f, " -> failed ({status}), no effect"),
            Outcome::Unknown { why } => write!(f, " -> UNKNOWN ({why}): may have happened"),
        }
    }
}
