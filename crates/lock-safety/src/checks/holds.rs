//! The intervals in which an acknowledged lease was surely held: from the answer that granted or
//! renewed it until its expiry (less the margin), its owner's next operation that might end it,
//! or a force-release that might have ended it (an admin's, of no owner: the holder is not told).

use super::observations::{may_force_end, op_owner, Seen};
use crate::history::{History, Micros, Op};

/// An interval in which a lease was surely held.
#[derive(Debug, Clone)]
pub(super) struct Hold<'a> {
    pub(super) from: Micros,
    pub(super) until: Micros,
    pub(super) seen: Seen<'a>,
    /// The operation whose invoke cut the hold short, if any.
    pub(super) cut_by: Option<usize>,
}

pub(super) fn holds<'a>(
    history: &History,
    seen: &[Seen<'a>],
    owner_ops: &[&Op],
    forces: &[&Op],
) -> Vec<Hold<'a>> {
    let mut holds = Vec::new();
    for s in seen.iter().filter(|s| s.acknowledged) {
        let mut until = s.lease.expires_at - history.margin_us;
        let mut cut_by = None;
        let forced = forces
            .iter()
            .filter(|force| may_force_end(force, &s.lease.owner, s.lease.token));
        let owners = owner_ops
            .iter()
            .filter(|other| other.id != s.op.id && op_owner(other) == Some(s.lease.owner.as_str()));
        for other in owners.chain(forced) {
            // Anything of the owner's, or a force-release, still able to take effect after this
            // answer's invoke.
            let latest = if other.outcome.is_unknown() {
                other.complete.saturating_add(history.horizon_us)
            } else {
                other.complete
            };
            if latest > s.op.invoke && other.invoke < until {
                until = other.invoke;
                cut_by = Some(other.id);
            }
        }
        if s.op.complete < until {
            holds.push(Hold {
                from: s.op.complete,
                until,
                seen: s.clone(),
                cut_by,
            });
        }
    }
    holds.sort_by_key(|h| h.from);
    holds
}
