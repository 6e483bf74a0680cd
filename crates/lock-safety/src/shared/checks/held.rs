//! The intervals in which an acknowledged lease was surely held: from the completion of the
//! answer that granted or renewed it until the earlier of its `expires_at` (less the margin) and
//! the invoke of its owner's next operation on the resource that might end, shorten or restart
//! it (as the lock's holds, `checks/holds.rs`, and the semaphores', `permits/checks/held.rs`).

use std::collections::HashMap;

use super::Lease;
use crate::history::Micros;
use crate::shared::{Holder, Mode, SharedHistory, SharedOp, SharedOutcome};

/// An interval `[from, until)` in which a lease was surely held.
#[derive(Debug, Clone)]
pub(super) struct Hold<'a> {
    pub(super) from: Micros,
    pub(super) until: Micros,
    /// The answer (a grant or a renewal) that acknowledged it.
    pub(super) op: &'a SharedOp,
    pub(super) holder: &'a Holder,
    /// The operation whose invoke cut the hold short, if any.
    pub(super) cut_by: Option<usize>,
}

impl Hold<'_> {
    /// The lease it belongs to: a grant, its re-grants and its renewals are one lease.
    pub(super) fn lease(&self) -> Lease<'_> {
        (&self.holder.owner, self.holder.token)
    }

    pub(super) fn is_exclusive(&self) -> bool {
        self.holder.mode == Mode::Exclusive
    }

    /// The lease, its mode and how the hold is known, in words.
    pub(super) fn describe(&self) -> String {
        format!(
            "{} {} (token {}) surely held from op #{}'s answer until {}",
            self.holder.owner,
            self.holder.mode.as_str(),
            self.holder.token,
            self.op.id,
            self.cut_by
                .map_or("its expiry".to_owned(), |id| format!("op #{id}"))
        )
    }
}

/// The holds on one resource, `ops` being its operations, sorted by `from`.
pub(super) fn holds<'a>(history: &SharedHistory, ops: &[&'a SharedOp]) -> Vec<Hold<'a>> {
    let mut of_owner: HashMap<&str, Vec<&SharedOp>> = HashMap::new();
    for &op in ops {
        if let (Some(owner), true) = (op.kind.owner(), op.may_change_its_owners_lease()) {
            of_owner.entry(owner).or_default().push(op);
        }
    }
    let mut holds = Vec::new();
    for &op in ops {
        let holder = match &op.outcome {
            SharedOutcome::Granted(holder) | SharedOutcome::Renewed(holder) => holder,
            _ => continue,
        };
        let mut until = holder.expires_at - history.margin_us;
        let mut cut_by = None;
        // The lease's owner, and the answer's if it were another.
        let mut owners = vec![holder.owner.as_str()];
        owners.extend(op.kind.owner().filter(|o| *o != holder.owner));
        for &other in owners.iter().filter_map(|o| of_owner.get(o)).flatten() {
            // Anything of the owner's still able to take effect after this answer's invoke.
            if other.id != op.id
                && other.latest_effect(history.horizon_us) > op.invoke
                && other.invoke < until
            {
                until = other.invoke;
                cut_by = Some(other.id);
            }
        }
        if op.complete < until {
            holds.push(Hold {
                from: op.complete,
                until,
                op,
                holder,
                cut_by,
            });
        }
    }
    holds.sort_by_key(|h| (h.from, h.op.id));
    holds
}
