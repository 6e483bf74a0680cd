//! The history of the resources locked in both modes, kept apart from the lock history: every
//! operation on such a resource, shared or exclusive, with the instants its client invoked it and
//! saw it complete, and its outcome as the client saw it. A resource used in both modes has all
//! its operations here, so that exclusion between the modes is checked in one place; the lock
//! history keeps the resources only ever locked exclusively, and its linearizability search.
//!
//! These resources get direct checks only (see [`checks`]), like semaphores: several readers at
//! once make the sequential model's state a set, and the classic failures (a writer beside a
//! reader, a token going backwards, a read showing an ended lease) are found directly.
//!
//! Instants are microseconds since the Unix epoch on the same clock as the lock history's (see
//! [`crate::history`]).

pub mod checks;
pub mod json;
pub mod report;

use std::fmt;

use crate::history::{Micros, DEFAULT_HORIZON_US, DEFAULT_MARGIN_US};
use crate::op_line::{seconds, write_start};

/// How a lease holds its resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A writer: no other holder, of either mode, beside it.
    Exclusive,
    /// A reader: other readers may hold the resource at the same time, writers may not.
    Shared,
}

impl Mode {
    /// The mode as the API spells it (`"exclusive"`, `"shared"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Shared => "shared",
        }
    }

    /// Reads the API's spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "exclusive" => Some(Mode::Exclusive),
            "shared" => Some(Mode::Shared),
            _ => None,
        }
    }
}

/// One holder's lease as an answer showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub resource: String,
    pub owner: String,
    pub token: i64,
    pub mode: Mode,
    pub acquired_at: Micros,
    pub expires_at: Micros,
}

/// What the client asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedOpKind {
    /// `POST /locks/{resource}` with a mode; `wait_seconds` 0 answers at once.
    Acquire {
        owner: String,
        ttl_seconds: u32,
        wait_seconds: u32,
        mode: Mode,
    },
    /// `DELETE /locks/{resource}`.
    Release { owner: String },
    /// `POST /locks/{resource}/renew`.
    Renew { owner: String, ttl_seconds: u32 },
    /// `GET /locks/{resource}`.
    Status,
}

impl SharedOpKind {
    /// The owner the operation acts for (none for a status).
    pub fn owner(&self) -> Option<&str> {
        match self {
            SharedOpKind::Acquire { owner, .. }
            | SharedOpKind::Release { owner }
            | SharedOpKind::Renew { owner, .. } => Some(owner),
            SharedOpKind::Status => None,
        }
    }

    /// The TTL an acquire or renew asks for, in microseconds.
    pub fn ttl_us(&self) -> Option<Micros> {
        match self {
            SharedOpKind::Acquire { ttl_seconds, .. } | SharedOpKind::Renew { ttl_seconds, .. } => {
                Some(i64::from(*ttl_seconds) * 1_000_000)
            }
            _ => None,
        }
    }
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedOutcome {
    /// Acquire: 200 `acquired: true`.
    Granted(Holder),
    /// Acquire: 200 `acquired: false` (cannot be granted now, after the wait if any).
    Held,
    /// Acquire: 409 `/problems/mode-mismatch`, the owner holds a live lease in the other mode;
    /// nothing changed.
    ModeMismatch,
    /// Release: 204.
    Released,
    /// Renew: 200.
    Renewed(Holder),
    /// Status: 200 with the holders (one exclusive, or the shared ones), or 404 (empty).
    Seen(Vec<Holder>),
    /// Release or renew: 403, someone else holds the resource and the owner is no live holder.
    Forbidden,
    /// Release or renew: 404, nobody holds the resource.
    NotFound,
    /// A definite failure that changed nothing: another 4xx (429 included), or a refused
    /// connection (status 0).
    Failed { status: u16 },
    /// No usable answer (5xx, a timeout, a lost or hung-up connection): the operation may have
    /// taken effect at any instant after its invoke, up to the history's horizon after its
    /// completion, or never; a grant made for it may also have been undone by lockd.
    Unknown { why: String },
}

impl SharedOutcome {
    pub fn is_unknown(&self) -> bool {
        matches!(self, SharedOutcome::Unknown { .. })
    }
}

/// One operation of one client on one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedOp {
    /// Its index in [`SharedHistory::ops`].
    pub id: usize,
    pub client: u32,
    pub resource: String,
    pub kind: SharedOpKind,
    pub invoke: Micros,
    pub complete: Micros,
    pub outcome: SharedOutcome,
}

