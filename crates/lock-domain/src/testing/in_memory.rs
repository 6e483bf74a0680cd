//! The reference repository: the domain rules applied to a map under one mutex.

mod admin;
mod history;
mod leases;
mod semaphores;
mod sessions;
mod shared;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::{
    decide_undo, Clock, FencingToken, Lease, ListPage, ListQuery, ListedLock, Lock, Owner,
    PoolState, RepositoryError, ResourceName, StoreHealth, Tenant,
};

#[derive(Debug, Default)]
struct State {
    locks: HashMap<(Tenant, ResourceName), Lock>,
    /// Locks whose current lease is a re-grant to the owner that already held it.
    regranted: HashSet<(Tenant, ResourceName)>,
    last_token: i64,
    expired_takeovers: u64,
    /// Every lease of every semaphore, live or not, until a new grant there drops the ended ones.
    semaphores: HashMap<(Tenant, ResourceName), Vec<Lease>>,
    /// Semaphore grants whose current lease is a re-grant to the owner that already held it.
    regranted_permits: HashSet<(Tenant, ResourceName, Owner)>,
    /// The shared leases of every lock held in shared mode, whose row in `locks` stands for them
    /// (see `shared.rs` of the domain).
    shared: HashMap<(Tenant, ResourceName), Vec<Lease>>,
    /// Shared grants whose current lease is a re-grant to the owner that already held it.
    regranted_shared: HashSet<(Tenant, ResourceName, Owner)>,
    /// The lock-delay (ms) of each exclusive lease in `locks`; none for a released one (its entry
    /// is gone) or for the row of shared holders.
    lock_delays: HashMap<(Tenant, ResourceName), i64>,
    /// The lock-delay (ms) of each semaphore grant, by owner.
    permit_delays: HashMap<(Tenant, ResourceName, Owner), i64>,
    /// Every session, live or run out, until it is closed or forced (see `sessions.rs`).
    sessions: HashMap<(Tenant, crate::SessionId), crate::Session>,
    /// The durable history, recorded when the mutex is let go (see `history.rs`).
    history: history::Recorded,
    /// The leases whose end was recorded `expired`, until taken (`take_expired_holds`); noted
    /// with the history, by the same rule.
    expired_holds: std::collections::VecDeque<crate::ExpiredHold>,
}

impl State {
    /// Until when the lease in `locks` at `key`, ended by expiry, keeps its place from `owner`
    /// (its lock-delay).
    pub(super) fn delayed_until(
        &self,
        key: &(Tenant, ResourceName),
        owner: &Owner,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        let lease = self.locks.get(key)?;
        crate::delayed_until(lease, *self.lock_delays.get(key)?, owner, now)
    }

    /// The next fencing token: one counter for every lock and semaphore, as in the real stores.
    fn next_token(&mut self) -> Result<FencingToken, RepositoryError> {
        self.last_token += 1;
        FencingToken::new(self.last_token).map_err(|_| RepositoryError::internal("token overflow"))
    }
}

/// A [`crate::LeaseStore`] in memory. Clones share the same locks, as two handles on one database
/// would, so a test can "reopen" it.
#[derive(Debug, Clone)]
pub struct InMemoryLockRepository {
    state: Arc<Mutex<State>>,
    clock: Arc<dyn Clock>,
}

impl InMemoryLockRepository {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            state: Arc::default(),
            clock,
        }
    }

    /// The state under the mutex: what is changed through it is recorded in the history.
    fn state(&self) -> history::Recording<'_> {
        let guard = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        history::Recording::new(guard, self.clock.now())
    }
}

impl State {
    pub(super) fn record_expiry(
        &mut self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: crate::FencingToken,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let Some(lock) = state.locks.get_mut(&(tenant, resource)) else {
            return Ok(false);
        };
        let ran_out = lock.owner == owner
            && lock.fencing_token == fencing_token
            && !lock.owner.is_shared_holders()
            && !lock.is_live_at(now)
            && lock.acquired_at != lock.expires_at;
        if ran_out {
            lock.acquired_at = lock.expires_at;
        }
        Ok(ran_out)
    }

