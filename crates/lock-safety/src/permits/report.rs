//! Renders the semaphore findings: each with its kind, the seed, its sentence and the slice of
//! history that shows it.

use super::checks::Finding;
use super::{PermitHistory, PermitOp};
use crate::violation::{self, Trim, Window};

/// Every finding with its slice of history: the operations it names and those on the semaphore
/// whose answers could have interleaved with them (an unknown one up to the horizon after its
/// completion), the nearest ones if there are too many.
pub fn render(history: &PermitHistory, findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        violation::heading(
            &mut out,
            format_args!("semaphore {}", finding.name),
            history.seed,
            finding.kind.title(),
            &finding.message,
        );
        let interleaves = |op: &PermitOp, window: Window| {
            op.name == finding.name && window.meets(op.invoke, op.latest_effect(history.horizon_us))
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
