//! The reference store's durable history: every change made under the mutex is named by the
//! domain's rule ([`crate::name_change`]), comparing every lease before and after it, and recorded
//! before the mutex is let go, as a database records it in the write's transaction.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::MutexGuard;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{InMemoryLockRepository, State};
use crate::{
    name_change, ExpiredHold, FencingToken, HistoryEvent, HistoryId, HistoryPage, HistoryQuery,
    HistoryRecord, HistoryRepository, HistorySubject, LeaseKind, Lock, RepositoryError,
    ResourceName, RowLease, Side, Tenant,
};

/// The tables of the reference store, as a database has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Table {
    Locks,
    Semaphores,
    Shared,
}

/// A row's key: its table, tenant (as stored), name, and the owner for the tables of one row per
/// holder.
type RowKey = (Table, Tenant, ResourceName, Option<crate::Owner>);

/// What the history of the reference store holds, beside its leases.
#[derive(Debug, Default)]
pub(super) struct Recorded {
    records: Vec<HistoryRecord>,
    last_id: i64,
    /// What the write in progress says an ending is (an undo, a force-release), and why.
    pub(super) ending: Option<(HistoryEvent, Option<String>)>,
}

fn row_of_lock(lock: &Lock) -> RowLease {
    RowLease {
        owner: lock.owner.clone(),
        fencing_token: lock.fencing_token.value(),
        acquired_ms: lock.acquired_at.timestamp_millis(),
        expires_ms: lock.expires_at.timestamp_millis(),
    }
}

fn row_of_lease(lease: &crate::Lease) -> RowLease {
    RowLease {
        owner: lease.owner.clone(),
        fencing_token: lease.fencing_token.value(),
        acquired_ms: lease.acquired_at.timestamp_millis(),
        expires_ms: lease.expires_at.timestamp_millis(),
    }
}

/// The rows as a database store keeps them: a hold of a live session ends with the session, and
/// its row says so ([`crate::Session::HELD_WHILE_LIVE_MS`]), so a keepalive changes no row.
fn rows(state: &State, now: DateTime<Utc>) -> HashMap<RowKey, RowLease> {
    let as_stored = |tenant: &Tenant, mut row: RowLease| {
        let live_session = row
            .owner
            .session()
            .and_then(|id| state.sessions.get(&(tenant.clone(), id)))
            .is_some_and(|session| session.is_live_at(now));
        if live_session {
            row.expires_ms = crate::Session::HELD_WHILE_LIVE_MS;
        }
        row
    };
    let locks = state.locks.iter().map(move |((tenant, name), lock)| {
        (
            (Table::Locks, tenant.clone(), name.clone(), None),
            as_stored(tenant, row_of_lock(lock)),
        )
    });
    let per_holder = |table: Table, map: &HashMap<(Tenant, ResourceName), Vec<crate::Lease>>| {
        map.iter()
            .flat_map(move |((tenant, name), leases)| {
                leases.iter().map(move |lease| {
                    let key = (
                        table,
                        tenant.clone(),
                        name.clone(),
                        Some(lease.owner.clone()),
                    );
                    (key, as_stored(tenant, row_of_lease(lease)))
                })
            })
            .collect::<Vec<_>>()
    };
    locks
        .chain(per_holder(Table::Semaphores, &state.semaphores))
        .chain(per_holder(Table::Shared, &state.shared))
        .collect()
}

/// The state under the mutex; when let go, the changes made through it are recorded.
pub(super) struct Recording<'a> {
    guard: MutexGuard<'a, State>,
    before: HashMap<RowKey, RowLease>,
    now: DateTime<Utc>,
}

impl<'a> Recording<'a> {
    pub(super) fn new(guard: MutexGuard<'a, State>, now: DateTime<Utc>) -> Self {
        let before = rows(&guard, now);
        Self { guard, before, now }
    }
}

impl Deref for Recording<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.guard
    }
}

