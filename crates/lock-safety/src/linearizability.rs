//! The linearizability search: is there one order of each resource's operations, each placed at an
//! instant between its invoke and its completion, in which the model explains every answer?
//!
//! This is Wing and Gong's search as Porcupine and Knossos run it, per resource (a lock's
//! operations touch one resource, so the resources can be checked apart): depth first, taking
//! next any operation invoked before the earliest completion among the definite operations not
//! yet placed, and remembering every (placed set, lock state) pair already explored. An operation
//! with an unknown outcome is optional: it may be placed anywhere from its invoke to its
//! completion plus the history's horizon, or never; it is only placed where it changes the state
//! (placing a no-op can only narrow what follows). The effort is bounded: a partition whose
//! search exceeds its budget is reported as unknown, neither a pass nor a violation.
//!
//! `partition.rs` cuts a history into per-resource entries, `search.rs` is the search and
//! `shrink.rs` narrows a violation to a small slice.

mod partition;
mod search;
mod shrink;

use crate::history::Micros;
use crate::model::{Call, Ret};

pub use self::partition::partitions;
pub use self::search::{search, Found};
use self::shrink::shrink;

/// One operation of a partition.
#[derive(Debug, Clone)]
pub struct Entry {
    pub call: Call,
    pub ret: Ret,
    pub invoke: Micros,
    /// The latest instant it may take effect at: its completion, or later for an optional one.
    pub deadline: Micros,
    /// Whether it may also never take effect.
    pub optional: bool,
    /// The history's operation it comes from.
    pub source: usize,
}

/// One resource's operations, ordered by invoke.
#[derive(Debug, Clone)]
pub struct Partition {
    pub resource: String,
    pub entries: Vec<Entry>,
    pub margin: Micros,
    /// The lock-delay every acquire of the resource asked for.
    pub lock_delay: Micros,
}

/// How one partition's search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    /// No order explains the answers; the operations shown are a smallest slice found that still
    /// has no explanation.
    Violation {
        slice: Vec<usize>,
    },
    /// The search exceeded its budget.
    Unknown,
}

/// The result for one resource.
#[derive(Debug, Clone)]
pub struct PartitionResult {
    pub resource: String,
    pub entries: usize,
    pub states: u64,
    pub verdict: Verdict,
}

/// Checks one partition; on a violation, shrinks it to a small slice that still fails.
pub fn check_partition(partition: &Partition, budget: u64) -> PartitionResult {
    let (found, states) = search(
        &partition.entries,
        partition.margin,
        partition.lock_delay,
        budget,
    );
    let verdict = match found {
        Found::Linearizable => Verdict::Linearizable,
        Found::OverBudget => Verdict::Unknown,
        Found::NotLinearizable { stuck_at } => Verdict::Violation {
            slice: shrink(partition, stuck_at, budget),
        },
    };
    PartitionResult {
        resource: partition.resource.clone(),
        entries: partition.entries.len(),
        states,
        verdict,
    }
}
