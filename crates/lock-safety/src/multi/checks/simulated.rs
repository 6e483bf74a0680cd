//! The checks must not fire on a correct server, and must catch a server that grants a set's
//! locks one at a time: random histories of a simulated lockd (two resources locked exclusively,
//! two in both modes; single acquires, releases and statuses, multi-lock acquires and releases;
//! each operation taking effect at a random instant of its request, some answers lost whether or
//! not the operation ran, several clients sharing an owner) pass, with the per-resource histories
//! they split into; a server that makes a set's first lock visible before deciding the others
//! (then granting them, or undoing the first) is caught, and so is one that keeps the available
//! locks of a refused set.

use std::collections::BTreeMap;

use super::{run, Kind};
use crate::history::{History, Lease, Micros, Op, OpKind, Outcome};
use crate::multi::{split, MultiHistory, MultiOp, MultiOpKind, MultiOutcome, Released};
use crate::shared::{self, Holder, Mode, SharedHistory};

const MS: Micros = 1_000;
const PLAIN: [&str; 2] = ["p0", "p1"];
const BOTH: [&str; 2] = ["s0", "s1"];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// How the simulated server goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// Grants a set's first lock when the set is decided, the others only at the end of the
    /// request, if still available (else it undoes the first and refuses the set).
    OneAtATime,
    /// Refuses a set that some lock of is unavailable, but keeps the others granted.
    KeepsPartial,
}

/// The simulated server: each resource's leases by owner, and the last token drawn.
#[derive(Default)]
struct Server {
    leases: BTreeMap<String, BTreeMap<String, Holder>>,
    token: i64,
}

/// What a single request asks of one resource.
#[derive(Clone, Copy)]
enum Single {
    Acquire(Mode),
    Release,
    Status,
}

impl Server {
    fn live(&mut self, resource: &str, now: Micros) -> &mut BTreeMap<String, Holder> {
        let leases = self.leases.entry(resource.to_owned()).or_default();
        leases.retain(|_, l| l.expires_at > now);
        leases
    }

    /// Whether `owner` may take `resource` in `mode` now: Some(true) for a re-grant.
    fn grantable(&mut self, resource: &str, owner: &str, mode: Mode, now: Micros) -> Option<bool> {
        let leases = self.live(resource, now);
        match leases.get(owner) {
            Some(l) => (l.mode == mode).then_some(true),
            None if mode == Mode::Exclusive => leases.is_empty().then_some(false),
            None => leases
                .values()
                .all(|l| l.mode == Mode::Shared)
                .then_some(false),
        }
    }

    fn grant(&mut self, resource: &str, owner: &str, mode: Mode, ttl: u32, now: Micros) -> Holder {
        let regrant = self.grantable(resource, owner, mode, now) == Some(true);
        let token = if regrant {
            self.live(resource, now)[owner].token
        } else {
            self.token += 1;
            self.token
        };
        let holder = Holder {
            resource: resource.to_owned(),
            owner: owner.to_owned(),
            token,
            mode,
            acquired_at: now,
            expires_at: now + i64::from(ttl) * 1_000_000,
        };
        self.live(resource, now)
            .insert(owner.to_owned(), holder.clone());
        holder
    }

    fn release(&mut self, resource: &str, owner: &str, now: Micros) -> Released {
        let leases = self.live(resource, now);
        match leases.remove(owner) {
            Some(_) => Released::Released,
            None if leases.is_empty() => Released::NotFound,
            None => Released::Forbidden,
        }
    }
}

/// The answer of one planned operation, in the history it goes to (filled in as it runs).
type Answers = (
    Option<Outcome>,
    Option<shared::SharedOutcome>,
    Option<MultiOutcome>,
);

/// One planned operation: a single one on a resource, or a multi-lock one.
enum Planned {
    Single(String, String, Single),
    Multi(MultiOpKind),
}

