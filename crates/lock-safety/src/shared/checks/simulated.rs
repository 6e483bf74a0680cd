//! The checks must not fire on a correct server: random histories of a simulated shared lock
//! (each operation taking effect at a random instant of its request, some answers lost while the
//! operation still took effect or not, several clients sharing an owner) pass, seed after seed,
//! busy (leases mostly released) or quiet (leases mostly expiring); and the same simulation with
//! a server that lets a writer in beside readers, gives readers one token, or shows ended leases
//! in its status is caught.

use std::collections::BTreeMap;

use super::{run, Kind};
use crate::history::Micros;
use crate::shared::{Holder, Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};

const MS: Micros = 1_000;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Bug {
    #[default]
    None,
    /// Grants a writer even beside readers.
    WriterInBesideReaders,
    /// Draws no new token for a reader while the resource has one already.
    OneTokenForReaders,
    /// Its status also shows the readers whose leases ended in the last 300 ms.
    StaleStatus,
}

/// The simulated server: the leases of one resource by owner, the last token drawn, and the
/// leases that ended, newest last.
#[derive(Default)]
struct Server {
    leases: BTreeMap<String, Holder>,
    token: i64,
    ended: Vec<(Micros, Holder)>,
    bug: Bug,
}

impl Server {
    fn apply(&mut self, kind: &SharedOpKind, now: Micros) -> SharedOutcome {
        let ended = &mut self.ended;
        self.leases.retain(|_, l| {
            if l.expires_at <= now {
                ended.push((l.expires_at, l.clone()));
            }
            l.expires_at > now
        });
        match kind {
            SharedOpKind::Acquire {
                owner,
                ttl_seconds,
                mode,
                ..
            } => {
                let ttl = i64::from(*ttl_seconds) * 1_000_000;
                if let Some(lease) = self.leases.get_mut(owner) {
                    if lease.mode != *mode {
                        return SharedOutcome::ModeMismatch;
                    }
                    lease.acquired_at = now;
                    lease.expires_at = now + ttl;
                    return SharedOutcome::Granted(lease.clone());
                }
                let writer = self.leases.values().any(|l| l.mode == Mode::Exclusive);
                let blocked = match mode {
                    Mode::Exclusive => {
                        !self.leases.is_empty() && self.bug != Bug::WriterInBesideReaders
                    }
                    Mode::Shared => writer,
                };
                if blocked {
                    return SharedOutcome::Held;
                }
                if self.bug != Bug::OneTokenForReaders
                    || *mode == Mode::Exclusive
                    || self.leases.is_empty()
                {
                    self.token += 1;
                }
                let lease = Holder {
                    resource: "r".to_owned(),
                    owner: owner.clone(),
                    token: self.token,
                    mode: *mode,
                    acquired_at: now,
                    expires_at: now + ttl,
                };
                self.leases.insert(owner.clone(), lease.clone());
                SharedOutcome::Granted(lease)
            }
            SharedOpKind::Release { owner } => match self.leases.remove(owner) {
                Some(lease) => {
                    self.ended.push((now, lease));
                    SharedOutcome::Released
                }
                None if self.leases.is_empty() => SharedOutcome::NotFound,
                None => SharedOutcome::Forbidden,
            },
            SharedOpKind::Renew { owner, ttl_seconds } => {
                let nobody = self.leases.is_empty();
                match self.leases.get_mut(owner) {
                    Some(lease) => {
                        lease.expires_at = now + i64::from(*ttl_seconds) * 1_000_000;
                        SharedOutcome::Renewed(lease.clone())
                    }
                    None if nobody => SharedOutcome::NotFound,
                    None => SharedOutcome::Forbidden,
                }
            }
            SharedOpKind::Status => {
                let mut holders: Vec<Holder> = self.leases.values().cloned().collect();
                let readers = holders.iter().all(|h| h.mode == Mode::Shared);
                if self.bug == Bug::StaleStatus && readers {
                    for (at, lease) in self.ended.iter().rev() {
                        if *at <= now - 300 * MS {
                            break;
                        }
                        let owner_shown = holders.iter().any(|h| h.owner == lease.owner);
                        if lease.mode == Mode::Shared && !owner_shown {
                            holders.push(lease.clone());
                        }
                    }
                }
                SharedOutcome::Seen(holders)
            }
        }
    }
}

