//! The session guard: open a session, keep it alive in the background against a monotonic
//! clock, take locks (either mode, one or a set), permits and leaderships under it, say when it
//! is in jeopardy and when it is lost, and end it (with every hold) on drop.

mod health;

use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_domain::{
    Capacity, FencingToken, LeaseTerms, LeaseValue, LockDelay, LockMode, LockSet, Owner,
    PermitReleaseResult, PermitRequest, ReleaseResult, ResourceName, Session, SessionId, Ttl,
    Weight,
};
use lock_service::{
    AcquireRequest, Acquired, CampaignRequest, Campaigned, LockService, MultiAcquireRequest,
    MultiAcquired, OpenSession, PermitsAcquired, PermitsRequest,
};
use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::runtime::{guard_runtime, run_on};
use crate::{GuardError, GuardSettings};
use health::Health;
pub use health::SessionSignal;

/// An open session, kept alive in the background, under which locks, permits and leaderships
/// are taken; ended (with every hold) when dropped or [closed](SessionGuard::close).
///
/// Every hold taken through the guard is the session's: it lives exactly as long as the session
/// does, and no hold is renewed on its own. The guard keeps the session alive every
/// [`GuardSettings::renew_every`] (ttl/3 by default; after a failure, every
/// [`GuardSettings::retry_every`]) and measures it on this process's monotonic clock from the
/// moment each successful keepalive was SENT. Two signals come of it:
///
/// - [`SessionGuard::is_in_jeopardy`]: the first failed keepalive (no answer in time, the store
///   failed) raises it, the next successful one clears it. The session still lives; stop
///   starting new work until it clears, if that is cheap.
/// - [`SessionGuard::is_lost`]: at once when a keepalive answers that the session has ended
///   (closed behind the guard's back, forced, run out), and when no keepalive sent in the last
///   ttl minus [`GuardSettings::safety_margin`] succeeded: always **before** the session can run
///   out. Stop writing; every hold may be someone else's soon. A loss is for good: the guard
///   keeps nothing alive afterwards and takes nothing more ([`GuardError::SessionLost`]).
///
/// Check [`SessionGuard::is_lost`] before each write and send the hold's fencing token with it.
pub struct SessionGuard {
    service: LockService,
    session: Session,
    settings: GuardSettings,
    health: Arc<Health>,
    stop: watch::Sender<bool>,
    runtime: Option<Runtime>,
}

impl std::fmt::Debug for SessionGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionGuard")
            .field("id", &self.session.id)
            .field("owner", &self.session.owner)
            .field("ttl", &self.session.ttl)
            .field("lost", &self.is_lost())
            .field("jeopardy", &self.is_in_jeopardy())
            .finish_non_exhaustive()
    }
}

impl SessionGuard {
    /// Opens a session of `ttl` labelled `owner` (its id when `None`), with no lock-delay, in
    /// the default tenant and with the default timing ([`GuardSettings::for_ttl`]), and starts
    /// keeping it alive every ttl/3.
    ///
    /// # Errors
    /// [`GuardError::QuotaExceeded`] when the tenant's `max_sessions` are open;
    /// [`GuardError::Repository`] or [`GuardError::Timeout`] when the repository fails;
    /// [`GuardError::Runtime`].
    pub fn open(service: LockService, owner: Option<Owner>, ttl: Ttl) -> Result<Self, GuardError> {
        let request = OpenSession {
            owner,
            ttl,
            lock_delay: LockDelay::NONE,
        };
        Self::open_with(service, request, GuardSettings::for_ttl(ttl))
    }

    /// [`SessionGuard::open`] with a lock-delay, explicit timing and tenant.
    ///
    /// # Errors
    /// As [`SessionGuard::open`].
    pub fn open_with(
        service: LockService,
        request: OpenSession,
        settings: GuardSettings,
    ) -> Result<Self, GuardError> {
        let runtime = guard_runtime()?;
        let sent_at = Instant::now();
        let ttl = request.ttl;
        let session = {
            let (service, tenant) = (service.clone(), settings.tenant.clone());
            run_on(&runtime, settings.call_timeout, async move {
                service.sessions().open(tenant, request).await
            })??
        };
        let lasts = ttl.as_duration().saturating_sub(settings.safety_margin);
        let health = Arc::new(Health::new(sent_at, lasts));
        let (stop, stopped) = watch::channel(false);
        runtime.spawn(keep_alive_until_stopped(
            service.clone(),
            session.id.clone(),
            settings.clone(),
            Arc::clone(&health),
            stopped,
        ));
        Ok(Self {
            service,
            session,
            settings,
            health,
            stop,
            runtime: Some(runtime),
        })
    }

