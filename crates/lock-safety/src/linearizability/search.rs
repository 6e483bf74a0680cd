//! The search over one partition's entries: depth first, memoized on (placed set, lock state),
//! bounded by a budget of states.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use super::Entry;
use crate::history::Micros;
use crate::model::{step, Call, State, When};

/// A point of the search: which entries are placed, the time so far, the lock's state.
#[derive(Clone, Debug)]
struct Node {
    /// Every entry below it is placed or can no longer be placed.
    frontier: usize,
    /// Placed entries at or above the frontier, ascending.
    placed: Vec<u32>,
    /// The latest invoke among the placed entries: no later entry takes effect before it.
    lo: Micros,
    state: State,
    required_left: usize,
}

struct Search<'a> {
    entries: &'a [Entry],
    margin: Micros,
    lock_delay: Micros,
    /// The grants some undo names; any other grant is recorded as `NO_UNDO`, so that states
    /// that differ only in which definite acquire made the lease are one state.
    undone: HashSet<u32>,
}

const NO_UNDO: u32 = u32::MAX;

impl Search<'_> {
    fn resolved(&self, node: &Node, i: usize) -> bool {
        i < node.frontier
            || node.placed.binary_search(&(i as u32)).is_ok()
            || (self.entries[i].optional && self.entries[i].deadline < node.lo)
    }

    fn advance(&self, node: &mut Node) {
        while node.frontier < self.entries.len() && self.resolved(node, node.frontier) {
            node.frontier += 1;
        }
        let frontier = node.frontier as u32;
        node.placed.retain(|&j| j >= frontier);
    }

    /// Every node one placement further, definite entries first (earliest deadline first).
    fn children(&self, node: &Node) -> Vec<Node> {
        let mut min1 = (Micros::MAX, usize::MAX);
        let mut min2 = Micros::MAX;
        let mut candidates = Vec::new();
        for i in node.frontier..self.entries.len() {
            let entry = &self.entries[i];
            if entry.invoke > min1.0 {
                break;
            }
            if self.resolved(node, i) {
                continue;
            }
            candidates.push(i);
            if !entry.optional {
                if entry.deadline < min1.0 {
                    min2 = min1.0;
                    min1 = (entry.deadline, i);
                } else if entry.deadline < min2 {
                    min2 = entry.deadline;
                }
            }
        }
        candidates.retain(|&i| self.entries[i].invoke <= min1.0);
        // Definite entries first, earliest deadline first: the greedy order that a valid history
        // follows. But when the most urgent definite entry has no explanation in this state, the
        // likeliest one is an unknown operation's effect: try those first then.
        let urgent_stuck = min1.1 != usize::MAX && {
            let entry = &self.entries[min1.1];
            let when = When {
                lo: node.lo.max(entry.invoke),
                hi: entry.deadline.min(min2),
                margin: self.margin,
                lock_delay: self.lock_delay,
                window: (entry.invoke, entry.deadline),
            };
            step(&node.state, entry.call, entry.ret, &when, NO_UNDO).is_empty()
        };
        candidates.sort_by_key(|&i| {
            let optional_first = self.entries[i].optional != urgent_stuck;
            (optional_first, self.entries[i].deadline, i)
        });
        let mut out = Vec::new();
        let mut rank = 0usize;
        for i in candidates {
            let entry = &self.entries[i];
            let others = if i == min1.1 { min2 } else { min1.0 };
            let when = When {
                lo: node.lo.max(entry.invoke),
                hi: entry.deadline.min(others),
                margin: self.margin,
                lock_delay: self.lock_delay,
                window: (entry.invoke, entry.deadline),
            };
            if when.lo > when.hi {
                continue;
            }
            let grant = if self.undone.contains(&(entry.source as u32)) {
                entry.source as u32
            } else {
                NO_UNDO
            };
            for state in step(&node.state, entry.call, entry.ret, &when, grant) {
                if entry.optional && state == node.state {
                    continue;
                }
                let mut placed = node.placed.clone();
                let at = placed.partition_point(|&j| j < i as u32);
                placed.insert(at, i as u32);
                let mut child = Node {
                    frontier: node.frontier,
                    placed,
                    lo: when.lo,
                    state,
                    required_left: node.required_left - usize::from(!entry.optional),
                };
                self.advance(&mut child);
                // An answer that only observes (the state stays as it is) is placed as early as
                // it is true: later the state may change under it (a "held" while another
                // owner's lease still ran, say).
                let observes = !entry.optional && state == node.state;
                out.push(((!observes, rank), child));
            }
            rank += 1;
        }
        out.sort_by_key(|(key, _)| *key);
        out.into_iter().map(|(_, child)| child).collect()
    }
}

