//! A history cut into one partition per resource: every operation that may have changed or
//! shown the resource's lock, as an entry of the search.

use std::collections::{BTreeSet, HashMap};

use super::{Entry, Partition};
use crate::history::{is_session_owner, History, Op, OpKind, Outcome};
use crate::model::{Call, OwnerId, Ret};

/// Splits a history into one partition per resource. Reads with an unknown outcome and definite
/// failures change nothing and are left out; a listing becomes one read per resource; an acquire
/// with an unknown outcome also brings the optional undo of its grant by lockd. A force-release
/// is an operation of its own, of no owner. A keepalive or a close of a session is an operation
/// of every resource the session acquired (whatever the answer), where it moves or ends the
/// session's hold.
pub fn partitions(history: &History) -> Vec<Partition> {
    let mut by_resource: Vec<Partition> = history
        .resources
        .iter()
        .map(|r| Partition {
            resource: r.clone(),
            entries: Vec::new(),
            margin: history.margin_us,
            lock_delay: history.lock_delays.get(r).copied().unwrap_or(0),
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
    // The resources each session may hold something on.
    let mut acquired: HashMap<&str, BTreeSet<usize>> = HashMap::new();
    for op in &history.ops {
        if let (OpKind::Acquire { owner, .. }, Some(&p)) =
            (&op.kind, index.get(op.resource.as_str()))
        {
            if is_session_owner(owner) && !matches!(op.outcome, Outcome::Failed { .. }) {
                acquired.entry(owner).or_default().insert(p);
            }
        }
    }
    for op in &history.ops {
        if let OpKind::List = op.kind {
            if let Outcome::Listed(leases) = &op.outcome {
                // A listing covers the resources under its prefix (the op's resource) only.
                for (p, resource) in history.resources.iter().enumerate() {
                    if !resource.starts_with(op.resource.as_str()) {
                        continue;
                    }
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
        let places: Vec<usize> = match &op.kind {
            OpKind::KeepAlive { owner, .. } | OpKind::EndSession { owner } => acquired
                .get(owner.as_str())
                .map(|ps| ps.iter().copied().collect())
                .unwrap_or_default(),
            OpKind::OpenSession { .. } => continue,
            _ => match index.get(op.resource.as_str()) {
                Some(&p) => vec![p],
                None => continue,
            },
        };
        for p in places {
            let Some(entries) = entry(op, p, history, &mut owner_id) else {
                continue;
            };
            by_resource[p].entries.extend(entries);
        }
    }
    for partition in &mut by_resource {
        partition.entries.sort_by_key(|e| (e.invoke, e.source));
    }
    by_resource
}

/// The entries `op` makes in partition `p`: none for a definite failure or a read left
/// unanswered, the optional undo beside an acquire left unanswered.
fn entry(
    op: &Op,
    p: usize,
    history: &History,
    owner_id: &mut impl FnMut(usize, &str) -> OwnerId,
) -> Option<Vec<Entry>> {
    let call = match &op.kind {
        OpKind::Acquire {
            owner, ttl_seconds, ..
        } => Call::Acquire {
            owner: owner_id(p, owner),
            ttl: i64::from(*ttl_seconds) * 1_000_000,
            session: is_session_owner(owner),
        },
        OpKind::KeepAlive { owner, ttl_seconds } => Call::KeepAlive {
            owner: owner_id(p, owner),
            ttl: i64::from(*ttl_seconds) * 1_000_000,
        },
        OpKind::EndSession { owner } => Call::EndSession {
            owner: owner_id(p, owner),
        },
        OpKind::Release { owner } => Call::Release {
            owner: owner_id(p, owner),
            session: is_session_owner(owner),
        },
        OpKind::Renew { owner, ttl_seconds } => Call::Renew {
            owner: owner_id(p, owner),
            ttl: i64::from(*ttl_seconds) * 1_000_000,
        },
        OpKind::Status => Call::Read,
        OpKind::List | OpKind::OpenSession { .. } => unreachable!(),
        OpKind::ForceRelease { .. } => Call::ForceRelease,
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
        Outcome::Listed(_) => return None,
        Outcome::Kept { expires_at } => Ret::Kept {
            expires: *expires_at,
        },
        Outcome::Forbidden => Ret::Forbidden,
        Outcome::NotFound => Ret::NotFound,
        // An exclusive lock has one lease at a time: an answer listing none or several has
        // no explanation (`None`).
        Outcome::ForceReleased(ended) => Ret::ForceReleased(match ended.as_slice() {
            [one] => Some((owner_id(p, &one.owner), one.token)),
            _ => None,
        }),
        Outcome::Failed { .. } => return None,
        Outcome::Unknown { .. } => Ret::Unknown,
    };
    let mut entries = Vec::new();
    if ret == Ret::Unknown {
        if call == Call::Read {
            return None;
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
    Some(entries)
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
