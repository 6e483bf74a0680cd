//! A status, made while an acknowledged grant was surely held, that did not show it: a status
//! shows the live holders of one instant during the request.

use super::held::Hold;
use super::{Finding, Kind, REPORTED};
use crate::permits::{PermitOp, PermitOutcome};

pub(super) fn lost_acknowledgements(
    name: &str,
    holds: &[Hold<'_>],
    ops: &[&PermitOp],
    findings: &mut Vec<Finding>,
) {
    let mut reported = 0;
    for op in ops {
        let PermitOutcome::Seen(holders) = &op.outcome else {
            continue;
        };
        for hold in holds {
            if op.invoke <= hold.from || op.complete >= hold.until {
                continue;
            }
            let (owner, token) = hold.grant();
            let shown = holders.iter().any(|l| l.owner == owner && l.token == token);
            if !shown && reported < REPORTED {
                findings.push(Finding {
                    kind: Kind::LostAcknowledgement,
                    name: name.to_owned(),
                    message: format!(
                        "{owner} x{} (token {token}) was surely held from op #{}'s answer until {}, but op #{} in between did not show it",
                        hold.lease.permits,
                        hold.op.id,
                        hold.end(),
                        op.id
                    ),
                    ops: vec![hold.op.id, op.id],
                });
                reported += 1;
            }
        }
    }
}
