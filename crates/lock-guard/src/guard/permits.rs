//! A guard over semaphore permits: the same renewals, safety clock and release as a lock's.

use std::time::{Duration, Instant};

use lock_domain::{Capacity, Owner, PermitRequest, ResourceName, Ttl, Weight};
use lock_service::{LockService, PermitsAcquired, PermitsRequest};

use super::held::Held;
use super::LockGuard;
use crate::runtime::{guard_runtime, run_on};
use crate::{GuardError, GuardSettings};

impl LockGuard {
    /// Acquires `permits` of semaphore `name` (of `limit`) for `owner` with the default timing
    /// in the default tenant, and starts renewing the grant every ttl/3: at most `limit`
    /// permits are held at once by all the guards and clients of the semaphore.
    ///
    /// # Errors
    /// [`GuardError::Unavailable`] when too few permits are free; [`GuardError::Conflict`]
    /// when the holders use another limit or `owner` holds other permits;
    /// [`GuardError::Repository`] or [`GuardError::Timeout`] when the repository fails;
    /// [`GuardError::Runtime`].
    pub fn acquire_permits(
        service: LockService,
        name: ResourceName,
        owner: Owner,
        permits: Weight,
        limit: Capacity,
        ttl: Ttl,
    ) -> Result<Self, GuardError> {
        let settings = GuardSettings::for_ttl(ttl);
        Self::acquire_permits_with(service, name, owner, permits, limit, ttl, settings)
    }

    /// [`LockGuard::acquire_permits`] with explicit timing and tenant.
    ///
    /// # Errors
    /// As [`LockGuard::acquire_permits`].
    pub fn acquire_permits_with(
        service: LockService,
        name: ResourceName,
        owner: Owner,
        permits: Weight,
        limit: Capacity,
        ttl: Ttl,
        settings: GuardSettings,
    ) -> Result<Self, GuardError> {
        let runtime = guard_runtime()?;
        let sent_at = Instant::now();
        let request = PermitRequest {
            permits,
            limit,
            terms: lock_domain::LeaseTerms::new(owner.clone(), ttl, None),
        };
        let outcome = {
            let request = PermitsRequest {
                tenant: settings.tenant.clone(),
                name: name.clone(),
                permit: request,
                wait: Duration::ZERO,
            };
            let service = service.clone();
            run_on(&runtime, settings.call_timeout, async move {
                service.semaphores().acquire(request, || false).await
            })?
        };
        let token = match outcome {
            Ok(PermitsAcquired::Granted { permit, .. }) => permit.lease.fencing_token,
            Ok(PermitsAcquired::Unavailable { available, .. })
            | Ok(PermitsAcquired::TimedOut { available, .. }) => {
                return Err(GuardError::Unavailable { name, available })
            }
            Ok(PermitsAcquired::HungUp) => {
                return Err(GuardError::Unavailable { name, available: 0 })
            }
            Ok(PermitsAcquired::LimitMismatch(current)) => {
                return Err(GuardError::Conflict {
                    name,
                    why: format!("its holders use limit {}", current.get()),
                })
            }
            Ok(PermitsAcquired::PermitsMismatch(held)) => {
                return Err(GuardError::Conflict {
                    name,
                    why: format!("this owner holds {} permits of it", held.get()),
                })
            }
            Err(error) => return Err(error.into()),
        };
        let held = Held::Permits(name);
        Ok(Self::start(
            service, held, owner, token, ttl, settings, runtime, sent_at,
        ))
    }
}
