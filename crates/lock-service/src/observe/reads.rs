//! What a watch reads of the store: the live leases of an observed name, the live leases of many
//! locks and elections in one round trip (the poll), and the record of expiries a watch saw. The
//! store's read ports only, so that the watches depend on no use case.

use std::sync::Arc;

use lock_domain::{
    LockMode, LockRepository, RepositoryError, ResourceName, SemaphoreRepository,
    SharedLockRepository, Tenant,
};

use super::diff::{Holding, Shape};
use super::{holding_of_lease, holding_of_lock, Observed};
use crate::held::hold;

/// The store's ports a watch reads through.
#[derive(Clone)]
pub(crate) struct ObservedReads {
    pub(crate) locks: Arc<dyn LockRepository>,
    pub(crate) shared_locks: Arc<dyn SharedLockRepository>,
    pub(crate) semaphores: Arc<dyn SemaphoreRepository>,
}

impl ObservedReads {
    /// The live leases of each of `names` now (a lock or an election each), in order: one read of
    /// the store for all of them (`LockRepository::statuses`), then one more for each lock held
    /// in shared mode.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub(crate) async fn observed_locks(
        &self,
        names: &[(Tenant, Observed, ResourceName)],
    ) -> Result<Vec<Vec<Holding>>, RepositoryError> {
        let keys = names
            .iter()
            .map(|(tenant, what, name)| match what {
                Observed::Election => (tenant.elections(), name.clone()),
                _ => (tenant.clone(), name.clone()),
            })
            .collect();
        let locks = self.locks.statuses(keys).await?;
        let mut live = Vec::with_capacity(locks.len());
        for (lock, (tenant, what, name)) in locks.into_iter().zip(names) {
            live.push(match lock {
                Some(lock) if lock.owner.is_shared_holders() => {
                    self.observed_live(tenant, *what, name).await?
                }
                lock => lock.iter().map(holding_of_lock).collect(),
            });
        }
        Ok(live)
    }

    /// Records in the history the expiries of `expired` (leases a watch of `key` saw run out):
    /// of a lock's holder or reader, an election's leader or a semaphore's grant, once (see
    /// [`lock_domain::LockRepository::record_expiry`] and its siblings for shared leases and
    /// permits; a grant in its lock-delay is left to the sweep). A failure is left to the next
    /// grant or sweep, which records the expiry then.
    pub(crate) async fn record_observed_expiries(
        &self,
        key: &(Tenant, Observed, ResourceName),
        expired: Vec<Holding>,
    ) {
        let (tenant, what, name) = key;
        for lease in expired {
            let (owner, token) = (lease.owner, lease.token);
            // A failure is the store's, and the next operation meets it too (see above).
            let _ = match (what, lease.shape) {
                (Observed::Semaphore, _) => {
                    self.semaphores
                        .record_permit_expiry(tenant.clone(), name.clone(), owner, token)
                        .await
                }
                (Observed::Lock, Shape::Lock(LockMode::Shared)) => {
                    self.shared_locks
                        .record_shared_expiry(tenant.clone(), name.clone(), owner, token)
                        .await
                }
                (Observed::Lock, _) => {
                    self.locks
                        .record_expiry(tenant.clone(), name.clone(), owner, token)
                        .await
                }
                (Observed::Election, _) => {
                    self.locks
                        .record_expiry(tenant.elections(), name.clone(), owner, token)
                        .await
                }
            };
        }
    }

    /// The live leases of `name` now, as an observer sees them.
    pub(crate) async fn observed_live(
        &self,
        tenant: &Tenant,
        what: Observed,
        name: &ResourceName,
    ) -> Result<Vec<Holding>, RepositoryError> {
        Ok(match what {
            Observed::Lock => match hold(&*self.locks, &*self.shared_locks, tenant, name).await? {
                None => Vec::new(),
                Some(lock_domain::Hold::Exclusive(lock)) => vec![holding_of_lock(&lock)],
                Some(lock_domain::Hold::Shared(locks)) => {
                    locks.iter().map(holding_of_lock).collect()
                }
            },
            Observed::Semaphore => self
                .semaphores
                .semaphore(tenant.clone(), name.clone())
                .await?
                .map(|state| state.holders.iter().map(holding_of_lease).collect())
                .unwrap_or_default(),
            Observed::Election => self
                .locks
                .status(tenant.elections(), name.clone())
                .await?
                .iter()
                .map(holding_of_lock)
                .collect(),
        })
    }
}
