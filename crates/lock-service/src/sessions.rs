//! The use cases of sessions: a view over the process's [`Core`], from
//! [`crate::LockService::sessions`]. A session is one lease of the store that keeps many holds
//! alive; what it holds is taken through each primitive's own use cases with the session as the
//! holder (`Owner::of_session` in the request's `LeaseTerms`), so nothing here acquires. Here:
//! open (with the tenant's `max_sessions`), keepalive, look, list, and the end that releases every
//! hold in one transaction and wakes their waiters; and observing one (its watch in
//! `observe/hub/sessions.rs`).

use lock_domain::{
    ForceReason, LeaseKind, LockDelay, Owner, Place, RepositoryError, Session, SessionEnd,
    SessionHold, SessionId, SessionOp, SessionPage, SessionQuery, Tenant, Ttl,
};

use crate::core::Core;
use crate::observe::{SessionObservation, SessionReads};
use crate::outcomes::{HoldEnd, Primitive};
use crate::quota::{Limit, OpenError, QuotaExceeded};

/// A session asked for: its owner label (the id when `None`), TTL and lock-delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSession {
    pub owner: Option<Owner>,
    pub ttl: Ttl,
    pub lock_delay: LockDelay,
}

/// Why a session was not opened.
#[derive(Debug)]
pub enum OpenSessionError {
    /// The store failed: no session was opened.
    Store(RepositoryError),
    /// The tenant's `max_sessions` live sessions are open already.
    QuotaExceeded(QuotaExceeded),
}

impl From<RepositoryError> for OpenSessionError {
    fn from(error: RepositoryError) -> Self {
        Self::Store(error)
    }
}

/// A session and its live holds.
pub type SessionHolds = (Session, Vec<SessionHold>);

/// The use cases of sessions.
#[derive(Clone, Copy)]
pub struct Sessions<'a> {
    pub(crate) core: &'a Core,
}

impl Sessions<'_> {
    /// Opens a session of `tenant` with a new id of 128 random bits.
    ///
    /// # Errors
    /// [`OpenSessionError::QuotaExceeded`] when the tenant has its `max_sessions` live sessions
    /// (counted in the store: every process's); [`OpenSessionError::Store`] when the store
    /// failed, or no secure random bits could be drawn.
    pub async fn open(
        &self,
        tenant: Tenant,
        request: OpenSession,
    ) -> Result<Session, OpenSessionError> {
        if let Some(allowed) = self.core.quotas.of(&tenant).get(Limit::MaxSessions) {
            let live = self.core.sessions.live_sessions(tenant.clone()).await?;
            if live >= allowed {
                let exceeded = QuotaExceeded {
                    limit: Limit::MaxSessions,
                    allowed,
                };
                return Err(OpenSessionError::QuotaExceeded(
                    self.core.over_quota(&tenant, exceeded),
                ));
            }
        }
        let mut bits = [0u8; 16];
        getrandom::fill(&mut bits).map_err(|error| {
            RepositoryError::internal(format!("no random bits for a session id: {error}"))
        })?;
        let op = SessionOp::Open {
            id: SessionId::from_random(bits),
            owner: request.owner,
            ttl: request.ttl,
            lock_delay: request.lock_delay,
        };
        let session = self
            .core
            .sessions
            .apply_session(tenant.clone(), op)
            .await?
            .opened()?;
        self.core.events.session_opened(&tenant, &session);
        Ok(session)
    }

    /// Moves the end of live session `id` (and so of every hold under it) to now + its TTL,
    /// first changing the TTL to `ttl` when given. `None` when the session is not live: a
    /// keepalive never revives one.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn keep_alive(
        &self,
        tenant: Tenant,
        id: SessionId,
        ttl: Option<Ttl>,
    ) -> Result<Option<Session>, RepositoryError> {
        let op = SessionOp::KeepAlive { id, ttl };
        let kept = self.core.sessions.apply_session(tenant.clone(), op).await;
        let kept = kept.and_then(lock_domain::SessionOutcome::kept);
        self.core.events.session_kept(&tenant, kept.as_ref().ok());
        kept
    }

    /// Live session `id` and its live holds, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn look(
        &self,
        tenant: Tenant,
        id: SessionId,
    ) -> Result<Option<SessionHolds>, RepositoryError> {
        self.core
            .sessions
            .apply_session(tenant, SessionOp::Look(id))
            .await?
            .looked()
    }

    /// A page of `tenant`'s live sessions, each with its count of live holds.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn list(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError> {
        self.core.sessions.list_sessions(tenant, query).await
    }

    /// Ends live session `id` and every hold under it, in one transaction: closed by its client,
    /// or with `force` by an admin (each hold recorded force-released with the reason). The
    /// waiters of every freed place in this process look at once. `None` when the session is not
    /// live.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn end(
        &self,
        tenant: Tenant,
        id: SessionId,
        force: Option<ForceReason>,
    ) -> Result<Option<SessionHolds>, RepositoryError> {
        let how = if force.is_some() {
            SessionEnd::ForceReleased
        } else {
            SessionEnd::Closed
        };
        let op = SessionOp::End { id, force };
        let Some((session, holds)) = self
            .core
            .sessions
            .apply_session(tenant.clone(), op)
            .await?
            .ended()?
        else {
            return Ok(None);
        };
        let ended_as = match how {
            SessionEnd::ForceReleased => HoldEnd::ForceReleased,
            _ => HoldEnd::Released,
        };
        for hold in &holds {
            let primitive = match hold.kind {
                LeaseKind::Semaphore => Primitive::Semaphore,
                LeaseKind::Election => Primitive::Election,
                LeaseKind::Lock => {
                    Primitive::of_lock(hold.grant.mode() == Some(lock_domain::LockMode::Shared))
                }
            };
            self.core
                .hold_ended(primitive, ended_as, Some(hold.grant.lease.acquired_at));
            self.core.quotas.lease_ended();
            let stored = hold.stored_tenant(&tenant);
            match &hold.grant.place {
                Place::Lock(name) => self.core.waiting.freed(&stored, name),
                Place::Semaphore(name) => self.core.permit_queues.wake(&stored, name),
            }
        }
        self.core
            .events
            .session_ended(&tenant, &session, how, &holds);
        Ok(Some((session, holds)))
    }

    /// Starts observing live session `id`: the session and its holds now, then each hold
    /// granted or released under it as it happens, and last the session's end with its reason
    /// (`SessionChange::Ended`), after which the changes end. `None` when the session is not
    /// live. Changes made through this process arrive at once, its running out within a few
    /// milliseconds of its end, other processes' changes within about [`crate::OBSERVE_POLL`].
    /// Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`OpenError::QuotaExceeded`] when the tenant has as many observers as its
    /// `max_observers` allows (asked after the session is found, so that an unknown session is
    /// `None` whatever the count); [`OpenError::Store`] when the first look failed.
    pub async fn observe(
        &self,
        tenant: Tenant,
        id: SessionId,
    ) -> Result<Option<SessionObservation>, OpenError> {
        let reads = SessionReads {
            sessions: std::sync::Arc::clone(&self.core.sessions),
            history: std::sync::Arc::clone(&self.core.history),
        };
        let Some(mut observation) = self
            .core
            .hub
            .observe_session(tenant.clone(), id, reads)
            .await?
        else {
            return Ok(None);
        };
        observation.seat = Some(self.core.observer_seat(&tenant)?);
        Ok(Some(observation))
    }
}
