//! The reference store's sessions: each kept in a map under the one mutex, its holds as ordinary
//! leases of its holder whose ends are the session's. A keepalive here moves every hold (the
//! reference store writes no rows; the database stores keep one end, the session's, instead).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{InMemoryLockRepository, State};
use crate::{
    shared_lock, Grant, HistoryEvent, LeaseOp, LeaseOutcome, ListedSession, Owner, Permit, Place,
    RepositoryError, Session, SessionHold, SessionId, SessionOp, SessionOutcome, SessionPage,
    SessionQuery, SessionStore, Tenant,
};

impl State {
    /// `op` as it is applied under the session it names (if any), or the answer it gets without
    /// being applied ([`LeaseOp::with_session`]), with the session's end for its grants.
    pub(super) fn resolve_session(
        &self,
        tenant: &Tenant,
        op: LeaseOp,
        now: DateTime<Utc>,
    ) -> Result<(LeaseOp, Option<DateTime<Utc>>), LeaseOutcome> {
        let Some(id) = op.session() else {
            return Ok((op, None));
        };
        let session = self.sessions.get(&(crate::sessions_tenant(tenant), id));
        let op = op.with_session(session, now)?;
        Ok((op, session.map(|session| session.expires_at)))
    }

    /// Moves the end of `holder`'s lease on `place` to `until` (a hold under a session ends
    /// with it).
    pub(super) fn hold_until(
        &mut self,
        tenant: &Tenant,
        place: &Place,
        holder: &Owner,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) {
        let key = (tenant.clone(), place.name().clone());
        match place {
            Place::Lock(_) => {
                if let Some(lock) = self.locks.get_mut(&key).filter(|l| &l.owner == holder) {
                    lock.expires_at = until;
                    return;
                }
                let reader = self
                    .shared
                    .get_mut(&key)
                    .and_then(|leases| leases.iter_mut().find(|lease| &lease.owner == holder));
                if let Some(reader) = reader {
                    reader.expires_at = until;
                    self.rewrite_shared_row(&key, now);
                }
            }
            Place::Semaphore(_) => {
                let grant = self
                    .semaphores
                    .get_mut(&key)
                    .and_then(|leases| leases.iter_mut().find(|lease| &lease.owner == holder));
                if let Some(grant) = grant {
                    grant.expires_at = until;
                }
            }
        }
    }

