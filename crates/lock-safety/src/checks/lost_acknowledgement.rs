//! A read, made while an acknowledged lease was surely held, that did not show it.

use super::holds::Hold;
use super::observations::Ended;
use super::{Finding, Kind};
use crate::history::Op;

pub(super) fn lost_acknowledgements(
    resource: &str,
    holds: &[Hold<'_>],
    ended: &[(&Op, Ended<'_>)],
    findings: &mut Vec<Finding>,
) {
    let mut reported = 0;
    for hold in holds {
        for (op, what) in ended {
            if op.invoke <= hold.from || op.complete >= hold.until {
                continue;
            }
            let misses = match what {
                Ended::Everything => true,
                // A force-release that ended the hold's own lease cut the hold at its invoke.
                Ended::AllBut(live) | Ended::Forced(live) => *live != hold.seen.lease.token,
                // A 403 or a refusal of the holder itself, or a 204 of someone else.
                Ended::OwnerOf(owner) => *owner == hold.seen.lease.owner,
            };
            if misses && reported < 5 {
                findings.push(Finding {
                    kind: Kind::LostAcknowledgement,
                    resource: resource.to_owned(),
                    message: format!(
                        "{} (token {}) was surely held from op #{}'s answer until {}, but op #{} in between did not see it",
                        hold.seen.lease.owner,
                        hold.seen.lease.token,
                        hold.seen.op.id,
                        hold.cut_by.map_or("its expiry".to_owned(), |id| format!("op #{id}")),
                        op.id
                    ),
                    ops: vec![hold.seen.op.id, op.id],
                });
                reported += 1;
            }
        }
    }
}
