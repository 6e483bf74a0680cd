//! The sessions that batched operations are made under. An exclusive acquire or a lock's
//! release under a session runs in the batch statement as the session's holder: the batch
//! statement keeps the session from keepalives and ends (`FOR SHARE`, before it locks any lock
//! row, in the order every writer takes sessions) and writes for the operation only while the
//! session is live, a grant's row ending with the session (`postgres::writes::WRITE_BATCH`).
//! What the operation needs to be written that way (the session's holder, its lock-delay) never
//! changes while a session lives, so it is read once per session and kept here; whether the
//! session is still live is the statement's to decide.

use std::collections::HashMap;
use std::sync::Mutex;

use lock_domain::{RepositoryError, Session, SessionId, Tenant};

use crate::error::from_query;
use crate::pooled::Pooled;
use crate::sessions::SessionRows;

/// Sessions kept at most; past that the map starts again (a session not kept is read again).
const KEPT: usize = 65_536;

/// The sessions read so far, by their tenant and id.
#[derive(Default)]
pub(super) struct KnownSessions {
    known: Mutex<HashMap<(Tenant, SessionId), Session>>,
}

impl KnownSessions {
    /// Session `id` of `tenant` (the tenant of its sessions) as it was opened, live or not
    /// (its end may be out of date); `None` when there is no such session (any more).
    ///
    /// # Errors
    /// When the read fails, or the row is corrupt.
    pub(super) async fn get(
        &self,
        pooled: &Pooled,
        tenant: Tenant,
        id: SessionId,
    ) -> Result<Option<Session>, RepositoryError> {
        let key = (tenant, id);
        if let Some(session) = self.lock().get(&key) {
            return Ok(Some(session.clone()));
        }
        let (tenant, id) = key.clone();
        let read = pooled
            .run(move |conn, _| {
                let row = conn
                    .postgres()?
                    .session(&tenant, id.as_str())
                    .map_err(from_query)?;
                row.map(|row| row.session()).transpose()
            })
            .await?;
        if let Some(session) = &read {
            let mut known = self.lock();
            if known.len() >= KEPT {
                known.clear();
            }
            known.insert(key, session.clone());
        }
        Ok(read)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Tenant, SessionId), Session>> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
