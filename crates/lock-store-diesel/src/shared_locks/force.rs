//! An admin's force-release of a lock, whichever its mode: under the row's lock, every live
//! lease ends (the exclusive holder's, or every reader's), and so does the row with any
//! lock-delay, so the lock is free at once. The history records each live lease as
//! force-released with the reason (a lease that had run out, as expired).

use lock_domain::{shared_lock, ForceReason, HistoryEvent, Lock, ResourceName, Tenant};

use super::{Read, SharedTable};
use crate::semaphores::PermitError;

pub(super) fn release(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    reason: &ForceReason,
) -> Result<Vec<Lock>, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let mut ended: Vec<Lock> = read
        .row
        .iter()
        .filter(|row| !row.owner.is_shared_holders() && row.is_live_at(read.now))
        .cloned()
        .collect();
    ended.extend(
        read.leases()?
            .iter()
            .filter(|lease| lease.is_live_at(read.now))
            .map(|lease| shared_lock(resource, lease)),
    );
    table.say_ending(Some(HistoryEvent::ForceReleased), Some(reason.as_str()))?;
    if read.row.is_some() {
        table.end_row(tenant, resource, read.now_ms)?;
    }
    if !read.rows.is_empty() {
        table.delete_leases(tenant, resource, None)?;
    }
    table.say_ending(None, None)?;
    Ok(ended)
}
