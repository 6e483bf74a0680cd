//! Multi-lock on both backends, in one transaction: lock every row of the set in bytewise name
//! order (the same order in every process, so two sets never wait for each other in a circle),
//! read the clock once all are held, let the domain decide each lock (`decide_claim`, as its own acquire), and make
//! every grant or none.

use lock_domain::{
    decide_claim, Claim, ClaimDecision, LeaseTerms, LockDelay, LockMode, LockSet, LockStep,
    MultiAcquireOutcome, Place, RepositoryError, Tenant,
};

use super::{at, grant_exclusive, grant_shared, PermitError, Read, SharedTable};

/// Runs the multi-lock `set` for `tenant` on `table` (inside the caller's transaction).
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt; the caller rolls back, and then
/// nothing was granted.
pub(crate) fn acquire_all(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    set: &LockSet,
) -> Result<MultiAcquireOutcome, PermitError> {
    let locks = set.locks();
    let mut reads: Vec<Option<Read>> = (0..locks.len()).map(|_| None).collect();
    for index in set.in_key_order() {
        reads[index] = Some(Read::locked(table, tenant, &locks[index].0, true)?);
    }
    // One instant for the whole set, once every row is held.
    let now_ms = table.now_ms()?;
    let now = at(now_ms)?;
    let mut steps = Vec::with_capacity(locks.len());
    for ((resource, mode), read) in locks.iter().zip(reads.iter_mut()) {
        let read = read
            .as_mut()
            .ok_or_else(|| RepositoryError::internal("a lock of the set was not read"))?;
        read.now_ms = now_ms;
        read.now = now;
        let place = Place::Lock((*resource).clone());
        let claim = Claim::of_mode(*mode);
        let step = match decide_claim(&place, &read.kept_leases()?, set.owner(), claim, now) {
            ClaimDecision::Refused(_) => LockStep::Refused,
            ClaimDecision::Extend(token) => LockStep::Extend(token),
            ClaimDecision::GrantNew => LockStep::GrantNew,
        };
        steps.push((resource, *mode, step));
    }
    let refused: Vec<_> = steps
        .iter()
        .filter(|(_, _, step)| *step == LockStep::Refused)
        .map(|(resource, _, _)| (*resource).clone())
        .collect();
    if !refused.is_empty() {
        return Ok(MultiAcquireOutcome::Unavailable(refused));
    }
    let mut granted = Vec::with_capacity(locks.len());
    for ((resource, mode, step), read) in steps.into_iter().zip(reads.iter()) {
        let read = read
            .as_ref()
            .ok_or_else(|| RepositoryError::internal("a lock of the set was not read"))?;
        let (owner, ttl, value) = (set.owner(), set.ttl(), set.value().cloned());
        let lock = match mode {
            LockMode::Shared => {
                grant_shared(table, tenant, resource, read, owner, ttl, value, step)?
            }
            LockMode::Exclusive => {
                // A set's grants keep no place after they run out.
                let terms = LeaseTerms {
                    owner: owner.clone(),
                    ttl,
                    value,
                    lock_delay: LockDelay::NONE,
                };
                grant_exclusive(table, tenant, resource, read, &terms, step)?
            }
        };
        granted.push(lock);
    }
    Ok(MultiAcquireOutcome::Granted(granted))
}
