//! Shrinking a violation: weakening definite entries while the rest still fails, so that the
//! report shows a small slice of the history that has no explanation.

use std::time::{Duration, Instant};

use super::search::{search, Found};
use super::{Entry, Partition};
use crate::history::Micros;
use crate::model::Call;

/// The definite entries of a slice that still has no explanation, as history op ids.
///
/// The history is cut at the instant the search got stuck (entries still running then become
/// optional). Then, greedily, definite entries are weakened: reads dropped, writes made
/// optional ("may have happened"), first everything that completed more than a growing window
/// before that instant, then runs of entries of halving length, as long as the rest still fails
/// within a small search budget. Weakening only adds explanations, so what remains is a true
/// violation. When the far past cannot be weakened cheaply, the slice is the definite entries of
/// the last two seconds before the stuck instant (earlier answers then also play a part).
pub(super) fn shrink(partition: &Partition, stuck_at: Micros, budget: u64) -> Vec<usize> {
    let started = Instant::now();
    let trial_budget = (budget / 50).max(20_000);
    let fails = |entries: &[Entry]| {
        matches!(
            search(
                entries,
                partition.margin,
                partition.lock_delay,
                trial_budget
            )
            .0,
            Found::NotLinearizable { .. }
        )
    };
    let weaken = |entries: &[Entry], pick: &dyn Fn(usize, &Entry) -> bool| -> Vec<Entry> {
        entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                if e.optional || !pick(i, e) {
                    Some(e.clone())
                } else if e.call == Call::Read {
                    None
                } else {
                    Some(Entry {
                        optional: true,
                        ..e.clone()
                    })
                }
            })
            .collect()
    };
    let mut entries: Vec<Entry> = partition
        .entries
        .iter()
        .filter(|e| e.invoke <= stuck_at)
        .cloned()
        .map(|mut e| {
            if e.deadline > stuck_at {
                e.optional = true;
            }
            e
        })
        .filter(|e| !(e.optional && e.call == Call::Read))
        .collect();
    let recent = |entries: &[Entry]| -> Vec<usize> {
        let from = stuck_at.saturating_sub(2_000_000);
        let mut ids: Vec<usize> = entries
            .iter()
            .filter(|e| !e.optional && e.deadline >= from)
            .map(|e| e.source)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let mut narrowed = false;
    for window_ms in [250, 1_000, 4_000] {
        let cut = stuck_at.saturating_sub(window_ms * 1_000);
        let candidate = weaken(&entries, &|_, e| e.deadline < cut);
        if fails(&candidate) {
            entries = candidate;
            narrowed = true;
            break;
        }
    }
    if !narrowed {
        return recent(&entries);
    }
    let limit = Duration::from_secs(10);
    let mut chunk = entries.len().div_ceil(2).max(1);
    while started.elapsed() < limit {
        let mut start = 0;
        while start < entries.len() && started.elapsed() < limit {
            let end = (start + chunk).min(entries.len());
            if entries[start..end].iter().any(|e| !e.optional) {
                let candidate = weaken(&entries, &|i, _| (start..end).contains(&i));
                if fails(&candidate) {
                    // Indices shift when reads are dropped: go on from the same start.
                    entries = candidate;
                    continue;
                }
            }
            start = end;
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    let mut slice: Vec<usize> = entries
        .iter()
        .filter(|e| !e.optional)
        .map(|e| e.source)
        .collect();
    slice.sort_unstable();
    slice.dedup();
    slice
}
