//! An admin's force-release of a lock, whichever its mode: under the row's lock, every live
//! lease ends (the exclusive holder's, or every reader's), and so does the row with any
//! lock-delay, so the lock is free at once. The history records each live lease as
//! force-released with the reason (a lease that had run out, as expired: a session's hold too,
//! whose row says "while the session lives").

use lock_domain::{shared_lock, ForceReason, HistoryEvent, Lock, ResourceName, Tenant};

use super::{Read, SharedTable};
use crate::semaphores::PermitError;
use crate::sessions::end_run_out_holds;

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
    // A hold of a session that ran out is over, though its row still says "while the session
    // lives": it ends as expired, not force-released.
    let leases = read.leases()?;
    let exclusive = read
        .row
        .iter()
        .filter(|row| !row.owner.is_shared_holders())
        .map(|row| &row.owner);
    let run_out: Vec<&str> = exclusive
        .chain(leases.iter().map(|lease| &lease.owner))
        .filter(|owner| owner.session().is_some())
        .filter(|owner| !ended.iter().any(|lock| &lock.owner == *owner))
        .map(|owner| owner.as_str())
        .collect();
    if !run_out.is_empty() {
        table.say_ending(Some(HistoryEvent::Expired), None)?;
        end_run_out_holds(
            table.session_rows(),
            tenant,
            "lock",
            resource.as_str(),
            &run_out,
        )?;
    }
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
