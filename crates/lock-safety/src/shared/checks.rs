//! Direct checks of the shared-lock history, each with a plain message and the operations that
//! show it. Like the lock's and the semaphores' direct checks they only use what the clocks
//! prove: an answer's effect happened between its invoke and its completion, an unknown outcome
//! may take effect up to the horizon after its completion (or never), and a lease is live until
//! its `expires_at` on the server's clock, known to within the margin.

mod ended;
mod exclusion;
mod held;
mod reads;
mod tokens;

#[cfg(test)]
mod simulated;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use super::{SharedHistory, SharedOp};

use self::ended::{revivals, seen_after_expiry};
use self::exclusion::{most_readers, writers_beside_holders};
use self::held::holds;
use self::reads::{impossible_reads, lost_acknowledgements};
use self::tokens::{new_grant_tokens, tokens_with_two_holders};

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Two acknowledged holds of different leases overlap in time, and one of them is exclusive.
    WriterBesideHolder,
    /// One fencing token shown for two holders (two owners, or two modes) of one resource.
    TokenReused,
    /// A new grant's token is not larger than a token an earlier answer showed.
    TokenRegression,
    /// One status showed holders that cannot hold at once (a writer among several holders, or
    /// one owner or one token twice).
    ImpossibleRead,
    /// A lease shown live after an answer proved it over (released, refused, missing from a
    /// status, excluded by a writer, replaced by another lease of its owner).
    Revived,
    /// A lease shown live (renewed, re-granted or in a status) after it had surely expired.
    SeenAfterExpiry,
    /// A status made while an acknowledged lease was surely held did not show it.
    LostAcknowledgement,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::WriterBesideHolder => "a writer held the lock beside another holder",
            Kind::TokenReused => "one fencing token was shown for two holders",
            Kind::TokenRegression => "a new grant's fencing token was not larger than earlier ones",
            Kind::ImpossibleRead => "a status showed holders that cannot hold at once",
            Kind::Revived => "an ended lease was seen live again",
            Kind::SeenAfterExpiry => "a lease was seen live after it had surely expired",
            Kind::LostAcknowledgement => "an acknowledged lease was not seen by a later status",
        }
    }
}

/// One finding: its kind, the resource, a sentence, and the operations that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub resource: String,
    pub message: String,
    pub ops: Vec<usize>,
}

/// A lease of a resource: its owner and token (a grant, its re-grants and renewals are one).
type Lease<'a> = (&'a str, i64);

/// At most this many findings of one kind on one resource are reported: one is enough to fail,
/// a few show whether it is a pattern.
const REPORTED: usize = 5;

/// What the checks found, and per resource the most readers surely holding it at once (how much
/// the history let the checks see: with one reader at a time, "readers coexist" was never tried).
#[derive(Debug, Clone, Default)]
pub struct SharedReport {
    pub findings: Vec<Finding>,
    pub readers: Vec<(String, usize)>,
}

/// Runs every check on every resource of the history.
pub fn run(history: &SharedHistory) -> Vec<Finding> {
    check(history).findings
}

/// Runs every check on every resource of the history.
pub fn check(history: &SharedHistory) -> SharedReport {
    let mut by_resource: BTreeMap<&str, Vec<&SharedOp>> = BTreeMap::new();
    for resource in &history.resources {
        by_resource.entry(resource).or_default();
    }
    for op in &history.ops {
        by_resource.entry(&op.resource).or_default().push(op);
    }
    let mut findings = Vec::new();
    let mut readers = Vec::new();
    for (resource, ops) in &by_resource {
        let holds = holds(history, ops);
        writers_beside_holders(resource, &holds, &mut findings);
        readers.push(((*resource).to_owned(), most_readers(&holds)));
        tokens_with_two_holders(resource, ops, &mut findings);
        new_grant_tokens(history, resource, ops, &mut findings);
        impossible_reads(resource, ops, &mut findings);
        lost_acknowledgements(resource, &holds, ops, &mut findings);
        revivals(resource, ops, &mut findings);
        seen_after_expiry(history, resource, ops, &mut findings);
    }
    SharedReport { findings, readers }
}
