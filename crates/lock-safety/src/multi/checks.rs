//! Direct checks of the multi-lock history against the per-resource histories it was split
//! into. Like the other direct checks they only use what the clocks prove: an answer's effect
//! happened between its invoke and its completion, an unknown outcome may take effect up to the
//! horizon after its completion (or never, and is never held against the server), and a lease is
//! live until its `expires_at` on the server's clock, known to within the margin.

mod answers;
mod half_granted;
mod refused;

#[cfg(test)]
mod simulated;
#[cfg(test)]
mod tests;

use std::fmt;

use super::view::{steps, OpRef};
use super::MultiHistory;
use crate::history::History;
use crate::shared::SharedHistory;

use self::answers::incomplete_grants;
use self::half_granted::half_granted;
pub use self::half_granted::Coverage;
use self::refused::refused_left_leases;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A set answered granted whose answer does not list every lock it asked for, in request
    /// order, for its owner, in the mode asked, each with its own token.
    IncompleteGrant,
    /// A lock of a set answered granted was proved not held by the set's owner at an instant when
    /// the set had surely been granted and another of its locks was surely held.
    HalfGranted,
    /// A set answered `acquired: false` left a lease of its owner that no other request explains.
    RefusedLeftLease,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::IncompleteGrant => "a multi-lock answered granted did not list every lock asked",
            Kind::HalfGranted => {
                "a multi-lock was half granted: one of its locks was not held while another was"
            }
            Kind::RefusedLeftLease => "a multi-lock answered not granted left a lease behind",
        }
    }
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpRef::Locks(id) => write!(f, "lock op #{id}"),
            OpRef::Shared(id) => write!(f, "shared op #{id}"),
        }
    }
}

/// One finding: its kind, the set (its id in the multi-lock history), a sentence, and the
/// per-resource operations that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub set: usize,
    pub message: String,
    pub ops: Vec<OpRef>,
}

/// At most this many findings of one kind are reported: one is enough to fail, a few show
/// whether it is a pattern.
const REPORTED: usize = 10;

/// What the checks found, and how much the history let them see.
#[derive(Debug, Clone, Default)]
pub struct MultiReport {
    pub findings: Vec<Finding>,
    pub coverage: Coverage,
}

/// Runs every check on every multi-lock operation; `locks` and `shared` are the per-resource
/// histories the operations were split into.
pub fn run(multi: &MultiHistory, locks: &History, shared: &SharedHistory) -> Vec<Finding> {
    check(multi, locks, shared).findings
}

/// Runs every check on every multi-lock operation, and says how much they could see.
pub fn check(multi: &MultiHistory, locks: &History, shared: &SharedHistory) -> MultiReport {
    let steps = steps(locks, shared);
    let mut findings = Vec::new();
    incomplete_grants(multi, &mut findings);
    let mut half = Vec::new();
    let coverage = half_granted(multi, &steps, &mut half);
    findings.extend(half);
    refused_left_leases(multi, &steps, &mut findings);
    MultiReport { findings, coverage }
}
