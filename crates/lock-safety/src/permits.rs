//! The history of semaphore operations, kept apart from the lock history: each operation on one
//! semaphore with the instants its client invoked it and saw it complete, and its outcome as the
//! client saw it. Semaphores get direct checks only (see [`checks`]), no linearizability search:
//! several holders at once make the sequential model's state a set, and the classic failure (one
//! permit too many) is found directly from the acknowledged holds.
//!
//! Instants are microseconds since the Unix epoch on the same clock as the lock history's (see
//! [`crate::history`]).

pub mod checks;
pub mod json;
pub mod report;

use std::fmt;

use crate::history::{Micros, DEFAULT_HORIZON_US, DEFAULT_MARGIN_US};
use crate::op_line::{seconds, write_start};

/// One holder's grant as an answer showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermitLease {
    pub name: String,
    pub owner: String,
    pub token: i64,
    pub permits: u32,
    pub limit: u32,
    pub acquired_at: Micros,
    pub expires_at: Micros,
}

/// What the client asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermitOpKind {
    /// `POST /semaphores/{name}`; `wait_seconds` 0 answers at once.
    Acquire {
        owner: String,
        ttl_seconds: u32,
        wait_seconds: u32,
        permits: u32,
        limit: u32,
    },
    /// `DELETE /semaphores/{name}`.
    Release { owner: String },
    /// `POST /semaphores/{name}/renew`.
    Renew { owner: String, ttl_seconds: u32 },
    /// `GET /semaphores/{name}`.
    Status,
}

impl PermitOpKind {
    /// The owner the operation acts for (none for a status).
    pub fn owner(&self) -> Option<&str> {
        match self {
            PermitOpKind::Acquire { owner, .. }
            | PermitOpKind::Release { owner }
            | PermitOpKind::Renew { owner, .. } => Some(owner),
            PermitOpKind::Status => None,
        }
    }
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermitOutcome {
    /// Acquire: 200 `acquired: true`.
    Granted(PermitLease),
    /// Acquire: 200 `acquired: false` (too few permits free, after the wait if any).
    Unavailable,
    /// Acquire: 409 (limit or permits mismatch); nothing changed.
    Conflict { status: u16 },
    /// Release: 204.
    Released,
    /// Renew: 200.
    Renewed(PermitLease),
    /// Status: 200 with the live holders, or 404 (empty).
    Seen(Vec<PermitLease>),
    /// Release or renew: 404, the owner holds no live permit.
    NotFound,
    /// A definite failure that changed nothing: another 4xx (429 included), or a refused
    /// connection (status 0).
    Failed { status: u16 },
    /// No usable answer (5xx, a timeout, a lost or hung-up connection): the operation may have
    /// taken effect at any instant after its invoke, up to the history's horizon after its
    /// completion, or never; a grant made for it may also have been undone by lockd.
    Unknown { why: String },
}

impl PermitOutcome {
    pub fn is_unknown(&self) -> bool {
        matches!(self, PermitOutcome::Unknown { .. })
    }
}

/// One operation of one client on one semaphore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermitOp {
    /// Its index in [`PermitHistory::ops`].
    pub id: usize,
    pub client: u32,
    pub name: String,
    pub kind: PermitOpKind,
    pub invoke: Micros,
    pub complete: Micros,
    pub outcome: PermitOutcome,
}

impl PermitOp {
    /// Whether the operation may have ended, shortened or restarted its owner's grant: an
    /// acquire (a re-grant restarts the lease, perhaps with a shorter TTL; an unheard grant may
    /// be undone), a renew or a release, unless its answer says that nothing changed.
    pub fn may_change_its_owners_grant(&self) -> bool {
        !matches!(self.kind, PermitOpKind::Status)
            && !matches!(
                self.outcome,
                PermitOutcome::Failed { .. } | PermitOutcome::Conflict { .. }
            )
    }

    /// The latest instant the operation may take effect at: its completion, or for an unknown
    /// outcome its completion plus the horizon.
    pub fn latest_effect(&self, horizon_us: Micros) -> Micros {
        if self.outcome.is_unknown() {
            self.complete.saturating_add(horizon_us)
        } else {
            self.complete
        }
    }