    /// The session's id: whoever has it may act for the session, so keep it as secret as a key.
    pub fn id(&self) -> &SessionId {
        &self.session.id
    }

    /// The session as it was opened (its `expires_at` is the first one; each keepalive moves
    /// it on).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Whether the session is lost: a keepalive answered that it has ended, or no keepalive
    /// sent in the last ttl minus the safety margin succeeded. Once true it stays true.
    pub fn is_lost(&self) -> bool {
        self.health.is_lost(Instant::now())
    }

    /// Whether a keepalive failed and none has succeeded since. The session still lives until
    /// [`SessionGuard::safe_until`].
    pub fn is_in_jeopardy(&self) -> bool {
        self.health.in_jeopardy()
    }

    /// The monotonic instant from which the session counts as lost unless a keepalive succeeds
    /// before it (the last successful keepalive's send time, plus ttl, less the margin).
    pub fn safe_until(&self) -> Instant {
        self.health.safe_until()
    }

    /// Calls `listener` on the keepalive task each time the session's signal changes:
    /// [`SessionSignal::Jeopardy`] at the first failed keepalive, [`SessionSignal::Safe`] at the
    /// next success, [`SessionSignal::Lost`] once, when a keepalive finds the session ended or
    /// at [`SessionGuard::safe_until`] (before the session can run out). Called at once with
    /// the current signal when it is not `Safe`. Keep it short: it runs on the task that keeps
    /// the session alive.
    pub fn on_signal(&self, listener: impl Fn(SessionSignal) + Send + Sync + 'static) {
        self.health.listen(Box::new(listener), Instant::now());
    }

    /// Takes the lock on `resource` in `mode` under the session, waiting up to `wait` for it
    /// (zero answers at once); returns the hold's fencing token.
    ///
    /// # Errors
    /// [`GuardError::Held`] when another holder has it (or a lock-delay keeps it, or the
    /// session holds it in the other mode); [`GuardError::SessionLost`] once the session is
    /// lost; [`GuardError::SessionNotFound`] when the store found it ended; the errors of the
    /// repository, the tenant's quota and the waiting queue.
    pub fn lock(
        &self,
        resource: ResourceName,
        mode: LockMode,
        wait: Duration,
    ) -> Result<FencingToken, GuardError> {
        let request = AcquireRequest {
            tenant: self.settings.tenant.clone(),
            resource: resource.clone(),
            mode,
            terms: self.terms(None),
            wait,
        };
        let service = self.service.clone();
        let outcome = self.call(wait, async move {
            service.locks().acquire(request, || false).await
        })??;
        match outcome {
            Acquired::Granted { lock, .. } => Ok(lock.fencing_token),
            Acquired::Held { .. }
            | Acquired::TimedOut { .. }
            | Acquired::Delayed { .. }
            | Acquired::ModeMismatch
            | Acquired::HungUp => Err(GuardError::Held(resource)),
        }
    }

    /// Takes every lock of `locks` (each in its mode) under the session, together or none,
    /// waiting up to `wait` until all are available at once; nothing is held while it waits.
    /// Returns their fencing tokens in the order of `locks`.
    ///
    /// # Errors
    /// [`GuardError::SetHeld`] with the locks that could not be had (none was taken);
    /// [`GuardError::Set`] when `locks` is empty, too long or names a resource twice; otherwise
    /// as [`SessionGuard::lock`].
    pub fn locks(
        &self,
        locks: Vec<(ResourceName, LockMode)>,
        wait: Duration,
    ) -> Result<Vec<FencingToken>, GuardError> {
        let request = MultiAcquireRequest {
            tenant: self.settings.tenant.clone(),
            set: LockSet::new(self.terms(None), locks)?,
            wait,
        };
        let service = self.service.clone();
        let outcome = self.call(wait, async move {
            service.locks().acquire_all(request, || false).await
        })??;
        match outcome {
            MultiAcquired::Granted { locks, .. } => {
                Ok(locks.into_iter().map(|lock| lock.fencing_token).collect())
            }
            MultiAcquired::Unavailable { resources }
            | MultiAcquired::TimedOut { resources, .. } => Err(GuardError::SetHeld(resources)),
            MultiAcquired::HungUp => Err(GuardError::SetHeld(Vec::new())),
        }
    }

