//! The guard: acquire (a lock, or permits of a semaphore), renew in the background against a
//! monotonic clock, release on drop.

mod held;
mod permits;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lock_domain::{FencingToken, Owner, ReleaseResult, ResourceName, Ttl};
use lock_service::{AcquireRequest, Acquired, LockService};
use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::runtime::{guard_runtime, run_on};
use crate::{GuardError, GuardSettings};
use held::Held;

/// What the renewal task and the guard's owner share.
#[derive(Debug)]
struct Lease {
    /// When the last successful renewal (or the acquire) was SENT: the lease runs at least ttl
    /// from then, whatever the answer's latency.
    renewed_at: Mutex<Instant>,
    /// A renewal was answered NotFound/Forbidden: the lock is someone else's or nobody's.
    lost: AtomicBool,
}

/// A held lock (or a grant of semaphore permits, [`LockGuard::acquire_permits`]), renewed in the
/// background, released when dropped (or by [`LockGuard::release`]).
///
/// The lease is measured on this process's monotonic clock from the moment each successful
/// renewal request was sent, so a slow answer never makes the guard think it has more time than
/// it has. Check [`LockGuard::is_safe`] before each write and send [`LockGuard::fencing_token`]
/// with it, so that the downstream store can refuse a write from a holder that lost the lock.
pub struct LockGuard {
    service: LockService,
    held: Held,
    owner: Owner,
    token: FencingToken,
    ttl: Ttl,
    settings: GuardSettings,
    lease: Arc<Lease>,
    stop: watch::Sender<bool>,
    runtime: Option<Runtime>,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("held", &self.held)
            .field("owner", &self.owner)
            .field("token", &self.token)
            .field("ttl", &self.ttl)
            .field("safe", &self.is_safe())
            .finish_non_exhaustive()
    }
}

impl LockGuard {
    /// Acquires `resource` for `owner` with the default timing ([`GuardSettings::for_ttl`]) in
    /// the default tenant, and starts renewing it every ttl/3.
    ///
    /// # Errors
    /// [`GuardError::Held`] when another owner holds it; [`GuardError::Repository`] or
    /// [`GuardError::Timeout`] when the repository fails; [`GuardError::Runtime`].
    pub fn acquire(
        service: LockService,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
    ) -> Result<Self, GuardError> {
        Self::acquire_with(service, resource, owner, ttl, GuardSettings::for_ttl(ttl))
    }

    /// [`LockGuard::acquire`] with explicit timing and tenant.
    ///
    /// # Errors
    /// As [`LockGuard::acquire`].
    pub fn acquire_with(
        service: LockService,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        settings: GuardSettings,
    ) -> Result<Self, GuardError> {
        let runtime = guard_runtime()?;
        let sent_at = Instant::now();
        let outcome = {
            let request = AcquireRequest {
                tenant: settings.tenant.clone(),
                resource: resource.clone(),
                wait: Duration::ZERO,
                mode: lock_domain::LockMode::Exclusive,
                terms: lock_domain::LeaseTerms {
                    owner: owner.clone(),
                    ttl,
                    value: None,
                    lock_delay: lock_domain::LockDelay::NONE,
                },
            };
            let service = service.clone();
            run_on(&runtime, settings.call_timeout, async move {
                service.locks().acquire(request, || false).await
            })?
        };
        let token = match outcome {
            Ok(Acquired::Granted { lock, .. }) => lock.fencing_token,
            // A mode mismatch: the owner holds the lock shared, so it is not this guard's to hold.
            Ok(
                Acquired::Held { .. }
                | Acquired::ModeMismatch
                | Acquired::TimedOut { .. }
                | Acquired::Delayed { .. }
                | Acquired::HungUp,
            ) => return Err(GuardError::Held(resource)),
            Err(error) => return Err(error.into()),
        };
        Ok(Self::start(
            service,
            Held::Lock(resource),
            owner,
            token,
            ttl,
            settings,
            runtime,
            sent_at,
        ))
    }