impl DerefMut for Recording<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.guard
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        let after = rows(&self.guard, self.now);
        let (ending, reason) = self.guard.history.ending.take().unzip();
        let mut keys: Vec<&RowKey> = self.before.keys().chain(after.keys()).collect();
        keys.sort_by_key(|(table, tenant, name, owner)| {
            let owner = owner.as_ref().map(crate::Owner::as_str);
            (*table, tenant.as_str(), name.as_str(), owner)
        });
        keys.dedup();
        let mut changes = Vec::new();
        let mut expired = Vec::new();
        for key in keys {
            let (before, now_after) = (self.before.get(key), after.get(key));
            for (event, side) in name_change(before, now_after, self.now.timestamp_millis(), ending)
            {
                let lease = match side {
                    Side::Before => before,
                    Side::After => now_after,
                };
                if let (HistoryEvent::Expired, Some(ran_out)) = (event, before) {
                    let election = key.1.election_namespace_of().is_some();
                    expired.push((key.0, election, ran_out.clone()));
                }
                if let Some(lease) = lease {
                    changes.push((side, key.clone(), lease.clone(), event));
                }
            }
        }
        // The held time of each lease that ran out: the expired lease is the row before the
        // change, whether it was replaced, deleted or ended in place (a session's hold, once its
        // session ran out, with the session's end: a keepalive moved it).
        for (table, election, ran_out) in expired {
            let (kind, shared) = match table {
                Table::Locks if election => (LeaseKind::Election, false),
                Table::Locks => (LeaseKind::Lock, false),
                Table::Semaphores => (LeaseKind::Semaphore, false),
                Table::Shared => (LeaseKind::Lock, true),
            };
            self.guard.expired_holds.extend(ExpiredHold::of_row(
                kind,
                shared,
                ran_out.acquired_ms,
                ran_out.expires_ms,
            ));
        }
        // Endings first: a lease ends before the one that takes its place begins.
        changes.sort_by_key(|(side, ..)| *side != Side::Before);
        let reason = reason.flatten();
        let now = self.now;
        let recorded = &mut self.guard.history;
        for (_, (table, stored, name, _), lease, event) in changes {
            recorded.last_id += 1;
            let (tenant, kind) = match (table, stored.election_namespace_of()) {
                (Table::Locks, Some(tenant)) => (tenant, LeaseKind::Election),
                (Table::Semaphores, _) => (stored, LeaseKind::Semaphore),
                _ => (stored, LeaseKind::Lock),
            };
            let by_admin = matches!(event, HistoryEvent::ForceReleased);
            recorded.records.push(HistoryRecord {
                id: HistoryId::new(recorded.last_id).expect("ids start at 1"),
                tenant,
                kind,
                name,
                owner: lease.owner,
                fencing_token: FencingToken::new(lease.fencing_token).expect("stored tokens > 0"),
                event,
                at: now,
                reason: if by_admin { reason.clone() } else { None },
                shared: table == Table::Shared,
            });
        }
    }
}

fn matches(record: &HistoryRecord, tenant: &Tenant, query: &HistoryQuery) -> bool {
    let subject = match &query.subject {
        HistorySubject::One { kind, name } => record.kind == *kind && record.name == *name,
        HistorySubject::Prefix(prefix) => prefix.matches(&record.name),
    };
    record.tenant == *tenant
        && subject
        && query.since.is_none_or(|since| record.at >= since)
        && query.before.is_none_or(|before| record.id < before)
}

#[async_trait]
impl HistoryRepository for InMemoryLockRepository {
    async fn history(
        &self,
        tenant: Tenant,
        query: HistoryQuery,
    ) -> Result<HistoryPage, RepositoryError> {
        let state = self.state();
        let newest_first = state
            .history
            .records
            .iter()
            .rev()
            .filter(|record| matches(record, &tenant, &query))
            .take(query.limit.get() + 1)
            .cloned()
            .collect();
        Ok(HistoryPage::from_overfetch(newest_first, query.limit))
    }

    async fn history_after(
        &self,
        after: Option<HistoryId>,
        limit: u32,
    ) -> Result<Vec<HistoryRecord>, RepositoryError> {
        let state = self.state();
        Ok(state
            .history
            .records
            .iter()
            .filter(|record| after.is_none_or(|after| record.id > after))
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn last_history_id(&self) -> Result<Option<HistoryId>, RepositoryError> {
        Ok(self.state().history.records.last().map(|record| record.id))
    }

    async fn prune_history(
        &self,
        before: DateTime<Utc>,
        batch: u32,
    ) -> Result<usize, RepositoryError> {
        let mut state = self.state();
        let records = &mut state.history.records;
        let old = records
            .iter()
            .take(batch as usize)
            .take_while(|record| record.at < before)
            .count();
        records.drain(..old);
        Ok(old)
    }
}
