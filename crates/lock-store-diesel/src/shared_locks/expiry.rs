//! An expiry an observer saw of a shared lease (`LeaseOp::RecordExpiry` of a reader):
//! under the row's lock, the run-out lease's row is deleted, as the lock's next grant or a sweep
//! deletes it, and the history's triggers record it as expired, once. The row that stands for the
//! holders is left as it is: its end is the latest of theirs, so it ends with the last live one
//! either way, and shared leases have no lock-delay.

use lock_domain::{FencingToken, Owner, ResourceName, Tenant};

use super::{Read, SharedTable};
use crate::semaphores::PermitError;

pub(super) fn record(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    fencing_token: FencingToken,
) -> Result<bool, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let ran_out = read.leases()?.iter().any(|lease| {
        &lease.owner == owner && lease.fencing_token == fencing_token && !lease.is_live_at(read.now)
    });
    if ran_out {
        table.delete_leases(tenant, resource, Some(owner))?;
    }
    Ok(ran_out)
}