    pub(super) fn undo_grant(
        &mut self,
        tenant: Tenant,
        grant: Lock,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, RepositoryError> {
        let state = self;
        let key = (tenant, grant.resource.clone());
        let regranted = state.regranted.contains(&key);
        let undone = decide_undo(state.locks.get(&key), regranted, &grant, now);
        if undone {
            state.history.ending = Some((crate::HistoryEvent::Undone, None));
            state.locks.remove(&key);
            state.lock_delays.remove(&key);
        }
        Ok(undone)
    }

    pub(super) fn list(
        &mut self,
        tenant: Tenant,
        query: ListQuery,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<ListPage, RepositoryError> {
        let state = &*self;
        let mut matching: Vec<&Lock> = state
            .locks
            .iter()
            .filter(|((t, name), lock)| {
                *t == tenant
                    && lock.is_live_at(now)
                    && query.prefix.matches(name)
                    && query.after.as_ref().is_none_or(|after| name > after)
            })
            .map(|(_, lock)| lock)
            .collect();
        matching.sort_by(|a, b| {
            a.resource
                .as_str()
                .as_bytes()
                .cmp(b.resource.as_str().as_bytes())
        });
        let listed = matching
            .into_iter()
            .take(query.limit.get() + 1)
            .map(|lock| ListedLock {
                lock: lock.clone(),
                ttl_remaining: (lock.expires_at - now).to_std().unwrap_or_default(),
            })
            .collect();
        Ok(ListPage::from_overfetch(listed, query.limit))
    }
}

impl State {
    /// An exclusive acquire, under the mutex.
    /// Makes the exclusive grant the one decision decided (`extend`: the owner's live lease
    /// with this token, re-granted; else a new grant).
    pub(super) fn grant_exclusive(
        &mut self,
        key: (Tenant, ResourceName),
        terms: crate::LeaseTerms,
        extend: Option<FencingToken>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Lock, RepositoryError> {
        let state = self;
        let crate::LeaseTerms {
            owner,
            ttl,
            value,
            lock_delay,
        } = terms;
        let resource = key.1.clone();
        let current = state.locks.get(&key);
        // Releases remove their lock: a lock still here that another owner let expire is taken over.
        let takeover = current.is_some_and(|lock| lock.owner != owner && !lock.is_live_at(now));
        let readers_ran_out = current.is_some_and(|row| row.owner.is_shared_holders());
        let (fencing_token, regranted, value) = match (extend, current) {
            (Some(token), Some(lock)) => (token, true, value.or(lock.value.clone())),
            _ => (state.next_token()?, false, value),
        };
        if regranted {
            state.regranted.insert(key.clone());
        } else {
            state.regranted.remove(&key);
        }
        let lock = Lock {
            resource: resource.clone(),
            owner,
            acquired_at: now,
            expires_at: now + ttl.as_time_delta(),
            fencing_token,
            mode: crate::LockMode::Exclusive,
            value,
        };
        state.lock_delays.insert(key.clone(), lock_delay.millis());
        if readers_ran_out && takeover {
            // The readers' run-out leases end with the takeover, as the databases' trigger
            // `readers_end_at_takeover` ends their rows.
            if let Some(leases) = state.shared.get_mut(&key) {
                leases.retain(|lease| lease.is_live_at(now));
            }
        }
        state.locks.insert(key, lock.clone());
        if takeover {
            state.expired_takeovers += 1;
        }
        Ok(lock)
    }
}

#[async_trait]
impl StoreHealth for InMemoryLockRepository {
    async fn ping(&self) -> Result<(), RepositoryError> {
        Ok(())
    }

    async fn count_live_sessions(&self) -> Result<u64, RepositoryError> {
        let now = self.clock.now();
        let state = self.state();
        Ok(state
            .sessions
            .values()
            .filter(|s| s.is_live_at(now))
            .count() as u64)
    }

    async fn count_live(&self) -> Result<u64, RepositoryError> {
        let now = self.clock.now();
        let live = self
            .state()
            .locks
            .values()
            .filter(|l| l.is_live_at(now))
            .count();
        Ok(live as u64)
    }

    fn pool_state(&self) -> Option<PoolState> {
        None
    }

    async fn count_expired_takeovers(&self) -> Result<u64, RepositoryError> {
        Ok(self.state().expired_takeovers)
    }

    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<crate::ExpiredHold>, RepositoryError> {
        let mut state = self.state();
        let count = state.expired_holds.len().min(limit as usize);
        Ok(state.expired_holds.drain(..count).collect())
    }
}

#[async_trait]
impl crate::LeaseUsage for InMemoryLockRepository {
    async fn count_live_leases(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        let now = self.clock.now();
        let elections = tenant.elections();
        let ours = |t: &Tenant| *t == tenant || *t == elections;
        let state = self.state();
        let exclusive = state
            .locks
            .iter()
            .filter(|((t, _), lock)| {
                ours(t) && !lock.owner.is_shared_holders() && lock.is_live_at(now)
            })
            .count();
        let held = |leases: &HashMap<(Tenant, ResourceName), Vec<Lease>>| {
            leases
                .iter()
                .filter(|((t, _), _)| ours(t))
                .flat_map(|(_, leases)| leases)
                .filter(|lease| lease.is_live_at(now))
                .count()
        };
        Ok((exclusive + held(&state.shared) + held(&state.semaphores)) as u64)
    }
}
