//! The waits of sets of locks (`locks/multi.rs`), which stand in no lock's queue. Each is kept
//! under every lock it asks for, so that a release or renew of one of those locks through this
//! process, or a hint naming one, wakes it at once, and a release of any other lock does not.
//! A hint that names no lock (SQLite's [`lock_domain::Freed::Unknown`], as often as every 5 ms
//! while another process commits) is answered by the poller instead: its one look at every
//! queued lock also reads the locks that refused each waiting set, and wakes only the sets none
//! of whose refusing locks is sure to refuse them now (the domain's [`Holding::refuses`]). So
//! such hints cost one read however many sets wait, and a set tries again (a write) only when
//! its locks may be free.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use lock_domain::{Claim, Holding, LockMode, Owner, Place, ResourceName, Tenant};
use tokio::sync::Notify;

use super::{locked, QueueKey, Shared};

/// One set's wait, as kept under each of its locks: the watch's id, and its state.
pub(super) type SetWait = (u64, Arc<SetWake>);

/// A waiting set's state, shared by its watch and the locks it is kept under.
#[derive(Default)]
pub(super) struct SetWake {
    /// Wakes the set to try again.
    freed: Notify,
    /// What refused its last try, if one was refused.
    refused: Mutex<Option<Refused>>,
}

impl SetWake {
    /// Wakes the set to try again.
    pub(super) fn wake(&self) {
        self.freed.notify_one();
    }
}

/// A refused try of a set: by whom, and the locks that refused it, each with the mode asked.
#[derive(Clone)]
struct Refused {
    tenant: Tenant,
    owner: Owner,
    locks: Vec<(ResourceName, LockMode)>,
}

/// A set's wait on each of its locks ([`super::Waiting::watch_set`]); it ends when dropped.
pub(crate) struct SetWatch {
    shared: Arc<Shared>,
    id: u64,
    keys: Vec<QueueKey>,
    wake: Arc<SetWake>,
}

impl SetWatch {
    /// Keeps a new wait under each of `tenant`'s locks `resources`.
    pub(super) fn new(
        shared: Arc<Shared>,
        id: u64,
        tenant: &Tenant,
        resources: impl IntoIterator<Item = ResourceName>,
    ) -> Self {
        let wake = Arc::new(SetWake::default());
        let keys: Vec<QueueKey> = resources
            .into_iter()
            .map(|resource| (tenant.clone(), resource))
            .collect();
        let mut waits = locked(&shared.set_waits);
        for key in &keys {
            waits
                .entry(key.clone())
                .or_default()
                .push((id, Arc::clone(&wake)));
        }
        drop(waits);
        Self {
            shared,
            id,
            keys,
            wake,
        }
    }

    /// Resolves once one of the set's locks may have been freed since the watch was made or this
    /// last resolved: released or renewed through this process, named by a hint from another,
    /// or (after a hint that names none) no longer sure to refuse the set by the poller's look.
    /// Best effort, like every hint: a waiting set still looks now and then by itself.
    pub(crate) async fn freed(&self) {
        self.wake.freed.notified().await;
    }

    /// The set's try was refused by `tenant`'s locks `locks` (each with the mode asked), asked
    /// by `owner`. Until the next, a hint that names no lock wakes the set only when none of
    /// them is sure to refuse it. To be told before the set's own look after the refusal, so
    /// that what that look does not see, a later look of the poller's does.
    pub(crate) fn refused(
        &self,
        tenant: &Tenant,
        owner: &Owner,
        locks: Vec<(ResourceName, LockMode)>,
    ) {
        *locked(&self.wake.refused) = Some(Refused {
            tenant: tenant.clone(),
            owner: owner.clone(),
            locks,
        });
    }
}

impl Drop for SetWatch {
    fn drop(&mut self) {
        let mut waits = locked(&self.shared.set_waits);
        for key in &self.keys {
            if let Some(entries) = waits.get_mut(key) {
                entries.retain(|(id, _)| *id != self.id);
                if entries.is_empty() {
                    waits.remove(key);
                }
            }
        }
    }
}

/// The poller's look at the waiting sets: the locks that refused each, to read with the queued
/// locks, and which sets to wake given what was read.
#[derive(Default)]
pub(super) struct SetLooks {
    sets: Vec<(Arc<SetWake>, Refused)>,
}

impl SetLooks {
    /// The sets waiting in `shared` after a refused try, each once.
    pub(super) fn of(shared: &Shared) -> Self {
        let mut seen = HashSet::new();
        let mut sets = Vec::new();
        for (id, wake) in locked(&shared.set_waits).values().flatten() {
            if !seen.insert(*id) {
                continue;
            }
            if let Some(refused) = locked(&wake.refused).clone() {
                sets.push((Arc::clone(wake), refused));
            }
        }
        Self { sets }
    }

    /// Whether no set is to be looked at.
    pub(super) fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The places to read, in order: each set's refusing locks.
    pub(super) fn places(&self) -> impl Iterator<Item = (Tenant, Place)> + '_ {
        self.sets.iter().flat_map(|(_, refused)| {
            refused
                .locks
                .iter()
                .map(|(resource, _)| (refused.tenant.clone(), Place::Lock(resource.clone())))
        })
    }

    /// Wakes each set none of whose refusing locks, as `seen` (in the order of
    /// [`Self::places`]), is sure to refuse it at `now`.
    pub(super) fn answer(&self, seen: &[Holding], now: DateTime<Utc>) {
        let mut from = 0;
        for (wake, refused) in &self.sets {
            let to = from + refused.locks.len();
            let sure = seen.get(from..to).is_some_and(|holdings| {
                refused
                    .locks
                    .iter()
                    .zip(holdings)
                    .any(|((resource, mode), holding)| {
                        holding.refuses(
                            &Place::Lock(resource.clone()),
                            &refused.owner,
                            Claim::of_mode(*mode),
                            now,
                        )
                    })
            });
            from = to;
            if !sure {
                wake.wake();
            }
        }
    }

    /// Wakes every set (the look failed: each finds out by itself).
    pub(super) fn wake_all(&self) {
        self.sets.iter().for_each(|(wake, _)| wake.wake());
    }
}