/// A history of `n` random operations by 8 clients of 5 owners, one invoked every 10 ms on
/// average, against a server with `bug`.
fn simulate(seed: u64, n: usize, bug: Bug) -> (MultiHistory, History, SharedHistory) {
    let mut rng = Rng(seed);
    let mut plans = Vec::new();
    let mut now = 0;
    // Each client does one request at a time (the sets' parts are known by client and invoke).
    let mut free_at = [0; 8];
    for _ in 0..n {
        now += rng.below(20) as Micros * MS;
        let client = rng.below(8) as u32;
        let invoke = now.max(free_at[client as usize]);
        let owner = format!("o{}", client.min(5) / 2 + client.saturating_sub(5));
        let all: Vec<&str> = PLAIN.iter().chain(&BOTH).copied().collect();
        let mode = |rng: &mut Rng, r: &str| {
            if BOTH.contains(&r) && rng.below(2) == 0 {
                Mode::Shared
            } else {
                Mode::Exclusive
            }
        };
        let resource = all[rng.below(4) as usize];
        let plan = match rng.below(20) {
            0..=4 => Planned::Single(
                resource.to_owned(),
                owner,
                Single::Acquire(mode(&mut rng, resource)),
            ),
            5..=6 => Planned::Single(resource.to_owned(), owner, Single::Release),
            7..=13 => Planned::Single(resource.to_owned(), owner, Single::Status),
            choice => {
                let mut pool = all.clone();
                let picked: Vec<&str> = (0..2 + rng.below(2))
                    .map(|_| pool.swap_remove(rng.below(pool.len() as u64) as usize))
                    .collect();
                Planned::Multi(if choice < 18 {
                    MultiOpKind::AcquireAll {
                        owner,
                        ttl_seconds: 1,
                        wait_seconds: 0,
                        locks: picked
                            .iter()
                            .map(|r| ((*r).to_owned(), mode(&mut rng, r)))
                            .collect(),
                    }
                } else {
                    MultiOpKind::ReleaseAll {
                        owner,
                        resources: picked.iter().map(|r| (*r).to_owned()).collect(),
                    }
                })
            }
        };
        // Sets take longer: a one-at-a-time server's sets stay half granted long enough to see.
        let longest = if matches!(plan, Planned::Multi(_)) {
            200
        } else {
            60
        };
        let complete = invoke + (1 + rng.below(longest) as Micros) * MS;
        free_at[client as usize] = complete;
        let lost = rng.below(10) == 0;
        let effect = if lost && rng.below(2) == 0 {
            None
        } else {
            let last = if lost { complete + 500 * MS } else { complete };
            Some(invoke + rng.below((last - invoke) as u64 + 1) as Micros)
        };
        plans.push((client, invoke, complete, lost, effect, plan));
    }
    plans.sort_by_key(|p| p.1);
    // Every effect in time order; a one-at-a-time set also ends at its completion.
    let mut events: Vec<(Micros, usize, bool)> = Vec::new();
    for (i, (_, _, complete, _, effect, plan)) in plans.iter().enumerate() {
        if let Some(at) = effect {
            events.push((*at, i, false));
            if bug == Bug::OneAtATime
                && matches!(plan, Planned::Multi(MultiOpKind::AcquireAll { .. }))
            {
                events.push(((*complete).max(*at), i, true));
            }
        }
    }
    events.sort_unstable();
    let mut server = Server::default();
    let mut outcomes: BTreeMap<usize, Answers> = BTreeMap::new();
    for (at, i, second) in events {
        let plan = &plans[i].5;
        let out = outcomes.entry(i).or_default();
        match plan {
            Planned::Single(resource, owner, single) => {
                let plain = PLAIN.contains(&resource.as_str());
                let live: Vec<Holder> = server.live(resource, at).values().cloned().collect();
                let answer = match *single {
                    Single::Acquire(mode) => match server.grantable(resource, owner, mode, at) {
                        Some(_) => shared::SharedOutcome::Granted(
                            server.grant(resource, owner, mode, 1, at),
                        ),
                        None if live.iter().any(|h| &h.owner == owner) => {
                            shared::SharedOutcome::ModeMismatch
                        }
                        None => shared::SharedOutcome::Held,
                    },
                    Single::Release => match server.release(resource, owner, at) {
                        Released::Released => shared::SharedOutcome::Released,
                        Released::Forbidden => shared::SharedOutcome::Forbidden,
                        Released::NotFound => shared::SharedOutcome::NotFound,
                    },
                    Single::Status => shared::SharedOutcome::Seen(live),
                };
                if plain {
                    out.0 = Some(as_lock_outcome(answer));
                } else {
                    out.1 = Some(answer);
                }
            }
            Planned::Multi(MultiOpKind::AcquireAll {
                owner,
                locks,
                ttl_seconds,
                ..
            }) => {
                if second {
                    // The one-at-a-time server's end: the other locks, if it got that far.
                    if let Some(MultiOutcome::Granted(first)) = &out.2 {
                        let rest_free = locks[1..]
                            .iter()
                            .all(|(r, m)| server.grantable(r, owner, *m, at).is_some());
                        out.2 = Some(if rest_free {
                            let mut all = first.clone();
                            all.extend(
                                locks[1..]
                                    .iter()
                                    .map(|(r, m)| server.grant(r, owner, *m, *ttl_seconds, at)),
                            );
                            MultiOutcome::Granted(all)
                        } else {
                            server.release(&locks[0].0, owner, at);
                            MultiOutcome::Unavailable(vec![locks[1].0.clone()])
                        });
                    }
                    continue;
                }
                let refused: Vec<String> = locks
                    .iter()
                    .filter(|(r, m)| server.grantable(r, owner, *m, at).is_none())
                    .map(|(r, _)| r.clone())
                    .collect();
                let take: Vec<&(String, Mode)> = match (bug, refused.is_empty()) {
                    (_, true) if bug == Bug::OneAtATime => locks.iter().take(1).collect(),
                    (_, true) => locks.iter().collect(),
                    (Bug::KeepsPartial, false) => {
                        locks.iter().filter(|(r, _)| !refused.contains(r)).collect()
                    }
                    _ => Vec::new(),
                };
                let granted: Vec<Holder> = take
                    .iter()
                    .map(|(r, m)| server.grant(r, owner, *m, *ttl_seconds, at))
                    .collect();
                out.2 = Some(if refused.is_empty() {
                    MultiOutcome::Granted(granted)
                } else {
                    MultiOutcome::Unavailable(refused)
                });
            }
            Planned::Multi(MultiOpKind::ReleaseAll { owner, resources }) => {
                let results = resources
                    .iter()
                    .map(|r| (r.clone(), server.release(r, owner, at)))
                    .collect();
                out.2 = Some(MultiOutcome::Results(results));
            }
        }
    }
    let (mut multi, mut locks, mut both) = (
        MultiHistory::new(0, seed),
        History::new(0, seed),
        SharedHistory::new(0, seed),
    );
    locks.resources = PLAIN.iter().map(|r| (*r).to_owned()).collect();
    both.resources = BOTH.iter().map(|r| (*r).to_owned()).collect();
    (multi.horizon_us, locks.horizon_us, both.horizon_us) = (600 * MS, 600 * MS, 600 * MS);
    for (i, (client, invoke, complete, lost, _, plan)) in plans.into_iter().enumerate() {
        let (lock_out, shared_out, multi_out) = outcomes.remove(&i).unwrap_or_default();
        let why = || "lost".to_owned();
        match plan {
            Planned::Single(resource, owner, single) if PLAIN.contains(&resource.as_str()) => {
                let kind = match single {
                    Single::Acquire(_) => OpKind::Acquire {
                        owner,
                        ttl_seconds: 1,
                        wait_seconds: 0,
                    },
                    Single::Release => OpKind::Release { owner },
                    Single::Status => OpKind::Status,
                };
                let outcome = if lost {
                    Outcome::Unknown { why: why() }
                } else {
                    lock_out.expect("ran")
                };
                locks.push(Op {
                    id: 0,
                    client,
                    resource,
                    kind,
                    invoke,
                    complete,
                    outcome,
                });
            }
            Planned::Single(resource, owner, single) => {
                let kind = match single {
                    Single::Acquire(mode) => shared::SharedOpKind::Acquire {
                        owner,
                        ttl_seconds: 1,
                        wait_seconds: 0,
                        mode,
                    },
                    Single::Release => shared::SharedOpKind::Release { owner },
                    Single::Status => shared::SharedOpKind::Status,
                };
                let outcome = if lost {
                    shared::SharedOutcome::Unknown { why: why() }
                } else {
                    shared_out.expect("ran")
                };
                both.push(shared::SharedOp {
                    id: 0,
                    client,
                    resource,
                    kind,
                    invoke,
                    complete,
                    outcome,
                });
            }
            Planned::Multi(kind) => {
                let outcome = if lost {
                    MultiOutcome::Unknown { why: why() }
                } else {
                    multi_out.expect("ran")
                };
                let op = MultiOp {
                    id: 0,
                    client,
                    kind,
                    invoke,
                    complete,
                    outcome,
                };
                let parts = split(&op, &both.resources);
                for op in parts.locks {
                    locks.push(op);
                }
                for op in parts.shared {
                    both.push(op);
                }
                multi.push(op);
            }
        }
    }
    (multi, locks, both)
}

