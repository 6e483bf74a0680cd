//! The linearizability search: is there one order of each resource's operations, each placed at an
//! instant between its invoke and its completion, in which the model explains every answer?
//!
//! This is Wing and Gong's search as Porcupine and Knossos run it, per resource (a lock's
//! operations touch one resource, so the resources can be checked apart): depth first, taking
//! next any operation invoked before the earliest completion among the definite operations not
//! yet placed, and remembering every (placed set, lock state) pair already explored. An operation
//! with an unknown outcome is optional: it may be placed anywhere from its invoke to its
//! completion plus the history's horizon, or never; it is only placed where it changes the state
//! (placing a no-op can only narrow what follows). The effort is bounded: a partition whose
//! search exceeds its budget is reported as unknown, neither a pass nor a violation.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use crate::history::{History, Micros, Op, OpKind, Outcome};
use crate::model::{step, Call, OwnerId, Ret, State, When};

/// One operation of a partition.
#[derive(Debug, Clone)]
pub struct Entry {
    pub call: Call,
    pub ret: Ret,
    pub invoke: Micros,
    /// The latest instant it may take effect at: its completion, or later for an optional one.
    pub deadline: Micros,
    /// Whether it may also never take effect.
    pub optional: bool,
    /// The history's operation it comes from.
    pub source: usize,
}

/// One resource's operations, ordered by invoke.
#[derive(Debug, Clone)]
pub struct Partition {
    pub resource: String,
    pub entries: Vec<Entry>,
    pub margin: Micros,
}

/// How one partition's search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    /// No order explains the answers; the operations shown are a smallest slice found that still
    /// has no explanation.
    Violation {
        slice: Vec<usize>,
    },
    /// The search exceeded its budget.
    Unknown,
}

/// The result for one resource.
#[derive(Debug, Clone)]
pub struct PartitionResult {
    pub resource: String,
    pub entries: usize,
    pub states: u64,
    pub verdict: Verdict,
}

/// Splits a history into one partition per resource. Reads with an unknown outcome and definite
/// failures change nothing and are left out; a listing becomes one read per resource; an acquire
/// with an unknown outcome also brings the optional undo of its grant by lockd.
pub fn partitions(history: &History) -> Vec<Partition> {
    let mut by_resource: Vec<Partition> = history
        .resources
        .iter()
        .map(|r| Partition {
            resource: r.clone(),
            entries: Vec::new(),
            margin: history.margin_us,
        })
        .collect();
    let mut owners: Vec<HashMap<String, OwnerId>> = vec![HashMap::new(); by_resource.len()];
    let index: HashMap<&str, usize> = history
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i))
        .collect();
    let mut owner_id = |p: usize, owner: &str| -> OwnerId {
        let table = &mut owners[p];
        let next = table.len() as OwnerId;
        *table.entry(owner.to_owned()).or_insert(next)
    };
    for op in &history.ops {
        if let OpKind::List = op.kind {
            if let Outcome::Listed(leases) = &op.outcome {
                for (p, resource) in history.resources.iter().enumerate() {
                    let seen = leases
                        .iter()
                        .find(|l| &l.resource == resource)
                        .map(|l| (owner_id(p, &l.owner), l.token, l.expires_at));
                    by_resource[p]
                        .entries
                        .push(required(op, Call::Read, Ret::Seen(seen)));
                }
            }
            continue;
        }
        let Some(&p) = index.get(op.resource.as_str()) else {
            continue;
        };
        let call = match &op.kind {
            OpKind::Acquire {
                owner, ttl_seconds, ..
            } => Call::Acquire {
                owner: owner_id(p, owner),
                ttl: i64::from(*ttl_seconds) * 1_000_000,
            },
            OpKind::Release { owner } => Call::Release {
                owner: owner_id(p, owner),
            },
            OpKind::Renew { owner, ttl_seconds } => Call::Renew {
                owner: owner_id(p, owner),
                ttl: i64::from(*ttl_seconds) * 1_000_000,
            },
            OpKind::Status => Call::Read,
            OpKind::List => unreachable!(),
        };
        let ret = match &op.outcome {
            Outcome::Granted(l) => Ret::Granted {
                token: l.token,
                expires: l.expires_at,
            },
            Outcome::Held => Ret::Held,
            Outcome::Released => Ret::Released,
            Outcome::Renewed(l) => Ret::Renewed {
                token: l.token,
                expires: l.expires_at,
            },
            Outcome::Seen(seen) => Ret::Seen(
                seen.as_ref()
                    .map(|l| (owner_id(p, &l.owner), l.token, l.expires_at)),
            ),
            Outcome::Listed(_) => continue,
            Outcome::Forbidden => Ret::Forbidden,
            Outcome::NotFound => Ret::NotFound,
            Outcome::Failed { .. } => continue,
            Outcome::Unknown { .. } => Ret::Unknown,
        };
        let entries = &mut by_resource[p].entries;
        if ret == Ret::Unknown {
            if call == Call::Read {
                continue;
            }
            let deadline = op.complete.saturating_add(history.horizon_us);
            entries.push(Entry {
                call,
                ret,
                invoke: op.invoke,
                deadline,
                optional: true,
                source: op.id,
            });
            if let Call::Acquire { .. } = call {
                entries.push(Entry {
                    call: Call::Undo {
                        grant: op.id as u32,
                    },
                    ret,
                    invoke: op.invoke,
                    deadline,
                    optional: true,
                    source: op.id,
                });
            }
        } else {
            entries.push(required(op, call, ret));
        }
    }
    for partition in &mut by_resource {
        partition.entries.sort_by_key(|e| (e.invoke, e.source));
    }
    by_resource
}

