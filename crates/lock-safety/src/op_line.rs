//! What every history's one-line rendering of an operation starts with (in `history.txt` and its
//! siblings, and in the slices under a violation): its id, its client, and the instants of its
//! invoke and completion in seconds from the start of the run, so that lines of the different
//! histories of one run line up and compare.

use std::fmt;

use crate::micros::Micros;

/// An instant in seconds from `start`, to the millisecond: `1.250s`.
pub(crate) fn seconds(at: Micros, start: Micros) -> String {
    format!("{:.3}s", (at - start) as f64 / 1e6)
}

/// Writes `#id client c [invoke .. complete] ` (what the operation is follows).
pub(crate) fn write_start(
    f: &mut fmt::Formatter<'_>,
    (id, client): (usize, u32),
    (invoke, complete): (Micros, Micros),
    start: Micros,
) -> fmt::Result {
    write!(
        f,
        "#{:<6} client {:<3} [{} .. {}] ",
        id,
        client,
        seconds(invoke, start),
        seconds(complete, start)
    )
}
