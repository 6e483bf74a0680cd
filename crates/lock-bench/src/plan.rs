//! How long and how often each measurement runs, and which rows of the table the command line
//! selects (`--quick`, `--only`, `--workloads`).

use std::time::Duration;

use crate::table::{Row, Workload};

/// How long and how often each measurement runs.
pub struct Plan {
    pub duration: Duration,
    pub warmup: Duration,
    pub runs: usize,
    pub clients: usize,
}

impl Plan {
    pub fn describe(&self) -> String {
        format!(
            "{} clients, {} run(s) of {} s after a {} s warm-up",
            self.clients,
            self.runs,
            self.duration.as_secs(),
            self.warmup.as_secs()
        )
    }
}

/// The rows and workloads the command line asks for.
pub struct Selection {
    /// `--quick`: only the rows marked quick, and of those only W1 and W2.
    pub quick: bool,
    /// `--only`: systems whose name contains this text.
    pub only: Option<String>,
    /// `--workloads`: workloads whose label is one of these or starts with one and a space
    /// (`W3` covers both scale points, `W1` is not `W1S`); every workload when empty.
    pub workloads: Vec<String>,
}

impl Selection {
    /// The workloads of `row` to measure; empty when the row is not selected at all.
    pub fn workloads(&self, row: &Row) -> Vec<Workload> {
        let system_wanted = (row.in_quick || !self.quick)
            && self
                .only
                .as_deref()
                .is_none_or(|only| row.name.contains(only));
        if !system_wanted {
            return Vec::new();
        }
        row.workloads
            .iter()
            .copied()
            .filter(|w| !self.quick || w.in_quick())
            .filter(|w| {
                let label = w.label();
                self.workloads.is_empty() || self.workloads.iter().any(|want| names(want, &label))
            })
            .collect()
    }
}

/// Whether `--workloads`' `want` names the workload labelled `label`: the label itself, or its
/// first word (`W3` names `W3 (1k live)`; `W1` does not name `W1S`).
fn names(want: &str, label: &str) -> bool {
    label
        .strip_prefix(want)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::TABLE;

    fn selected(quick: bool, only: Option<&str>, workloads: &[&str]) -> Vec<(String, String)> {
        let selection = Selection {
            quick,
            only: only.map(str::to_owned),
            workloads: workloads.iter().map(|w| (*w).to_owned()).collect(),
        };
        TABLE
            .iter()
            .flat_map(|row| {
                selection
                    .workloads(row)
                    .into_iter()
                    .map(|w| (row.name.to_owned(), w.label()))
            })
            .collect()
    }

    /// `--only` matches part of a system's name, `--workloads` the start of a workload's label
    /// (`W3` both scale points), and `--quick` narrows both to its rows and to W1 and W2.
    #[test]
    fn only_and_workloads_narrow_the_table() {
        let postgres_w3 = selected(false, Some("PostgreSQL"), &["W3"]);
        assert_eq!(
            postgres_w3,
            [
                ("lockd (PostgreSQL)".to_owned(), "W3 (1k live)".to_owned()),
                ("lockd (PostgreSQL)".to_owned(), "W3 (1M live)".to_owned()),
            ]
        );
        assert!(selected(true, None, &["W3", "W4", "W5"]).is_empty());
        let redis_quick = selected(true, Some("Redis"), &[]);
        assert_eq!(
            redis_quick,
            [
                ("Redis (no persistence)".to_owned(), "W1".to_owned()),
                ("Redis (no persistence)".to_owned(), "W2".to_owned()),
            ]
        );
        let handoffs = selected(false, None, &["W5"]);
        assert_eq!(handoffs.len(), 4, "{handoffs:?}");
    }

    /// `W1` is W1 alone, `W1S` and `W8` the sessions' comparisons, on lockd's two backends.
    #[test]
    fn a_label_is_named_whole_or_by_its_first_word() {
        assert!(names("W3", "W3 (1k live)"));
        assert!(names("W3 (1k live)", "W3 (1k live)"));
        assert!(names("W1", "W1"));
        assert!(!names("W1", "W1S"));
        assert!(!names("W3 (1", "W3 (1k live)"));
        let w1 = selected(false, Some("lockd (SQLite)"), &["W1"]);
        assert!(w1.iter().all(|(_, w)| w == "W1"), "{w1:?}");
        assert_eq!(
            selected(false, None, &["W8", "W1S"]),
            [
                ("lockd (SQLite)".to_owned(), "W8".to_owned()),
                ("lockd (SQLite)".to_owned(), "W1S".to_owned()),
                ("lockd (PostgreSQL)".to_owned(), "W8".to_owned()),
                ("lockd (PostgreSQL)".to_owned(), "W1S".to_owned()),
            ]
        );
    }
}
