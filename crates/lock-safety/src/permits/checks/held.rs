//! The intervals in which an acknowledged grant was surely held: from the completion of the
//! answer that granted or renewed it until the earlier of its `expires_at` (less the margin) and
//! the invoke of its owner's next operation on the semaphore that might end, shorten or restart
//! it (as the lock's holds, `checks/holds.rs`).

use crate::history::Micros;
use crate::permits::{PermitHistory, PermitLease, PermitOp, PermitOutcome};

/// An interval `[from, until)` in which a grant was surely held.
#[derive(Debug, Clone)]
pub(super) struct Hold<'a> {
    pub(super) from: Micros,
    pub(super) until: Micros,
    /// The answer (a grant or a renewal) that acknowledged it.
    pub(super) op: &'a PermitOp,
    pub(super) lease: &'a PermitLease,
    /// The operation whose invoke cut the hold short, if any.
    pub(super) cut_by: Option<usize>,
}

impl Hold<'_> {
    /// The grant it belongs to: a grant and its renewals are one grant, counted once.
    pub(super) fn grant(&self) -> (&str, i64) {
        (&self.lease.owner, self.lease.token)
    }

    /// Until when, in words.
    pub(super) fn end(&self) -> String {
        self.cut_by
            .map_or("its expiry".to_owned(), |id| format!("op #{id}"))
    }
}

/// The holds on one semaphore, `ops` being its operations, sorted by `from`.
pub(super) fn holds<'a>(history: &PermitHistory, ops: &[&'a PermitOp]) -> Vec<Hold<'a>> {
    holds_for(history, ops, 0)
}

/// The places on one semaphore: the holds, each kept past its expiry for the semaphore's
/// `lock_delay` (a grant that ran out keeps its permits from other owners that long), unless its
/// owner's own next operation comes first (a release ends the delay; a new acquire of its own
/// replaces the grant). For the limit check only: a status does not show a grant in its delay.
pub(super) fn places<'a>(
    history: &PermitHistory,
    ops: &[&'a PermitOp],
    lock_delay: Micros,
) -> Vec<Hold<'a>> {
    holds_for(history, ops, lock_delay)
}

fn holds_for<'a>(
    history: &PermitHistory,
    ops: &[&'a PermitOp],
    lock_delay: Micros,
) -> Vec<Hold<'a>> {
    let mut holds = Vec::new();
    for &op in ops {
        let lease = match &op.outcome {
            PermitOutcome::Granted(lease) | PermitOutcome::Renewed(lease) => lease,
            _ => continue,
        };
        let mut until = lease.expires_at + lock_delay - history.margin_us;
        let mut cut_by = None;
        for &other in ops {
            let owner = other.kind.owner();
            if other.id == op.id
                || !other.may_change_its_owners_grant()
                || (owner != Some(lease.owner.as_str()) && owner != op.kind.owner())
            {
                continue;
            }
            // Anything of the owner's still able to take effect after this answer's invoke.
            if other.latest_effect(history.horizon_us) > op.invoke && other.invoke < until {
                until = other.invoke;
                cut_by = Some(other.id);
            }
        }
        if op.complete < until {
            holds.push(Hold {
                from: op.complete,
                until,
                op,
                lease,
                cut_by,
            });
        }
    }
    holds.sort_by_key(|h| (h.from, h.op.id));
    holds
}
