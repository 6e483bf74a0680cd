//! How every report prints a violation, whatever the primitive: its heading (what it is on, the
//! seed that made the run, the kind's title and the sentence), then the slice of history that
//! shows it: the operations it names, marked `*`, among those whose answers could have
//! interleaved with them, cut to a bound so that the report of a long run stays readable, and
//! saying how many it left out.

use std::fmt::{self, Write as _};

use crate::history::{Micros, Op};
use crate::permits::PermitOp;
use crate::shared::SharedOp;

/// At most this many operations of one history are shown under a violation (the multi-lock
/// report, whose slices mix two histories, keeps its own bound).
pub(crate) const SLICE_LINES: usize = 60;

/// The heading of one violation: `on` names what it is on (a resource, a semaphore, a set).
pub(crate) fn heading(
    out: &mut String,
    on: impl fmt::Display,
    seed: u64,
    title: &str,
    message: &str,
) {
    let _ = writeln!(
        out,
        "\nVIOLATION on {on} (seed {seed}): {title}\n  {message}"
    );
}

/// The lines of a slice, each marked or not, in the order to print; `total` is how many the
/// window held before it was cut.
pub(crate) fn write_lines(
    out: &mut String,
    lines: impl IntoIterator<Item = (bool, String)>,
    total: usize,
) {
    let mut shown = 0;
    for (marked, line) in lines {
        let _ = writeln!(out, "  {} {line}", if marked { '*' } else { ' ' });
        shown += 1;
    }
    if shown < total {
        let _ = writeln!(
            out,
            "    ({} more operations in the window not shown)",
            total - shown
        );
    }
}

/// What a slice needs of an operation: its id (its index in its history) and its instants.
pub(crate) trait Timed {
    fn id(&self) -> usize;
    fn invoke(&self) -> Micros;
    fn complete(&self) -> Micros;
}

/// The instants the marked operations span: from the first invoke to the last completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) from: Micros,
    pub(crate) to: Micros,
}

impl Window {
    /// Whether an operation invoked at `invoke` whose effect may come as late as `latest` could
    /// have interleaved with the window's operations.
    pub(crate) fn meets(self, invoke: Micros, latest: Micros) -> bool {
        invoke <= self.to && latest >= self.from
    }
}

/// Which operations a slice longer than [`SLICE_LINES`] keeps beside the marked ones. The cuts
/// differ only when a window holds more than the bound; each report keeps the cut it has always
/// printed, so that the report of a stored run read again is the one the run printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trim {
    /// Every marked one, then the earliest others up to the bound (the lock history's slices,
    /// under its search's and direct checks' violations and the recorded history's).
    Earliest,
    /// The marked ones first, then those invoked nearest the window's start, the bound counting
    /// the marked ones too (the semaphores' and the shared locks' slices).
    Nearest,
}

/// The slice of `ops` for the violation that names `marked`: those and every operation that
/// `interleaves` with the marked ones' window, at most [`SLICE_LINES`] as `trim` says, in invoke
/// order, each rendered by `describe`.
pub(crate) fn slice<O: Timed>(
    ops: &[O],
    marked: &[usize],
    interleaves: impl Fn(&O, Window) -> bool,
    trim: Trim,
    describe: impl Fn(&O) -> String,
) -> String {
    let named = || marked.iter().map(|&id| &ops[id]);
    let window = Window {
        from: named().map(Timed::invoke).min().unwrap_or(0),
        to: named().map(Timed::complete).max().unwrap_or(0),
    };
    let is_marked = |op: &O| marked.contains(&op.id());
    let in_order = |op: &&O| (op.invoke(), op.id());
    let mut lines: Vec<&O> = ops
        .iter()
        .filter(|op| is_marked(op) || interleaves(op, window))
        .collect();
    let total = lines.len();
    if total > SLICE_LINES {
        match trim {
            Trim::Earliest => {
                lines.sort_by_key(in_order);
                let (mut kept, others): (Vec<&O>, Vec<&O>) =
                    lines.into_iter().partition(|op| is_marked(op));
                let room = SLICE_LINES.saturating_sub(kept.len());
                kept.extend(others.into_iter().take(room));
                lines = kept;
            }
            Trim::Nearest => {
                // A stable sort: among equally near ones, the earlier in the history stay.
                lines.sort_by_key(|op| (!is_marked(op), op.invoke().abs_diff(window.from)));
                lines.truncate(SLICE_LINES);
            }
        }
    }
    lines.sort_by_key(in_order);
    let mut out = String::new();
    write_lines(
        &mut out,
        lines.iter().map(|op| (is_marked(op), describe(op))),
        total,
    );
    out
}

/// The operations of the histories whose slices are cut here: each has its id and instants as
/// fields of these names.
macro_rules! timed {
    ($($op:ty),*) => {$(
        impl Timed for $op {
            fn id(&self) -> usize {
                self.id
            }
            fn invoke(&self) -> Micros {
                self.invoke
            }
            fn complete(&self) -> Micros {
                self.complete
            }
        }
    )*};
}

timed!(Op, PermitOp, SharedOp);

#[cfg(test)]
mod tests;