fn as_lock_outcome(answer: shared::SharedOutcome) -> Outcome {
    let lease = |h: Holder| Lease {
        resource: h.resource,
        owner: h.owner,
        token: h.token,
        acquired_at: h.acquired_at,
        expires_at: h.expires_at,
    };
    match answer {
        shared::SharedOutcome::Granted(h) => Outcome::Granted(lease(h)),
        shared::SharedOutcome::Held => Outcome::Held,
        shared::SharedOutcome::Released => Outcome::Released,
        shared::SharedOutcome::Forbidden => Outcome::Forbidden,
        shared::SharedOutcome::NotFound => Outcome::NotFound,
        shared::SharedOutcome::Seen(holders) => {
            Outcome::Seen(holders.into_iter().next().map(lease))
        }
        other => unreachable!("not an answer on a plain resource: {other:?}"),
    }
}

#[test]
fn histories_of_a_correct_server_pass() {
    for seed in 0..150 {
        let (multi, locks, both) = simulate(seed, 300, Bug::None);
        let findings = run(&multi, &locks, &both);
        assert!(
            findings.is_empty(),
            "seed {seed}:{}",
            crate::multi::report::render(&multi, &locks, &both, &findings)
        );
        let report = crate::check(&locks, 200_000);
        assert_eq!(
            (report.violations(), report.unknown()),
            (0, 0),
            "seed {seed}:{}",
            report.render(&locks)
        );
        let found = shared::checks::run(&both);
        assert!(
            found.is_empty(),
            "seed {seed}:{}",
            shared::report::render(&both, &found)
        );
    }
}