    /// The leases its answer showed.
    pub fn shown(&self) -> &[PermitLease] {
        match &self.outcome {
            PermitOutcome::Granted(lease) | PermitOutcome::Renewed(lease) => {
                std::slice::from_ref(lease)
            }
            PermitOutcome::Seen(leases) => leases,
            _ => &[],
        }
    }
}

/// A whole run's semaphore operations.
#[derive(Debug, Clone, Default)]
pub struct PermitHistory {
    pub ops: Vec<PermitOp>,
    /// The semaphores the run used.
    pub names: Vec<String>,
    /// The tolerance for comparing the client's instants with the server's timestamps (as
    /// [`crate::History::margin_us`]).
    pub margin_us: Micros,
    /// How long after its completion an operation with an unknown outcome may still take effect
    /// (as [`crate::History::horizon_us`]).
    pub horizon_us: Micros,
    /// The seed that made the run.
    pub seed: u64,
    /// The instant the run started (times are printed relative to it).
    pub start: Micros,
    /// The lock-delay (µs) every acquire of a semaphore asked for, by name; absent: none.
    pub lock_delays: std::collections::BTreeMap<String, Micros>,
}

impl PermitHistory {
    /// An empty history with the default horizon (30 s) and margin (50 ms).
    pub fn new(start: Micros, seed: u64) -> Self {
        Self {
            ops: Vec::new(),
            names: Vec::new(),
            margin_us: DEFAULT_MARGIN_US,
            horizon_us: DEFAULT_HORIZON_US,
            seed,
            start,
            lock_delays: std::collections::BTreeMap::new(),
        }
    }

    /// Appends an operation, giving it the next id.
    pub fn push(&mut self, mut op: PermitOp) -> usize {
        op.id = self.ops.len();
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// Renders one operation on one line, times relative to the start of the run.
    pub fn describe(&self, op: &PermitOp) -> String {
        PermitOpLine {
            op,
            start: self.start,
        }
        .to_string()
    }
}

struct PermitOpLine<'a> {
    op: &'a PermitOp,
    start: Micros,
}

impl fmt::Display for PermitOpLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.op;
        let s = self.start;
        write_start(f, (op.id, op.client), (op.invoke, op.complete), s)?;
        write!(f, "{} ", op.name)?;
        match &op.kind {
            PermitOpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds,
                permits,
                limit,
            } => write!(
                f,
                "acquire(owner={owner}, permits={permits}, limit={limit}, ttl={ttl_seconds}s, wait={wait_seconds}s)"
            )?,
            PermitOpKind::Release { owner } => write!(f, "release(owner={owner})")?,
            PermitOpKind::Renew { owner, ttl_seconds } => {
                write!(f, "renew(owner={owner}, ttl={ttl_seconds}s)")?
            }
            PermitOpKind::Status => write!(f, "status")?,
        }
        let lease = |l: &PermitLease| {
            format!(
                "{} x{} token={} acquired_at={} expires_at={}",
                l.owner,
                l.permits,
                l.token,
                seconds(l.acquired_at, s),
                seconds(l.expires_at, s)
            )
        };
        match &op.outcome {
            PermitOutcome::Granted(l) => write!(f, " -> granted to {}", lease(l)),
            PermitOutcome::Unavailable => write!(f, " -> unavailable"),
            PermitOutcome::Conflict { status } => write!(f, " -> conflict ({status}), no effect"),
            PermitOutcome::Released => write!(f, " -> released (204)"),
            PermitOutcome::Renewed(l) => write!(f, " -> renewed: {}", lease(l)),
            PermitOutcome::Seen(ls) if ls.is_empty() => write!(f, " -> no live holder (404)"),
            PermitOutcome::Seen(ls) => {
                write!(f, " -> holders [")?;
                for (i, l) in ls.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    write!(f, "{}", lease(l))?;
                }
                write!(f, "]")
            }
            PermitOutcome::NotFound => write!(f, " -> not found (404)"),
            PermitOutcome::Failed { status } => write!(f, " -> failed ({status}), no effect"),
            PermitOutcome::Unknown { why } => {
                write!(f, " -> UNKNOWN ({why}): may have happened")
            }
        }
    }
}
