//! The hand-kept sections of a report: everything from the first `## ` heading that the
//! generator does not write (notes on an issue's before-and-after runs, a workload measured on
//! its own), kept at the end when the report is written again.

/// The tail of `old` (the report as it is on disk) from its first level-2 heading that
/// `generated` does not have; `None` when there is none.
pub(super) fn hand_kept<'a>(old: &'a str, generated: &str) -> Option<&'a str> {
    let generated_headings: Vec<&str> = generated
        .lines()
        .filter(|line| line.starts_with("## "))
        .collect();
    let mut offset = 0;
    for line in old.split_inclusive('\n') {
        let heading = line.trim_end();
        if heading.starts_with("## ") && !generated_headings.contains(&heading) {
            return Some(&old[offset..]);
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated sections are replaced; what follows the first other `## ` section stays,
    /// in its order, generated-looking headings after it included.
    #[test]
    fn sections_the_generator_does_not_write_are_kept() {
        let generated = "# Benchmarks\n\n### W1\n\n| new |\n\n## How to read this\n\nnew notes\n";
        let old = "# Benchmarks\n\n### W1\n\n| old |\n\n## How to read this\n\nold notes\n\n\
                   ## Issue #11\n\nkept\n\n## How to read this\n\n## W7\n\nkept too\n";
        assert_eq!(
            hand_kept(old, generated),
            Some("## Issue #11\n\nkept\n\n## How to read this\n\n## W7\n\nkept too\n")
        );
        assert_eq!(hand_kept(generated, generated), None);
        assert_eq!(hand_kept("", generated), None);
    }
}
