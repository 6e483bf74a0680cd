//! The slices pinned down: whole and in invoke order when short, the window spanning the marked
//! operations, each cut keeping the marked ones and counting what it left out, and the heading.

use super::*;

/// An operation of `id` over `[invoke, complete]`.
struct Step(usize, Micros, Micros);

impl Timed for Step {
    fn id(&self) -> usize {
        self.0
    }
    fn invoke(&self) -> Micros {
        self.1
    }
    fn complete(&self) -> Micros {
        self.2
    }
}

fn steps(n: usize) -> Vec<Step> {
    (0..n)
        .map(|i| Step(i, i as Micros * 10, i as Micros * 10 + 5))
        .collect()
}

fn describe(step: &Step) -> String {
    format!("op {}", step.0)
}

#[test]
fn a_short_slice_is_whole_and_in_invoke_order() {
    let ops = vec![Step(0, 30, 40), Step(1, 10, 50), Step(2, 20, 25)];
    let text = slice(&ops, &[2], |_, _| true, Trim::Nearest, describe);
    assert_eq!(text, "    op 1\n  * op 2\n    op 0\n");
}

#[test]
fn the_window_spans_the_marked_operations() {
    let ops = steps(10);
    let text = slice(
        &ops,
        &[3, 5],
        |op, window| {
            assert_eq!(window, Window { from: 30, to: 55 });
            op.invoke() >= window.from && op.invoke() <= window.to
        },
        Trim::Earliest,
        describe,
    );
    assert_eq!(text, "  * op 3\n    op 4\n  * op 5\n");
}

#[test]
fn a_long_slice_keeps_the_marked_and_says_how_many_it_left_out() {
    let ops = steps(100);
    let earliest = slice(&ops, &[90], |_, _| true, Trim::Earliest, describe);
    assert!(earliest.starts_with("    op 0\n"));
    assert!(earliest.contains("  * op 90\n"));
    assert!(!earliest.contains("op 59\n"));
    assert!(earliest.ends_with("    (40 more operations in the window not shown)\n"));
    let nearest = slice(&ops, &[90], |_, _| true, Trim::Nearest, describe);
    assert!(nearest.contains("  * op 90\n") && nearest.contains("    op 40\n"));
    assert!(!nearest.contains("op 39\n"));
    assert!(nearest.ends_with("    (40 more operations in the window not shown)\n"));
}

#[test]
fn a_heading_names_the_seed() {
    let mut out = String::new();
    heading(&mut out, "r0", 7, "two holds overlap", "op #1 and op #2");
    assert_eq!(
        out,
        "\nVIOLATION on r0 (seed 7): two holds overlap\n  op #1 and op #2\n"
    );
}