fn required(op: &Op, call: Call, ret: Ret) -> Entry {
    Entry {
        call,
        ret,
        invoke: op.invoke,
        deadline: op.complete,
        optional: false,
        source: op.id,
    }
}

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
pub fn search(entries: &[Entry], margin: Micros, budget: u64) -> (Found, u64) {
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

/// Checks one partition; on a violation, shrinks it to a small slice that still fails.
pub fn check_partition(partition: &Partition, budget: u64) -> PartitionResult {
    let (found, states) = search(&partition.entries, partition.margin, budget);
    let verdict = match found {
        Found::Linearizable => Verdict::Linearizable,
        Found::OverBudget => Verdict::Unknown,
        Found::NotLinearizable { stuck_at } => Verdict::Violation {
            slice: shrink(partition, stuck_at, budget),
        },
    };
    PartitionResult {
        resource: partition.resource.clone(),
        entries: partition.entries.len(),
        states,
        verdict,
    }
}

/// The definite entries of a slice that still has no explanation, as history op ids.
///
/// The history is cut at the instant the search got stuck (entries still running then become
/// optional). Then, greedily, definite entries are weakened: reads dropped, writes made
/// optional ("may have happened"), first everything that completed more than a growing window
/// before that instant, then runs of entries of halving length, as long as the rest still fails
/// within a small search budget. Weakening only adds explanations, so what remains is a true
/// violation. When the far past cannot be weakened cheaply, the slice is the definite entries of
/// the last two seconds before the stuck instant (earlier answers then also play a part).
fn shrink(partition: &Partition, stuck_at: Micros, budget: u64) -> Vec<usize> {
    let started = Instant::now();
    let trial_budget = (budget / 50).max(20_000);
    let fails = |entries: &[Entry]| {
        matches!(
            search(entries, partition.margin, trial_budget).0,
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let acquire = |owner| Call::Acquire { owner, ttl: 10 * S };
        let granted = |token| Ret::Granted {
            token,
            expires: 10 * S,
        };
        let entries = vec![
            entry(acquire(0), granted(1), 0, S, 0),
            entry(acquire(1), granted(2), 0, S, 1),
        ];
        assert!(matches!(
            search(&entries, 50_000, 1000).0,
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
        assert_eq!(search(&entries, 50_000, 1000).0, Found::Linearizable);
    }
}