impl SharedOp {
    /// Whether the operation may have ended, shortened or restarted its owner's lease: an
    /// acquire (a re-grant restarts the lease, perhaps with a shorter TTL; an unheard grant may
    /// be undone), a renew or a release, unless its answer says that nothing changed.
    pub fn may_change_its_owners_lease(&self) -> bool {
        !matches!(self.kind, SharedOpKind::Status)
            && !matches!(
                self.outcome,
                SharedOutcome::Failed { .. } | SharedOutcome::ModeMismatch
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
    pub fn shown(&self) -> &[Holder] {
        match &self.outcome {
            SharedOutcome::Granted(holder) | SharedOutcome::Renewed(holder) => {
                std::slice::from_ref(holder)
            }
            SharedOutcome::Seen(holders) => holders,
            _ => &[],
        }
    }
}

/// A whole run's operations on the resources locked in both modes.
#[derive(Debug, Clone, Default)]
pub struct SharedHistory {
    pub ops: Vec<SharedOp>,
    /// The resources the run locked in both modes.
    pub resources: Vec<String>,
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
}

impl SharedHistory {
    /// An empty history with the default horizon (30 s) and margin (50 ms).
    pub fn new(start: Micros, seed: u64) -> Self {
        Self {
            ops: Vec::new(),
            resources: Vec::new(),
            margin_us: DEFAULT_MARGIN_US,
            horizon_us: DEFAULT_HORIZON_US,
            seed,
            start,
        }
    }

    /// Appends an operation, giving it the next id.
    pub fn push(&mut self, mut op: SharedOp) -> usize {
        op.id = self.ops.len();
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// Renders one operation on one line, times relative to the start of the run.
    pub fn describe(&self, op: &SharedOp) -> String {
        SharedOpLine {
            op,
            start: self.start,
        }
        .to_string()
    }

    /// An instant in seconds from the start of the run, for messages.
    pub(crate) fn at(&self, instant: Micros) -> f64 {
        (instant - self.start) as f64 / 1e6
    }
}

struct SharedOpLine<'a> {
    op: &'a SharedOp,
    start: Micros,
}

impl fmt::Display for SharedOpLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.op;
        let s = self.start;
        write_start(f, (op.id, op.client), (op.invoke, op.complete), s)?;
        write!(f, "{} ", op.resource)?;
        match &op.kind {
            SharedOpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds,
                mode,
            } => write!(
                f,
                "acquire(owner={owner}, mode={}, ttl={ttl_seconds}s, wait={wait_seconds}s)",
                mode.as_str()
            )?,
            SharedOpKind::Release { owner } => write!(f, "release(owner={owner})")?,
            SharedOpKind::Renew { owner, ttl_seconds } => {
                write!(f, "renew(owner={owner}, ttl={ttl_seconds}s)")?
            }
            SharedOpKind::Status => write!(f, "status")?,
        }
        let holder = |h: &Holder| {
            format!(
                "{} {} token={} acquired_at={} expires_at={}",
                h.owner,
                h.mode.as_str(),
                h.token,
                seconds(h.acquired_at, s),
                seconds(h.expires_at, s)
            )
        };
        match &op.outcome {
            SharedOutcome::Granted(h) => write!(f, " -> granted to {}", holder(h)),
            SharedOutcome::Held => write!(f, " -> not granted now"),
            SharedOutcome::ModeMismatch => write!(f, " -> mode mismatch (409), no effect"),
            SharedOutcome::Released => write!(f, " -> released (204)"),
            SharedOutcome::Renewed(h) => write!(f, " -> renewed: {}", holder(h)),
            SharedOutcome::Seen(hs) if hs.is_empty() => write!(f, " -> no live holder (404)"),
            SharedOutcome::Seen(hs) => {
                write!(f, " -> holders [")?;
                for (i, h) in hs.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    write!(f, "{}", holder(h))?;
                }
                write!(f, "]")
            }
            SharedOutcome::Forbidden => write!(f, " -> forbidden (403)"),
            SharedOutcome::NotFound => write!(f, " -> not found (404)"),
            SharedOutcome::Failed { status } => write!(f, " -> failed ({status}), no effect"),
            SharedOutcome::Unknown { why } => {
                write!(f, " -> UNKNOWN ({why}): may have happened")
            }
        }
    }
}