/// How many of 20 seeds' histories against a server with `bug` the multi-lock checks find it
/// in, and the kinds of finding.
fn caught(bug: Bug) -> (usize, Vec<Kind>) {
    let mut kinds = Vec::new();
    let mut caught = 0;
    for seed in 0..20 {
        let (multi, locks, both) = simulate(seed, 2_000, bug);
        let findings = run(&multi, &locks, &both);
        caught += usize::from(!findings.is_empty());
        kinds.extend(findings.iter().map(|f| f.kind));
    }
    (caught, kinds)
}

#[test]
fn a_server_granting_one_lock_at_a_time_is_caught() {
    let (caught, kinds) = caught(Bug::OneAtATime);
    assert!(caught >= 15, "caught in {caught} of 20 runs: {kinds:?}");
    assert!(
        kinds.contains(&Kind::HalfGranted) && kinds.contains(&Kind::RefusedLeftLease),
        "{kinds:?}"
    );
}

#[test]
fn a_server_keeping_part_of_a_refused_set_is_caught() {
    let (caught, kinds) = caught(Bug::KeepsPartial);
    assert!(caught >= 15, "caught in {caught} of 20 runs: {kinds:?}");
    assert!(kinds.contains(&Kind::RefusedLeftLease), "{kinds:?}");
}
