//! Renders the shared-lock findings: each with its kind, the seed, its sentence and the slice of
//! history that shows it.

use super::checks::Finding;
use super::{SharedHistory, SharedOp};
use crate::violation::{self, Trim, Window};

/// Every finding with its slice of history: the operations it names and those on the resource
/// whose answers could have interleaved with them (an unknown one up to the horizon after its
/// completion), the nearest ones if there are too many.
pub fn render(history: &SharedHistory, findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        violation::heading(
            &mut out,
            &finding.resource,
            history.seed,
            finding.kind.title(),
            &finding.message,
        );
        let interleaves = |op: &SharedOp, window: Window| {
            op.resource == finding.resource
                && window.meets(op.invoke, op.latest_effect(history.horizon_us))
        };
        out.push_str(&violation::slice(
            &history.ops,
            &finding.ops,
            interleaves,
            Trim::Nearest,
            |op| history.describe(op),
        ));
    }
    out
}