    /// Takes `permits` of semaphore `name` (of `limit`) under the session, waiting up to
    /// `wait` for room; returns the grant's fencing token.
    ///
    /// # Errors
    /// [`GuardError::Unavailable`] when too few permits are free; [`GuardError::Conflict`] when
    /// the holders use another limit or the session holds other permits of it; otherwise as
    /// [`SessionGuard::lock`].
    pub fn permits(
        &self,
        name: ResourceName,
        permits: Weight,
        limit: Capacity,
        wait: Duration,
    ) -> Result<FencingToken, GuardError> {
        let request = PermitsRequest {
            tenant: self.settings.tenant.clone(),
            name: name.clone(),
            permit: PermitRequest {
                permits,
                limit,
                terms: self.terms(None),
            },
            wait,
        };
        let service = self.service.clone();
        let outcome = self.call(wait, async move {
            service.semaphores().acquire(request, || false).await
        })??;
        match outcome {
            PermitsAcquired::Granted { permit, .. } => Ok(permit.lease.fencing_token),
            PermitsAcquired::Unavailable { available, .. }
            | PermitsAcquired::TimedOut { available, .. } => {
                Err(GuardError::Unavailable { name, available })
            }
            PermitsAcquired::HungUp => Err(GuardError::Unavailable { name, available: 0 }),
            PermitsAcquired::LimitMismatch(current) => Err(GuardError::Conflict {
                name,
                why: format!("its holders use limit {}", current.get()),
            }),
            PermitsAcquired::PermitsMismatch(held) => Err(GuardError::Conflict {
                name,
                why: format!("this session holds {} permits of it", held.get()),
            }),
        }
    }

    /// Campaigns in `election` under the session, proclaiming `value` once elected, waiting up
    /// to `wait` for the office; returns the leader's term (its fencing token). The leader
    /// shows the session's label as its candidate.
    ///
    /// # Errors
    /// [`GuardError::NotElected`] when another candidate leads; otherwise as
    /// [`SessionGuard::lock`].
    pub fn campaign(
        &self,
        election: ResourceName,
        value: Option<LeaseValue>,
        wait: Duration,
    ) -> Result<FencingToken, GuardError> {
        let request = CampaignRequest {
            tenant: self.settings.tenant.clone(),
            election: election.clone(),
            terms: self.terms(value),
            wait,
        };
        let service = self.service.clone();
        let outcome = self.call(wait, async move {
            service.elections().campaign(request, || false).await
        })??;
        match outcome {
            Campaigned::Elected { leader, .. } => Ok(leader.term),
            Campaigned::NotElected { .. } | Campaigned::HungUp => {
                Err(GuardError::NotElected(election))
            }
        }
    }

    /// Releases the session's lock on `resource` (in either mode), and nothing else.
    ///
    /// # Errors
    /// [`GuardError::Repository`] or [`GuardError::Timeout`].
    pub fn release_lock(&self, resource: ResourceName) -> Result<ReleaseResult, GuardError> {
        let (service, tenant, holder) = self.release_parts();
        Ok(self.call(Duration::ZERO, async move {
            service.locks().release(tenant, resource, holder).await
        })??)
    }

    /// Releases the session's permits of semaphore `name`, and nothing else.
    ///
    /// # Errors
    /// [`GuardError::Repository`] or [`GuardError::Timeout`].
    pub fn release_permits(&self, name: ResourceName) -> Result<ReleaseResult, GuardError> {
        let (service, tenant, holder) = self.release_parts();
        let released = self.call(Duration::ZERO, async move {
            service.semaphores().release(tenant, name, holder).await
        })??;
        Ok(match released {
            PermitReleaseResult::Released(token) => ReleaseResult::Released(token),
            PermitReleaseResult::NotFound => ReleaseResult::NotFound,
        })
    }

