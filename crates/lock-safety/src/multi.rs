//! The history of the multi-lock operations (`POST /locks`, `DELETE /locks`), whole: each set as
//! its client asked it and saw it answered, on the same clock as the other histories.
//!
//! Every multi-lock operation is also split, lock by lock, into the per-resource histories
//! ([`split`]): a granted lock of a set is a grant of its resource like any other, a lock that an
//! `acquired: false` named unavailable is an acquire answered "held", a set left unknown is an
//! acquire left unknown on each of its resources, and each result of a `DELETE /locks` is a
//! release. So the existing checks (the lock's linearizability search and direct checks, the
//! shared locks' direct checks) judge each resource with the multi-locks in it; this history adds
//! what only the whole set shows (see [`checks`]): a set granted by halves, and a refused set
//! that left a lease behind.

pub mod checks;
pub mod json;
pub mod report;
mod split;
mod view;

use std::fmt;

use crate::history::{Micros, DEFAULT_HORIZON_US, DEFAULT_MARGIN_US};
use crate::op_line::{seconds, write_start};
use crate::shared::{Holder, Mode};

pub use self::split::{split, Split};
pub use self::view::OpRef;

/// What the client asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiOpKind {
    /// `POST /locks`: every lock of `locks` (distinct resources, each in its mode) together, or
    /// none; `wait_seconds` 0 answers at once.
    AcquireAll {
        owner: String,
        ttl_seconds: u32,
        wait_seconds: u32,
        locks: Vec<(String, Mode)>,
    },
    /// `DELETE /locks`: each of `resources`, one after another.
    ReleaseAll {
        owner: String,
        resources: Vec<String>,
    },
}

impl MultiOpKind {
    /// The owner the operation acts for.
    pub fn owner(&self) -> &str {
        match self {
            MultiOpKind::AcquireAll { owner, .. } | MultiOpKind::ReleaseAll { owner, .. } => owner,
        }
    }

    /// The resources it names, in request order.
    pub fn resources(&self) -> Vec<&str> {
        match self {
            MultiOpKind::AcquireAll { locks, .. } => {
                locks.iter().map(|(r, _)| r.as_str()).collect()
            }
            MultiOpKind::ReleaseAll { resources, .. } => {
                resources.iter().map(String::as_str).collect()
            }
        }
    }
}

/// What a `DELETE /locks` did with one lock, as its answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// `released`: the owner's lease ended (as a 204 alone).
    Released,
    /// `forbidden`: another owner holds it (as a 403).
    Forbidden,
    /// `not_found`: nobody holds it (as a 404).
    NotFound,
}

impl Released {
    pub fn as_str(self) -> &'static str {
        match self {
            Released::Released => "released",
            Released::Forbidden => "forbidden",
            Released::NotFound => "not_found",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "released" => Some(Released::Released),
            "forbidden" => Some(Released::Forbidden),
            "not_found" => Some(Released::NotFound),
            _ => None,
        }
    }
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiOutcome {
    /// `POST /locks`: 200 `acquired: true` with these locks, as listed (request order expected).
    Granted(Vec<Holder>),
    /// `POST /locks`: 200 `acquired: false` naming these locks; nothing changed.
    Unavailable(Vec<String>),
    /// `DELETE /locks`: 200 with what happened to each lock, as listed.
    Results(Vec<(String, Released)>),
    /// A definite failure that changed nothing: a 4xx (429 included), or a refused connection
    /// (status 0).
    Failed { status: u16 },
    /// No usable answer (5xx, a timeout, a lost or hung-up connection, the `acquired: false`
    /// naming nothing that lockd writes for a client that hung up): the operation may have taken
    /// effect, on some of its locks for a `DELETE /locks`, or not.
    Unknown { why: String },
}

impl MultiOutcome {
    pub fn is_unknown(&self) -> bool {
        matches!(self, MultiOutcome::Unknown { .. })
    }
}

/// One multi-lock operation of one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiOp {
    /// Its index in [`MultiHistory::ops`].
    pub id: usize,
    pub client: u32,
    pub kind: MultiOpKind,
    pub invoke: Micros,
    pub complete: Micros,
    pub outcome: MultiOutcome,
}

/// A whole run's multi-lock operations.
#[derive(Debug, Clone, Default)]
pub struct MultiHistory {
    pub ops: Vec<MultiOp>,
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

impl MultiHistory {
    /// An empty history with the default horizon (30 s) and margin (50 ms).
    pub fn new(start: Micros, seed: u64) -> Self {
        Self {
            ops: Vec::new(),
            margin_us: DEFAULT_MARGIN_US,
            horizon_us: DEFAULT_HORIZON_US,
            seed,
            start,
        }
    }

    /// Appends an operation, giving it the next id.
    pub fn push(&mut self, mut op: MultiOp) -> usize {
        op.id = self.ops.len();
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// Renders one operation on one line, times relative to the start of the run.
    pub fn describe(&self, op: &MultiOp) -> String {
        MultiOpLine {
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

struct MultiOpLine<'a> {
    op: &'a MultiOp,
    start: Micros,
}

impl fmt::Display for MultiOpLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, s) = (self.op, self.start);
        write_start(f, (op.id, op.client), (op.invoke, op.complete), s)?;
        match &op.kind {
            MultiOpKind::AcquireAll {
                owner,
                ttl_seconds,
                wait_seconds,
                locks,
            } => {
                let locks: Vec<String> = locks
                    .iter()
                    .map(|(r, m)| format!("{r} {}", m.as_str()))
                    .collect();
                write!(
                    f,
                    "acquire-all(owner={owner}, ttl={ttl_seconds}s, wait={wait_seconds}s, [{}])",
                    locks.join(", ")
                )?;
            }
            MultiOpKind::ReleaseAll { owner, resources } => {
                write!(f, "release-all(owner={owner}, [{}])", resources.join(", "))?;
            }
        }
        match &op.outcome {
            MultiOutcome::Granted(holders) => {
                let holders: Vec<String> = holders
                    .iter()
                    .map(|h| {
                        format!(
                            "{} {} {} token={} acquired_at={} expires_at={}",
                            h.resource,
                            h.owner,
                            h.mode.as_str(),
                            h.token,
                            seconds(h.acquired_at, s),
                            seconds(h.expires_at, s)
                        )
                    })
                    .collect();
                write!(f, " -> granted [{}]", holders.join("; "))
            }
            MultiOutcome::Unavailable(names) => {
                write!(f, " -> not granted, unavailable [{}]", names.join(", "))
            }
            MultiOutcome::Results(results) => {
                let results: Vec<String> = results
                    .iter()
                    .map(|(r, what)| format!("{r} {}", what.as_str()))
                    .collect();
                write!(f, " -> [{}]", results.join(", "))
            }
            MultiOutcome::Failed { status } => write!(f, " -> failed ({status}), no effect"),
            MultiOutcome::Unknown { why } => write!(f, " -> UNKNOWN ({why}): may have happened"),
        }
    }
}