    /// `grant`, made under a session that ends at `until`, ending then.
    pub(super) fn hold_grant_until(
        &mut self,
        tenant: &Tenant,
        mut grant: Grant,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Grant {
        self.hold_until(tenant, &grant.place, &grant.lease.owner, until, now);
        grant.lease.expires_at = until;
        grant
    }

    /// Every live lease of `holder` in `tenant` and its election namespace, by kind and name.
    fn holds_of(&self, tenant: &Tenant, holder: &Owner, now: DateTime<Utc>) -> Vec<SessionHold> {
        let mut holds: Vec<SessionHold> = [tenant.clone(), tenant.elections()]
            .iter()
            .flat_map(|stored| {
                self.holds_in(stored, holder, now)
                    .into_iter()
                    .map(|grant| SessionHold::of(stored, grant))
            })
            .collect();
        holds.sort_by(|a, b| (a.kind, &a.grant.place).cmp(&(b.kind, &b.grant.place)));
        holds
    }

    /// Every live lease of `holder` in `tenant` (as stored), by place.
    fn holds_in(&self, tenant: &Tenant, holder: &Owner, now: DateTime<Utc>) -> Vec<Grant> {
        let locks = self
            .locks
            .iter()
            .filter(|((t, _), lock)| t == tenant && &lock.owner == holder && lock.is_live_at(now))
            .map(|(_, lock)| Grant::of_lock(lock.clone()));
        let readers = self
            .shared
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .flat_map(|((_, name), leases)| {
                leases
                    .iter()
                    .filter(|lease| &lease.owner == holder && lease.is_live_at(now))
                    .map(|lease| Grant::of_lock(shared_lock(name, lease)))
            });
        let permits = self
            .semaphores
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .flat_map(|((_, name), leases)| {
                leases
                    .iter()
                    .filter(|lease| &lease.owner == holder && lease.is_live_at(now))
                    .map(|lease| {
                        Grant::of_permit(Permit {
                            name: name.clone(),
                            lease: lease.clone(),
                        })
                    })
            });
        let mut holds: Vec<Grant> = locks.chain(readers).chain(permits).collect();
        holds.sort_by(|a, b| a.place.cmp(&b.place));
        holds
    }

    /// The live session `id` of `tenant`.
    fn live_session(&self, tenant: &Tenant, id: &SessionId, now: DateTime<Utc>) -> Option<Session> {
        self.sessions
            .get(&(tenant.clone(), id.clone()))
            .filter(|session| session.is_live_at(now))
            .cloned()
    }

    fn apply_session(
        &mut self,
        tenant: Tenant,
        op: SessionOp,
        now: DateTime<Utc>,
    ) -> Result<SessionOutcome, RepositoryError> {
        Ok(match op {
            SessionOp::Open {
                id,
                owner,
                ttl,
                lock_delay,
            } => {
                let key = (tenant, id.clone());
                if self.sessions.contains_key(&key) {
                    return Err(RepositoryError::internal("a session id was drawn twice"));
                }
                let owner = match owner {
                    Some(owner) => owner,
                    None => Owner::parse(id.as_str())
                        .map_err(|e| RepositoryError::internal(e.to_string()))?,
                };
                let session = Session {
                    id,
                    owner,
                    ttl,
                    lock_delay,
                    created_at: now,
                    expires_at: now + ttl.as_time_delta(),
                };
                self.sessions.insert(key, session.clone());
                SessionOutcome::Opened(session)
            }
            SessionOp::KeepAlive { id, ttl } => {
                let Some(mut session) = self.live_session(&tenant, &id, now) else {
                    return Ok(SessionOutcome::NotFound);
                };
                let holder = session.holder();
                let holds = self.holds_of(&tenant, &holder, now);
                session.ttl = ttl.unwrap_or(session.ttl);
                session.expires_at = now + session.ttl.as_time_delta();
                for hold in &holds {
                    let stored = hold.stored_tenant(&tenant);
                    let place = &hold.grant.place;
                    self.hold_until(&stored, place, &holder, session.expires_at, now);
                }
                self.sessions.insert((tenant, id), session.clone());
                SessionOutcome::Kept(session)
            }
            SessionOp::End { id, force } => {
                let Some(session) = self.live_session(&tenant, &id, now) else {
                    return Ok(SessionOutcome::NotFound);
                };
                if let Some(reason) = force {
                    self.history.ending = Some((
                        HistoryEvent::ForceReleased,
                        Some(reason.as_str().to_owned()),
                    ));
                }
                let holder = session.holder();
                let holds = self.holds_of(&tenant, &holder, now);
                for hold in &holds {
                    let (name, owner) = (hold.grant.place.name().clone(), holder.clone());
                    let stored = hold.stored_tenant(&tenant);
                    // Each hold is live: it is released (or, forced, force-released).
                    match &hold.grant.place {
                        Place::Lock(_) => {
                            self.release_held(stored, name, owner, now)?;
                        }
                        Place::Semaphore(_) => {
                            self.release_permits(stored, name, owner, now)?;
                        }
                    }
                }
                self.sessions.remove(&(tenant, id));
                SessionOutcome::Ended { session, holds }
            }
            SessionOp::Look(id) => match self.live_session(&tenant, &id, now) {
                Some(session) => SessionOutcome::Looked {
                    holds: self.holds_of(&tenant, &session.holder(), now),
                    session,
                },
                None => SessionOutcome::NotFound,
            },
        })
    }
}

#[async_trait]
impl SessionStore for InMemoryLockRepository {
    async fn apply_session(
        &self,
        tenant: Tenant,
        op: SessionOp,
    ) -> Result<SessionOutcome, RepositoryError> {
        let now = self.clock.now();
        self.state().apply_session(tenant, op, now)
    }

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError> {
        let now = self.clock.now();
        let state = self.state();
        let mut live: Vec<&Session> = state
            .sessions
            .iter()
            .filter(|((t, id), session)| {
                t == &tenant
                    && session.is_live_at(now)
                    && id.as_str().starts_with(query.prefix.as_str())
                    && query
                        .after
                        .as_ref()
                        .is_none_or(|after| id.as_str() > after.as_str())
            })
            .map(|(_, session)| session)
            .collect();
        live.sort_by(|a, b| a.id.cmp(&b.id));
        let has_more = live.len() > query.limit.get();
        let sessions = live
            .into_iter()
            .take(query.limit.get())
            .map(|session| ListedSession {
                holds: state.holds_of(&tenant, &session.holder(), now).len() as u64,
                session: session.clone(),
            })
            .collect();
        Ok(SessionPage { sessions, has_more })
    }

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        let now = self.clock.now();
        let state = self.state();
        Ok(state
            .sessions
            .iter()
            .filter(|((t, _), session)| t == &tenant && session.is_live_at(now))
            .count() as u64)
    }
}