fn fingerprint(node: &Node) -> u128 {
    let key = (node.frontier, &node.placed, node.lo, node.state);
    let mut a = DefaultHasher::new();
    key.hash(&mut a);
    let mut b = DefaultHasher::new();
    0x5eed_u64.hash(&mut b);
    key.hash(&mut b);
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// The outcome of one search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Linearizable,
    /// No order: the earliest completion of the definite entries never placed at the deepest
    /// point reached (a prefix of the history up to it already fails).
    NotLinearizable {
        stuck_at: Micros,
    },
    OverBudget,
}

/// Searches one list of entries (sorted by invoke), exploring at most `budget` states.
pub fn search(entries: &[Entry], margin: Micros, lock_delay: Micros, budget: u64) -> (Found, u64) {
    let undone = entries
        .iter()
        .filter_map(|e| match e.call {
            Call::Undo { grant } => Some(grant),
            _ => None,
        })
        .collect();
    let search = Search {
        entries,
        margin,
        lock_delay,
        undone,
    };
    let mut root = Node {
        frontier: 0,
        placed: Vec::new(),
        lo: Micros::MIN,
        state: State::default(),
        required_left: entries.iter().filter(|e| !e.optional).count(),
    };
    search.advance(&mut root);
    if root.required_left == 0 {
        return (Found::Linearizable, 0);
    }
    let mut seen: HashSet<u128> = HashSet::new();
    let mut stack: Vec<Vec<Node>> = Vec::new();
    let mut states = 0u64;
    let mut deepest = (usize::MAX, Micros::MAX);
    let mut note_depth = |node: &Node| {
        if node.required_left < deepest.0 {
            let stuck = entries[node.frontier..]
                .iter()
                .enumerate()
                .filter(|(j, e)| {
                    !e.optional
                        && node
                            .placed
                            .binary_search(&((node.frontier + j) as u32))
                            .is_err()
                })
                .map(|(_, e)| e.deadline)
                .min()
                .unwrap_or(Micros::MAX);
            deepest = (node.required_left, stuck);
            if std::env::var_os("LOCK_SAFETY_DEBUG").is_some() {
                let urgent: Vec<usize> = entries[node.frontier..]
                    .iter()
                    .filter(|e| !e.optional && e.deadline == stuck)
                    .map(|e| e.source)
                    .collect();
                eprintln!(
                    "deepest: left {} frontier {} lo {} urgent {:?} state {:?}",
                    node.required_left, node.frontier, node.lo, urgent, node.state
                );
            }
        }
    };
    note_depth(&root);
    let mut children = search.children(&root);
    children.reverse();
    stack.push(children);
    while let Some(frame) = stack.last_mut() {
        let Some(node) = frame.pop() else {
            stack.pop();
            continue;
        };
        if node.required_left == 0 {
            return (Found::Linearizable, states);
        }
        if !seen.insert(fingerprint(&node)) {
            continue;
        }
        states += 1;
        if states > budget {
            return (Found::OverBudget, states);
        }
        note_depth(&node);
        let mut children = search.children(&node);
        children.reverse();
        stack.push(children);
    }
    (
        Found::NotLinearizable {
            stuck_at: deepest.1,
        },
        states,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Ret;

    const S: Micros = 1_000_000;

    fn entry(call: Call, ret: Ret, invoke: Micros, complete: Micros, source: usize) -> Entry {
        Entry {
            call,
            ret,
            invoke,
            deadline: complete,
            optional: false,
            source,
        }
    }

    #[test]
    fn concurrent_grants_to_two_owners_have_no_order() {
        let acquire = |owner| Call::Acquire {
            owner,
            ttl: 10 * S,
            session: false,
        };
        let granted = |token| Ret::Granted {
            token,
            expires: 10 * S,
        };
        let entries = vec![
            entry(acquire(0), granted(1), 0, S, 0),
            entry(acquire(1), granted(2), 0, S, 1),
        ];
        assert!(matches!(
            search(&entries, 50_000, 0, 1000).0,
            Found::NotLinearizable { .. }
        ));
        // Once the first lease is surely over, the second grant is fine.
        let entries = vec![
            entry(acquire(0), granted(1), 0, S, 0),
            entry(
                acquire(1),
                Ret::Granted {
                    token: 2,
                    expires: 22 * S,
                },
                12 * S,
                12 * S,
                1,
            ),
        ];
        assert_eq!(search(&entries, 50_000, 0, 1000).0, Found::Linearizable);
    }
}