    /// Starts renewing what was just granted (its acquire sent at `sent_at`).
    #[allow(clippy::too_many_arguments)]
    fn start(
        service: LockService,
        held: Held,
        owner: Owner,
        token: FencingToken,
        ttl: Ttl,
        settings: GuardSettings,
        runtime: Runtime,
        sent_at: Instant,
    ) -> Self {
        let lease = Arc::new(Lease {
            renewed_at: Mutex::new(sent_at),
            lost: AtomicBool::new(false),
        });
        let (stop, stopped) = watch::channel(false);
        runtime.spawn(renew_until_stopped(
            service.clone(),
            held.clone(),
            owner.clone(),
            ttl,
            settings.clone(),
            Arc::clone(&lease),
            stopped,
        ));
        Self {
            service,
            held,
            owner,
            token,
            ttl,
            settings,
            lease,
            stop,
            runtime: Some(runtime),
        }
    }

    /// The fencing token of this grant: send it with every write made under the lock.
    pub fn fencing_token(&self) -> FencingToken {
        self.token
    }

    /// The locked resource, or the semaphore's name.
    pub fn resource(&self) -> &ResourceName {
        self.held.name()
    }

    /// Whether the lease can still be counted on: no renewal was refused and the last
    /// successful one was sent less than ttl minus the safety margin ago. Once false because
    /// the lease was lost it stays false; after renewal failures it turns true again when a
    /// renewal succeeds while the lock is still ours.
    pub fn is_safe(&self) -> bool {
        !self.is_lost() && Instant::now() < self.safe_until()
    }

    /// Whether a renewal was refused (NotFound or Forbidden): the lock is no longer ours.
    pub fn is_lost(&self) -> bool {
        self.lease.lost.load(Ordering::SeqCst)
    }

    /// The monotonic instant until which the lease can be counted on, unless it was lost.
    pub fn safe_until(&self) -> Instant {
        let renewed_at = *self
            .lease
            .renewed_at
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        renewed_at
            + self
                .ttl
                .as_duration()
                .saturating_sub(self.settings.safety_margin)
    }

    /// Stops renewing and releases the lock, reporting the outcome (drop does the same and
    /// ignores it).
    ///
    /// # Errors
    /// [`GuardError::Repository`] or [`GuardError::Timeout`] when the release failed; the lock
    /// then ends at its expiry.
    pub fn release(mut self) -> Result<ReleaseResult, GuardError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<ReleaseResult, GuardError> {
        let Some(runtime) = self.runtime.take() else {
            return Ok(ReleaseResult::NotFound);
        };
        // A renewal in flight may land after the release: it then finds no lock and changes
        // nothing, since a renew never creates one.
        let _ = self.stop.send(true);
        let (service, settings) = (self.service.clone(), self.settings.clone());
        let (held, owner) = (self.held.clone(), self.owner.clone());
        let result = run_on(&runtime, self.settings.call_timeout, async move {
            held.release(service, settings, owner).await
        });
        runtime.shutdown_background();
        Ok(result??)
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

async fn renew_until_stopped(
    service: LockService,
    held: Held,
    owner: Owner,
    ttl: Ttl,
    settings: GuardSettings,
    lease: Arc<Lease>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut pause = settings.renew_every;
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            () = tokio::time::sleep(pause) => {}
        }
        let sent_at = Instant::now();
        let renewal = held.renew(&service, &settings, &owner, ttl);
        pause = match tokio::time::timeout(settings.call_timeout, renewal).await {
            Ok(Ok(true)) => {
                *lease
                    .renewed_at
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = sent_at;
                settings.renew_every
            }
            Ok(Ok(false)) => {
                lease.lost.store(true, Ordering::SeqCst);
                return;
            }
            // Unavailable, failed or too slow: the lease still runs; try again soon.
            Ok(Err(_)) | Err(_) => settings.retry_every,
        };
    }
}
