//! Two acknowledged holds of different leases that overlap in time.

use super::holds::Hold;
use super::{Finding, Kind};

pub(super) fn double_grants(resource: &str, holds: &[Hold<'_>], findings: &mut Vec<Finding>) {
    for (i, a) in holds.iter().enumerate() {
        for b in &holds[i + 1..] {
            if b.from >= a.until {
                continue;
            }
            let same = a.seen.lease.owner == b.seen.lease.owner
                && a.seen.lease.token == b.seen.lease.token;
            if !same && a.from < b.until {
                findings.push(Finding {
                    kind: Kind::DoubleGrant,
                    resource: resource.to_owned(),
                    message: format!(
                        "{} (token {}) was surely held from op #{}'s answer until {}, and {} (token {}) from op #{}'s answer: both at once",
                        a.seen.lease.owner,
                        a.seen.lease.token,
                        a.seen.op.id,
                        a.cut_by.map_or("its expiry".to_owned(), |id| format!("op #{id}")),
                        b.seen.lease.owner,
                        b.seen.lease.token,
                        b.seen.op.id,
                    ),
                    ops: vec![a.seen.op.id, b.seen.op.id],
                });
            }
        }
    }
}