/// A history of `n` random operations by 8 clients of 5 owners against a server with `bug`, one
/// invoked every `pace_ms` on average: at 10 ms leases mostly end by a release, at 100 ms many
/// expire.
fn simulate(seed: u64, n: usize, pace_ms: u64, bug: Bug) -> SharedHistory {
    let mut server = Server {
        bug,
        ..Server::default()
    };
    let mut rng = Rng(seed);
    // (effect instant, or none when a lost request never ran; the op without its outcome)
    let mut planned: Vec<(Option<Micros>, SharedOp)> = Vec::new();
    let mut now = 0;
    for _ in 0..n {
        now += rng.below(2 * pace_ms) as Micros * MS;
        let client = rng.below(8) as u32;
        let owner = format!("o{}", client.min(5) / 2 + client.saturating_sub(5));
        let ttl_seconds = 1 + rng.below(2) as u32;
        let mode = if rng.below(3) < 2 {
            Mode::Shared
        } else {
            Mode::Exclusive
        };
        let kind = match rng.below(10) {
            0..=3 => SharedOpKind::Acquire {
                owner,
                ttl_seconds,
                wait_seconds: 0,
                mode,
            },
            4..=5 => SharedOpKind::Renew { owner, ttl_seconds },
            6 => SharedOpKind::Release { owner },
            _ => SharedOpKind::Status,
        };
        let complete = now + (1 + rng.below(80) as Micros) * MS;
        let lost = rng.below(10) == 0;
        let effect = if lost && rng.below(2) == 0 {
            None
        } else {
            // A lost answer's request may run late, within the horizon.
            let last = if lost { complete + 500 * MS } else { complete };
            Some(now + rng.below((last - now) as u64 + 1) as Micros)
        };
        let outcome = if lost {
            SharedOutcome::Unknown {
                why: "lost".to_owned(),
            }
        } else {
            SharedOutcome::Failed { status: 0 }
        };
        let op = SharedOp {
            id: 0,
            client,
            resource: "r".to_owned(),
            kind,
            invoke: now,
            complete,
            outcome,
        };
        planned.push((effect, op));
    }
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by_key(|&i| planned[i].0);
    for i in order {
        let (Some(at), op) = &mut planned[i] else {
            continue;
        };
        let outcome = server.apply(&op.kind, *at);
        if !op.outcome.is_unknown() {
            op.outcome = outcome;
        }
    }
    let mut history = SharedHistory::new(0, seed);
    history.resources = vec!["r".to_owned()];
    history.horizon_us = 600 * MS;
    for (_, op) in planned {
        history.push(op);
    }
    history
}

/// How many of `runs` seeds' histories against a server with `bug` the checks find it in, and
/// the kinds of finding.
fn caught(bug: Bug, runs: u64) -> (usize, Vec<Kind>) {
    let mut kinds = Vec::new();
    let mut caught = 0;
    for seed in 0..runs {
        let findings = run(&simulate(seed, 400, 10 + seed % 2 * 90, bug));
        caught += usize::from(!findings.is_empty());
        kinds.extend(findings.iter().map(|f| f.kind));
    }
    (caught, kinds)
}

#[test]
fn histories_of_a_correct_server_pass() {
    for seed in 0..200 {
        for pace_ms in [10, 100] {
            let history = simulate(seed, 400, pace_ms, Bug::None);
            let findings = run(&history);
            assert!(
                findings.is_empty(),
                "seed {seed}, pace {pace_ms} ms:{}",
                crate::shared::report::render(&history, &findings)
            );
        }
    }
}

#[test]
fn a_server_letting_a_writer_in_beside_readers_is_caught() {
    let (caught, kinds) = caught(Bug::WriterInBesideReaders, 20);
    assert!(caught >= 15, "caught in {caught} of 20 runs");
    assert!(kinds.contains(&Kind::WriterBesideHolder), "{kinds:?}");
}

#[test]
fn a_server_giving_readers_one_token_is_caught() {
    let (caught, kinds) = caught(Bug::OneTokenForReaders, 20);
    assert!(caught >= 15, "caught in {caught} of 20 runs");
    assert!(kinds.contains(&Kind::TokenReused), "{kinds:?}");
}

#[test]
fn a_server_showing_ended_leases_is_caught() {
    let (caught, kinds) = caught(Bug::StaleStatus, 20);
    assert!(caught >= 15, "caught in {caught} of 20 runs");
    assert!(
        kinds.contains(&Kind::Revived) && kinds.contains(&Kind::SeenAfterExpiry),
        "{kinds:?}"
    );
}