    /// The session resigns its leadership of `election`, and nothing else.
    ///
    /// # Errors
    /// [`GuardError::Repository`] or [`GuardError::Timeout`].
    pub fn resign(&self, election: ResourceName) -> Result<ReleaseResult, GuardError> {
        let (service, tenant, holder) = self.release_parts();
        Ok(self.call(Duration::ZERO, async move {
            service.elections().resign(tenant, election, holder).await
        })??)
    }

    /// Stops the keepalives and ends the session, and every hold under it, in one transaction;
    /// `Ok(true)` when it ended now, `Ok(false)` when it had ended already (drop does the same
    /// and ignores the outcome).
    ///
    /// # Errors
    /// [`GuardError::Repository`] or [`GuardError::Timeout`] when the end failed; the session
    /// then runs out at its expiry.
    pub fn close(mut self) -> Result<bool, GuardError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<bool, GuardError> {
        let Some(runtime) = self.runtime.take() else {
            return Ok(false);
        };
        // A keepalive in flight may land after the end: it then finds no session and changes
        // nothing, since a keepalive never revives one.
        let _ = self.stop.send(true);
        let (service, tenant) = (self.service.clone(), self.settings.tenant.clone());
        let id = self.session.id.clone();
        let ended = run_on(&runtime, self.settings.call_timeout, async move {
            service.sessions().end(tenant, id, None).await
        });
        runtime.shutdown_background();
        Ok(ended??.is_some())
    }

    /// The terms of a hold under the session: the session is the holder; its TTL and
    /// lock-delay are the session's (the TTL here only stands in for it).
    fn terms(&self, value: Option<LeaseValue>) -> LeaseTerms {
        LeaseTerms::new(
            Owner::of_session(&self.session.id),
            Ttl::SESSION_HELD,
            value,
        )
    }

    fn release_parts(&self) -> (LockService, lock_domain::Tenant, Owner) {
        (
            self.service.clone(),
            self.settings.tenant.clone(),
            Owner::of_session(&self.session.id),
        )
    }

    /// Runs a call of the service on the guard's runtime, allowing it `wait` on top of the call
    /// timeout; refused once the session is lost.
    fn call<T: Send + 'static>(
        &self,
        wait: Duration,
        future: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T, GuardError> {
        if self.is_lost() {
            return Err(GuardError::SessionLost);
        }
        let runtime = self.runtime.as_ref().ok_or(GuardError::SessionLost)?;
        run_on(runtime, self.settings.call_timeout + wait, future)
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Keeps session `id` alive until stopped or lost, telling `health` what each keepalive found.
async fn keep_alive_until_stopped(
    service: LockService,
    id: SessionId,
    settings: GuardSettings,
    health: Arc<Health>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut pause = settings.renew_every;
    loop {
        // Awake at the deadline too, to tell the listeners of a loss when it comes, not at the
        // next retry.
        let deadline = health
            .safe_until()
            .saturating_duration_since(Instant::now());
        tokio::select! {
            _ = stopped.changed() => return,
            () = tokio::time::sleep(pause.min(deadline)) => {}
        }
        if health.is_lost(Instant::now()) {
            health.publish(Instant::now());
            return;
        }
        let sent_at = Instant::now();
        let sessions = service.sessions();
        let keepalive = sessions.keep_alive(settings.tenant.clone(), id.clone(), None);
        let answer = tokio::time::timeout(settings.call_timeout, keepalive).await;
        let now = Instant::now();
        let lives = match answer {
            Ok(Ok(Some(_))) => health.kept(sent_at, now),
            // Ended (closed, forced or run out): every hold ended with it.
            Ok(Ok(None)) => {
                health.ended();
                false
            }
            // Unavailable, failed or too slow: the session still runs; try again soon.
            Ok(Err(_)) | Err(_) => health.failed(now),
        };
        health.publish(now);
        if !lives {
            return;
        }
        pause = if health.in_jeopardy() {
            settings.retry_every
        } else {
            settings.renew_every
        };
    }
}
