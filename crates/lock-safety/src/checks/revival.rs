//! A lease seen live after an answer proved it over.

use std::collections::HashMap;

use super::observations::{Ended, Seen};
use super::{Finding, Kind};
use crate::history::{Micros, Op};

pub(super) fn revivals(
    resource: &str,
    seen: &[Seen<'_>],
    ended: &[(&Op, Ended<'_>)],
    findings: &mut Vec<Finding>,
) {
    // For each token: its owner and the first completion of an answer that showed it.
    let mut first: HashMap<i64, (&str, Micros, usize)> = HashMap::new();
    for s in seen {
        let entry = first
            .entry(s.lease.token)
            .or_insert((&s.lease.owner, s.op.complete, s.op.id));
        if s.op.complete < entry.1 {
            *entry = (&s.lease.owner, s.op.complete, s.op.id);
        }
    }
    // The earliest completion of an answer, invoked after the token was surely granted, that
    // proved it not live.
    let mut over: HashMap<i64, (Micros, usize)> = HashMap::new();
    for (&token, &(owner, shown, _)) in &first {
        for (op, what) in ended {
            if op.invoke <= shown {
                continue;
            }
            let ends = match what {
                // The forced token ended then too, and nothing else was live.
                Ended::Everything | Ended::Forced(_) => true,
                Ended::AllBut(live) => *live != token,
                Ended::OwnerOf(o) => *o == owner,
            };
            if ends && over.get(&token).is_none_or(|&(at, _)| op.complete < at) {
                over.insert(token, (op.complete, op.id));
            }
        }
    }
    let mut reported = 0;
    for s in seen {
        if let Some(&(at, ender)) = over.get(&s.lease.token) {
            if s.op.invoke > at && reported < 5 {
                let (_, _, shown_by) = first[&s.lease.token];
                findings.push(Finding {
                    kind: Kind::Revived,
                    resource: resource.to_owned(),
                    message: format!(
                        "token {} ({}), shown by op #{}, was proved not live by op #{}, yet op #{} (invoked after) showed it live",
                        s.lease.token, s.lease.owner, shown_by, ender, s.op.id
                    ),
                    ops: vec![shown_by, ender, s.op.id],
                });
                reported += 1;
            }
        }
    }
}
