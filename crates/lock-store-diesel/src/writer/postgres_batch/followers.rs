//! Hot keys: once a batch shows a key's live lease, the operations queued on that key before
//! the batch's statement that this lease decides without a write are answered from it at once,
//! by the domain's decisions (see the batcher's module documentation).

use std::collections::{HashMap, HashSet, VecDeque};

use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use lock_domain::{
    decide_acquire, decide_release, decide_renew, AcquireDecision, Grant, Lock, Refusal,
    ReleaseResult, RenewDecision,
};

use super::queue::{lock, Key, Outcome, Shared};
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
use crate::postgres::reads;
use crate::postgres::writes::Operation;
use crate::row::SeenLive;

/// A key's live lease after a batch, as far as the batch shows.
pub(super) enum Holder {
    /// The lease the batch granted or renewed, live at the database's clock of that write.
    Seen(SeenLive),
    /// Someone else's: the batch's acquire was refused; a read tells whose.
    Ask,
}

/// Answers the operations queued on the batch's keys before its statement that the lease seen
/// decides without a write (see the batcher's module documentation), in arrival order per key.
pub(super) fn answer_followers(
    shared: &Shared,
    conn: &mut PgConnection,
    seen: u64,
    mut holders: Vec<(Key, Holder)>,
) {
    if holders.is_empty() {
        return;
    }
    {
        let queue = lock(&shared.queue);
        let followed: HashSet<&Key> = queue
            .waiting
            .iter()
            .filter(|queued| queued.seq < seen)
            .map(|queued| &queued.key)
            .collect();
        holders.retain(|(key, _)| followed.contains(key));
    }
    let mut live: HashMap<Key, (Lock, DateTime<Utc>)> = HashMap::with_capacity(holders.len());
    for (key, holder) in holders {
        let lease = match holder {
            Holder::Seen(lease) => Some(lease),
            Holder::Ask => reads::live_holder_now(conn, &key.0, &key.1).ok().flatten(),
        };
        // A lease the domain cannot read (a corrupt row) decides nothing: its operations run. Nor
        // does a session's hold, whose row does not say when it ends (its session does: the
        // holders' path reads it).
        if let Some(Ok(lease)) = lease.map(SeenLive::into_domain) {
            if lease.0.owner.session().is_none() {
                live.insert(key, lease);
            }
        }
    }
    if live.is_empty() {
        return;
    }
    let mut queue = lock(&shared.queue);
    let mut blocked: HashSet<Key> = HashSet::new();
    let mut kept = VecDeque::with_capacity(queue.waiting.len());
    while let Some(queued) = queue.waiting.pop_front() {
        let decided = match live.get(&queued.key) {
            Some((lease, at)) if queued.seq < seen && !blocked.contains(&queued.key) => {
                decided_by_lease(&queued.operation, lease, *at)
            }
            _ => None,
        };
        match decided {
            Some(outcome) => {
                let _ = queued.answer(Ok(outcome));
            }
            None => {
                if live.contains_key(&queued.key) {
                    blocked.insert(queued.key.clone());
                }
                kept.push_back(queued);
            }
        }
    }
    queue.waiting = kept;
}

/// What `operation` comes to against `lease`, live at `at`, when the domain decides it without
/// a write (an acquire refused, a release or renew forbidden); `None` when it needs its write.
fn decided_by_lease(operation: &Operation, lease: &Lock, at: DateTime<Utc>) -> Option<Outcome> {
    // An operation under a session is decided on its session first, in its own batch (an
    // ended session answers 404 whoever holds the lock).
    let (Operation::Acquire { owner, .. }
    | Operation::Release { owner }
    | Operation::Renew { owner, .. }) = operation;
    if owner.session().is_some() {
        return None;
    }
    let lease = Some(lease);
    match operation {
        Operation::Acquire { owner, .. } => {
            let denied = matches!(decide_acquire(lease, owner, at), AcquireDecision::Deny);
            denied.then(|| {
                // Refused by the lease seen; the readers a row stands for are not seen here.
                let reason = lease
                    .filter(|lease| !lease.owner.is_shared_holders())
                    .map(|lease| Refusal::Held {
                        holders: vec![Grant::of_lock(lease.clone())],
                        available: 0,
                        delayed_until: None,
                    });
                Outcome::Acquire(AcquireRow::Refused(reason))
            })
        }
        Operation::Release { owner } => {
            matches!(decide_release(lease, owner, at), ReleaseResult::Forbidden)
                .then_some(Outcome::Release(ReleaseRow::Forbidden))
        }
        Operation::Renew { owner, .. } => {
            matches!(decide_renew(lease, owner, at), RenewDecision::Forbidden)
                .then_some(Outcome::Renew(RenewRow::Forbidden))
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta, Utc};
    use lock_domain::{FencingToken, Lock, Owner, Refusal, ResourceName, Ttl};

    use super::decided_by_lease;
    use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
    use crate::postgres::writes::Operation;
    use crate::writer::postgres_batch::queue::Outcome;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    /// What a queued operation of `owner` comes to against the holder's lease, seen at `seen`.
    fn decided(owner: &str, seen: i64) -> [Option<&'static str>; 3] {
        let lease = Lock {
            resource: ResourceName::parse("r".to_owned()).unwrap(),
            owner: Owner::parse("holder").unwrap(),
            acquired_at: at(0),
            expires_at: at(0) + TimeDelta::seconds(10),
            fencing_token: FencingToken::new(7).unwrap(),
            mode: lock_domain::LockMode::Exclusive,
            value: None,
        };
        let owner = Owner::parse(owner).unwrap();
        let ttl = Ttl::parse(10, 3_600).unwrap();
        let operations = [
            Operation::Acquire {
                owner: owner.clone(),
                ttl,
                value: None,
                lock_delay: lock_domain::LockDelay::NONE,
            },
            Operation::Release {
                owner: owner.clone(),
            },
            Operation::Renew {
                owner,
                ttl,
                value: None,
            },
        ];
        operations.map(|operation| {
            decided_by_lease(&operation, &lease, at(seen)).map(|outcome| match outcome {
                Outcome::Acquire(AcquireRow::Refused(Some(Refusal::Held { holders, .. })))
                    if holders.len() == 1 && holders[0].lease.owner.as_str() == "holder" =>
                {
                    "held"
                }
                Outcome::Release(ReleaseRow::Forbidden) | Outcome::Renew(RenewRow::Forbidden) => {
                    "forbidden"
                }
                _ => "another answer",
            })
        })
    }

    #[test]
    fn other_owners_are_answered_from_the_lease_and_its_holder_runs() {
        let answered = [Some("held"), Some("forbidden"), Some("forbidden")];
        assert_eq!(decided("other", 0), answered);
        assert_eq!(decided("other", 9_999), answered);
        // Owners compare exactly, as in the SQL.
        assert_eq!(decided("Holder", 5_000), answered);
        assert_eq!(decided("holder", 0), [None, None, None]);
        assert_eq!(decided("holder", 9_999), [None, None, None]);
        // A lease that has ended by the moment it was seen decides nothing.
        assert_eq!(decided("other", 10_000), [None, None, None]);
    }
}
