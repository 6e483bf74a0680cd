//! What a watch reads of the store: the live leases of an observed name, the live leases of many
//! locks and elections in one round trip (the poll), and the record of expiries a watch saw. The
//! store's read ports only, so that the watches depend on no use case.

use std::sync::Arc;

use lock_domain::{
    FencingToken, Grant, LeaseOp, LeaseStore, Owner, Place, RepositoryError, ResourceName, Tenant,
};

use super::diff::Holding;
use super::{holding_of_lease, holding_of_lock, Observed};

/// The store's port a watch reads through.
#[derive(Clone)]
pub(crate) struct ObservedReads {
    pub(crate) leases: Arc<dyn LeaseStore>,
}

/// Where an observed name's leases are kept, and in which tenant (an election's lock is in its
/// tenant's election namespace).
fn place_of(tenant: &Tenant, what: Observed, name: &ResourceName) -> (Tenant, Place) {
    match what {
        Observed::Lock => (tenant.clone(), Place::Lock(name.clone())),
        Observed::Election => (tenant.elections(), Place::Lock(name.clone())),
        Observed::Semaphore => (tenant.clone(), Place::Semaphore(name.clone())),
    }
}

/// A lease as a watch keeps it.
fn holding_of(grant: &Grant) -> Holding {
    match grant.place {
        Place::Lock(_) => holding_of_lock(&grant.clone().into_lock()),
        Place::Semaphore(_) => holding_of_lease(&grant.lease),
    }
}

impl ObservedReads {
    /// The live leases of each of `names` now (a lock or an election each), in order: one read of
    /// the store for all of them (`LeaseStore::look_many`).
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub(crate) async fn observed_locks(
        &self,
        names: &[(Tenant, Observed, ResourceName)],
    ) -> Result<Vec<Vec<Holding>>, RepositoryError> {
        let places = names
            .iter()
            .map(|(tenant, what, name)| place_of(tenant, *what, name))
            .collect();
        Ok(self
            .leases
            .look_many(places)
            .await?
            .iter()
            .map(|holding| holding.holders.iter().map(holding_of).collect())
            .collect())
    }

    /// Records in the history the expiries of `expired` (leases a watch of `key` saw run out):
    /// of a lock's holder or reader, an election's leader or a semaphore's grant, once (see
    /// `LeaseOp::RecordExpiry`; a grant in its lock-delay is left to the sweep). A failure is
    /// left to the next grant or sweep, which records the expiry then.
    pub(crate) async fn record_observed_expiries(
        &self,
        key: &(Tenant, Observed, ResourceName),
        expired: Vec<Holding>,
    ) {
        let (tenant, what, name) = key;
        let (stored, place) = place_of(tenant, *what, name);
        for lease in expired {
            let (owner, fencing_token): (Owner, FencingToken) = (lease.owner, lease.token);
            let op = LeaseOp::RecordExpiry {
                place: place.clone(),
                owner,
                fencing_token,
            };
            // A failure is the store's, and the next operation meets it too (see above).
            let _ = self.leases.apply(stored.clone(), op).await;
        }
    }

    /// The live leases of `name` now, as an observer sees them.
    pub(crate) async fn observed_live(
        &self,
        tenant: &Tenant,
        what: Observed,
        name: &ResourceName,
    ) -> Result<Vec<Holding>, RepositoryError> {
        let (stored, place) = place_of(tenant, what, name);
        let holding = self
            .leases
            .apply(stored, LeaseOp::Look(place))
            .await?
            .looked()?;
        Ok(holding.holders.iter().map(holding_of).collect())
    }
}
