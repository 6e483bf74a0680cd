//! Direct checks of a semaphore history, each with a plain message and the operations that show
//! it. Like the lock's direct checks they only use what the clocks prove: an answer's effect
//! happened between its invoke and its completion, an unknown outcome may take effect up to the
//! horizon after its completion (or never), and a lease is live until its `expires_at` on the
//! server's clock, known to within the margin.

mod expired;
mod held;
mod tokens;
mod too_many;
mod unseen;

use std::collections::BTreeMap;

use super::{PermitHistory, PermitOp};

use self::expired::seen_after_expiry;
use self::held::{holds, places};
use self::tokens::{new_grant_tokens, tokens_with_two_holders};
use self::too_many::{too_many_held, too_many_shown};
use self::unseen::lost_acknowledgements;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// At some instant the acknowledged holds of different grants add up to more permits than
    /// the limit, or one status showed holders that do.
    TooManyPermits,
    /// One fencing token shown for two owners, or for two semaphores.
    TokenReused,
    /// A new grant's token is not larger than a token an earlier answer showed.
    TokenRegression,
    /// A grant shown live (renewed, re-granted or in a status) after it had surely expired.
    SeenAfterExpiry,
    /// A status made while an acknowledged grant was surely held did not show it.
    LostAcknowledgement,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::TooManyPermits => "more permits were held than the limit",
            Kind::TokenReused => "one fencing token was shown for two holders",
            Kind::TokenRegression => "a new grant's fencing token was not larger than earlier ones",
            Kind::SeenAfterExpiry => "a grant was seen live after it had surely expired",
            Kind::LostAcknowledgement => "an acknowledged grant was not seen by a later status",
        }
    }
}

/// One finding: its kind, the semaphore, a sentence, and the operations that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub name: String,
    pub message: String,
    pub ops: Vec<usize>,
}

/// At most this many findings of one kind on one semaphore are reported: one is enough to fail,
/// a few show whether it is a pattern.
const REPORTED: usize = 5;

/// Runs every check on every semaphore of the history.
pub fn run(history: &PermitHistory) -> Vec<Finding> {
    check(history).findings
}

/// What the checks found, and per semaphore the most permits surely held at once.
#[derive(Debug, Clone, Default)]
pub struct PermitReport {
    pub findings: Vec<Finding>,
    pub peaks: Vec<(String, u64)>,
}

/// Runs every check on every semaphore of the history.
pub fn check(history: &PermitHistory) -> PermitReport {
    let mut by_name: BTreeMap<&str, Vec<&PermitOp>> = BTreeMap::new();
    for name in &history.names {
        by_name.entry(name).or_default();
    }
    for op in &history.ops {
        by_name.entry(&op.name).or_default().push(op);
    }
    let mut findings = Vec::new();
    let mut peaks = Vec::new();
    tokens_with_two_holders(history, &mut findings);
    for (name, ops) in &by_name {
        let holds = holds(history, ops);
        // Under a lock-delay, a grant that ran out keeps its permits for that long.
        let lock_delay = history.lock_delays.get(*name).copied().unwrap_or(0);
        let peak = if lock_delay > 0 {
            too_many_held(
                name,
                &places(history, ops, lock_delay),
                history.start,
                &mut findings,
            )
        } else {
            too_many_held(name, &holds, history.start, &mut findings)
        };
        peaks.push(((*name).to_owned(), peak));
        too_many_shown(name, ops, &mut findings);
        new_grant_tokens(history, name, ops, &mut findings);
        seen_after_expiry(history, name, ops, &mut findings);
        lost_acknowledgements(name, &holds, ops, &mut findings);
    }
    PermitReport { findings, peaks }
}
