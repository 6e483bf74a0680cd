//! The lease port over the store's writer: every [`LeaseOp`] is one call to the writer, and the
//! repository tells other processes (PostgreSQL hints) when a lease ended or changed.

use async_trait::async_trait;
use lock_domain::{
    Applied, Holding, LeaseOp, LeaseOutcome, LeaseStore, ListPage, ListQuery, ListedLock, Lock,
    Place, RepositoryError, SemaphorePage, Tenant,
};

use super::DieselLockRepository;
use crate::peek;
use crate::row::ListedRow;

impl DieselLockRepository {
    /// PostgreSQL: tells every process when `outcome` ended or changed a lease at `place`.
    fn hint_if_freed(&self, tenant: &Tenant, place: &Place, outcome: &LeaseOutcome) {
        let freed = match outcome {
            // A renewed lease may be shorter now: waiters elsewhere must look at its new end.
            LeaseOutcome::Released(_) | LeaseOutcome::Renewed(_) | LeaseOutcome::Undone(true) => {
                true
            }
            LeaseOutcome::ForceReleased(ended) => !ended.is_empty(),
            _ => false,
        };
        if freed {
            match place {
                Place::Lock(resource) => self.hint_freed(tenant, resource),
                Place::Semaphore(name) => self.hint_freed_permits(tenant, name),
            }
        }
    }
}

#[async_trait]
impl LeaseStore for DieselLockRepository {
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        if matches!(op, LeaseOp::RecordExpiry { .. }) && !self.inner.record_history {
            // A process that records no history must not mark an expiry as recorded.
            return Ok(LeaseOutcome::ExpiryRecorded(false));
        }
        let place = op.place();
        let outcome = self.inner.writer.apply(tenant.clone(), op).await?;
        self.hint_if_freed(&tenant, &place, &outcome);
        Ok(outcome)
    }

    /// Yes: SQLite when both are writes (the group commit's one batch); PostgreSQL when both are
    /// a lock's acquires or releases (one transaction outside the batches).
    fn applies_together(&self) -> bool {
        self.inner.writer.applies_together()
    }

    /// In one transaction: on SQLite of the group commit when both are writes, on PostgreSQL
    /// when both are a lock's acquires or releases (a release handed to the lock's queue and
    /// its head's attempt); otherwise one after the other.
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        if [&first, &then]
            .iter()
            .any(|op| matches!(op, LeaseOp::RecordExpiry { .. }))
        {
            let first = self.apply(tenant.clone(), first).await;
            return (first, self.apply(tenant, then).await);
        }
        let places = (first.place(), then.place());
        let together = self.applies_together();
        let outcomes = self
            .inner
            .writer
            .apply_then(tenant.clone(), first, then)
            .await;
        // A lock released and granted to one writer in the same commit was never free: waiters
        // elsewhere would only find it held (readers could share it: they are told).
        let handed_to_a_writer = together
            && places.0 == places.1
            && matches!(&outcomes.1, Ok(LeaseOutcome::Granted(grant))
                if grant.mode() == Some(lock_domain::LockMode::Exclusive));
        for (place, outcome) in [(&places.0, &outcomes.0), (&places.1, &outcomes.1)] {
            if let Ok(outcome) = outcome {
                if !(handed_to_a_writer && matches!(outcome, LeaseOutcome::Released(_))) {
                    self.hint_if_freed(&tenant, place, outcome);
                }
            }
        }
        outcomes
    }

    /// One read for all of the locks (see `peek`); a lock held by readers, and a semaphore, is
    /// looked at alone.
    async fn look_many(
        &self,
        places: Vec<(Tenant, Place)>,
    ) -> Result<Vec<Holding>, RepositoryError> {
        let locks: Vec<(Tenant, lock_domain::ResourceName)> = places
            .iter()
            .filter_map(|(tenant, place)| match place {
                Place::Lock(resource) => Some((tenant.clone(), resource.clone())),
                Place::Semaphore(_) => None,
            })
            .collect();
        let mut rows =
            peek::statuses(&self.inner.pooled, self.inner.writer.as_ref(), locks).await?;
        rows.reverse();
        let mut found = Vec::with_capacity(places.len());
        for (tenant, place) in places {
            let row = match &place {
                Place::Lock(_) => rows.pop().flatten(),
                Place::Semaphore(_) => None,
            };
            let holding = match row {
                Some(lock) if !lock.owner.is_shared_holders() && lock.owner.session().is_none() => {
                    Holding {
                        holders: vec![lock_domain::Grant::of_lock(lock)],
                        delayed_until: None,
                    }
                }
                // No live lease, readers, a session's hold, or a semaphore: its own look says it
                // all.
                _ => self.apply(tenant, LeaseOp::Look(place)).await?.looked()?,
            };
            found.push(holding);
        }
        Ok(found)
    }

    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError> {
        let limit = query.limit;
        let listed = self
            .inner
            .writer
            .list(tenant.clone(), query)
            .await?
            .into_iter()
            .map(ListedRow::into_listed)
            .collect::<Result<Vec<_>, _>>()?;
        let page = ListPage::from_overfetch(listed, limit);
        self.with_readers(tenant, page).await
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.inner.writer.list_semaphores(tenant, query).await
    }
}

impl DieselLockRepository {
    /// `page` with each lock held by readers replaced by its readers, in token order, each with
    /// what remains of its lease (the page's remaining lease of the row, less how much sooner the
    /// reader's ends). A lock that changed since the page was read shows as it is now.
    async fn with_readers(
        &self,
        tenant: Tenant,
        page: ListPage,
    ) -> Result<ListPage, RepositoryError> {
        // Readers are listed as themselves; a session's hold with its session's end (or not at
        // all, once its session ran out).
        let looked = |lock: &Lock| lock.owner.is_shared_holders() || lock.owner.session().is_some();
        if !page.locks.iter().any(|l| looked(&l.lock)) {
            return Ok(page);
        }
        let mut locks = Vec::with_capacity(page.locks.len());
        for listed in page.locks {
            if !looked(&listed.lock) {
                locks.push(listed);
                continue;
            }
            let place = Place::Lock(listed.lock.resource.clone());
            let holding = self
                .apply(tenant.clone(), LeaseOp::Look(place))
                .await?
                .looked()?;
            for grant in holding.holders {
                let lock: Lock = grant.into_lock();
                let offset = (lock.expires_at - listed.lock.expires_at).num_milliseconds();
                let left = listed.ttl_remaining.as_millis() as i64 + offset;
                locks.push(ListedLock {
                    lock,
                    ttl_remaining: std::time::Duration::from_millis(left.max(0) as u64),
                });
            }
        }
        Ok(ListPage {
            locks,
            has_more: page.has_more,
        })
    }
}
