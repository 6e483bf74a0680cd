//! The sessions a batch's operations are made under. A batch that holds one runs in a
//! transaction: first its sessions are read and kept from keepalives and ends (`FOR SHARE`,
//! before any lock row is locked, in the order every writer takes them), then each operation is
//! decided on its session by the domain (`LeaseOp::with_session`): under a live session it runs
//! in the statement as the session's holder, whose grant ends with the session; under an ended
//! one it is answered at once (404) and writes nothing. The holds granted are noted in the same
//! transaction, as `sessions::under_session` notes one; see `sessions.rs`.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use diesel::QueryResult;
use lock_domain::{
    Claim, Grant, LeaseOp, LeaseOutcome, LeaseTerms, Lock, Place, RepositoryError, ResourceName,
    Session, SessionHold, SessionId, Tenant,
};

use super::queue::{Outcome, Queued};
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
use crate::postgres::writes::{BatchRow, Operation};
use crate::sessions::batch::{note_all, share_all};

/// The session `operation` on `tenant`'s lock names, with the tenant of its sessions.
fn named(tenant: &Tenant, operation: &Operation) -> Option<(Tenant, SessionId)> {
    let owner = match operation {
        Operation::Acquire { owner, .. }
        | Operation::Release { owner }
        | Operation::Renew { owner, .. } => owner,
    };
    Some((lock_domain::sessions_tenant(tenant), owner.session()?))
}

/// Whether any operation of `batch` is made under a session.
pub(super) fn any(batch: &[Queued]) -> bool {
    batch
        .iter()
        .any(|queued| named(&queued.key.0, &queued.operation).is_some())
}

/// What a batch's operation comes to, decided on its session.
pub(super) enum Decided {
    /// Made under no session: it runs as queued.
    AsQueued,
    /// Made under a live session: it runs as this operation (by the session's holder).
    Runs(Operation),
    /// Answered without a write (its session has ended, or is not the caller's).
    Answered(Result<Outcome, RepositoryError>),
}

/// The sessions of a batch, as read (and kept) in its transaction.
pub(super) struct BatchSessions {
    /// By (the sessions' tenant, id): the sessions that exist, live or not, or why one could
    /// not be read.
    found: HashMap<(Tenant, SessionId), Result<Session, String>>,
    /// The database's clock once they were kept.
    now: DateTime<Utc>,
}

impl BatchSessions {
    /// Reads and keeps the sessions of `batch`'s operations until its transaction ends.
    ///
    /// # Errors
    /// When a statement fails.
    pub(super) fn share(conn: &mut PgConnection, batch: &[Queued]) -> QueryResult<Self> {
        let mut keys: Vec<(Tenant, SessionId)> = batch
            .iter()
            .filter_map(|queued| named(&queued.key.0, &queued.operation))
            .collect();
        keys.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
        keys.dedup();
        let rows = share_all(conn, &keys)?;
        let now_ms = crate::lease_statements::now_postgres(conn)?;
        let mut found = HashMap::with_capacity(rows.len());
        for shared in rows {
            let session = shared.row.session().map_err(|error| error.to_string());
            let (Ok(tenant), Ok(id)) = (
                Tenant::parse_stored(&shared.tenant),
                SessionId::parse(&shared.row.id),
            ) else {
                continue; // not one of the keys asked for
            };
            found.insert((tenant, id), session);
        }
        let now = DateTime::from_timestamp_millis(now_ms).ok_or_else(|| {
            diesel::result::Error::QueryBuilderError(
                format!("the database's clock reads {now_ms} ms").into(),
            )
        })?;
        Ok(Self { found, now })
    }

    /// How `queued` runs in the batch, decided on its session by the domain.
    pub(super) fn decide(&self, queued: &Queued) -> Decided {
        let Some(key) = named(&queued.key.0, &queued.operation) else {
            return Decided::AsQueued;
        };
        let session = match self.found.get(&key) {
            Some(Ok(session)) => Some(session),
            Some(Err(error)) => {
                return Decided::Answered(Err(RepositoryError::internal(error.clone())))
            }
            None => None,
        };
        let resource = &queued.key.1;
        match lease_op(resource, &queued.operation).with_session(session, self.now) {
            Ok(op) => match operation(op) {
                Some(operation) => Decided::Runs(operation),
                None => Decided::Answered(Err(RepositoryError::internal(
                    "a batched operation changed its kind under its session",
                ))),
            },
            Err(answer) => Decided::Answered(outcome(&queued.operation, answer)),
        }
    }

    /// Makes each of `rows` that a session's holder was granted end with its session (the row
    /// says "while the session lives"), and returns the holds to note.
    ///
    /// # Errors
    /// When a granted row is corrupt.
    fn granted(
        &self,
        batch: &[Queued],
        rows: &mut [BatchRow],
    ) -> Result<Vec<(Tenant, SessionHold)>, RepositoryError> {
        // Releases return their rows too: only an acquire's row is a grant.
        let acquires: HashSet<(&str, &str)> = batch
            .iter()
            .filter(|queued| matches!(queued.operation, Operation::Acquire { .. }))
            .map(|queued| (queued.key.0.as_str(), queued.key.1.as_str()))
            .collect();
        let mut holds = Vec::new();
        for row in rows {
            if !crate::sessions::is_session_holder(&row.lock.owner)
                || !acquires.contains(&(row.tenant.as_str(), row.lock.resource.as_str()))
            {
                continue;
            }
            let Some(id) = Lock::try_from(row.lock.clone())?.owner.session() else {
                continue;
            };
            let tenant = Tenant::parse_stored(&row.tenant)
                .map_err(|e| RepositoryError::internal(format!("corrupt tenant {e}")))?;
            let sessions_tenant = lock_domain::sessions_tenant(&tenant);
            let Some(Ok(session)) = self.found.get(&(sessions_tenant.clone(), id)) else {
                return Err(RepositoryError::internal(
                    "a hold was granted under a session the batch did not read",
                ));
            };
            row.lock.expires_at_ms = session.expires_at.timestamp_millis();
            let grant = Grant::of_lock(Lock::try_from(row.lock.clone())?);
            holds.push((sessions_tenant, SessionHold::of(&tenant, grant)));
        }
        Ok(holds)
    }
}

/// Runs `batch` in one transaction with its sessions (see the module documentation): the rows
/// of the statement, and the answers of the operations decided without it, by key.
///
/// # Errors
/// When a statement fails, or a granted row is corrupt; the transaction then changed nothing.
pub(super) fn write_under_sessions(
    conn: &mut PgConnection,
    batch: &[Queued],
) -> QueryResult<(
    Vec<BatchRow>,
    Vec<(usize, Result<Outcome, RepositoryError>)>,
)> {
    use diesel::Connection;
    conn.transaction(|conn| {
        let sessions = BatchSessions::share(conn, batch)?;
        let mut answered = Vec::new();
        let mut runs: Vec<(usize, Option<Operation>)> = Vec::with_capacity(batch.len());
        for (i, queued) in batch.iter().enumerate() {
            match sessions.decide(queued) {
                Decided::AsQueued => runs.push((i, None)),
                Decided::Runs(operation) => runs.push((i, Some(operation))),
                Decided::Answered(answer) => answered.push((i, answer)),
            }
        }
        let mut rows = if runs.is_empty() {
            Vec::new()
        } else {
            crate::postgres::writes::write_batch(
                conn,
                runs.iter().map(|(i, operation)| {
                    let queued = &batch[*i];
                    (
                        &queued.key.0,
                        &queued.key.1,
                        operation.as_ref().unwrap_or(&queued.operation),
                    )
                }),
            )?
        };
        let holds = sessions
            .granted(batch, &mut rows)
            .map_err(|error| diesel::result::Error::QueryBuilderError(error.into()))?;
        note_all(conn, &holds)?;
        Ok((rows, answered))
    })
}

/// `operation` on lock `resource`, as the domain's operation.
fn lease_op(resource: &ResourceName, operation: &Operation) -> LeaseOp {
    let place = Place::Lock(resource.clone());
    match operation {
        Operation::Acquire {
            owner,
            ttl,
            value,
            lock_delay,
        } => LeaseOp::Acquire {
            place,
            claim: Claim::Exclusive,
            terms: LeaseTerms {
                owner: owner.clone(),
                ttl: *ttl,
                value: value.clone(),
                lock_delay: *lock_delay,
            },
        },
        Operation::Release { owner } => LeaseOp::Release {
            place,
            owner: owner.clone(),
        },
        Operation::Renew { owner, ttl, value } => LeaseOp::Renew {
            place,
            owner: owner.clone(),
            ttl: *ttl,
            value: value.clone(),
        },
    }
}

/// The batch's operation that `op` (decided on its session) is, if it is one.
fn operation(op: LeaseOp) -> Option<Operation> {
    Some(match op {
        LeaseOp::Acquire {
            claim: Claim::Exclusive,
            terms,
            ..
        } => Operation::Acquire {
            owner: terms.owner,
            ttl: terms.ttl,
            value: terms.value,
            lock_delay: terms.lock_delay,
        },
        LeaseOp::Release { owner, .. } => Operation::Release { owner },
        LeaseOp::Renew {
            owner, ttl, value, ..
        } => Operation::Renew { owner, ttl, value },
        _ => return None,
    })
}

/// The answer of `operation` that its session decided without a write.
fn outcome(operation: &Operation, answer: LeaseOutcome) -> Result<Outcome, RepositoryError> {
    Ok(match (operation, answer) {
        (Operation::Acquire { .. }, LeaseOutcome::Refused(refusal)) => {
            Outcome::Acquire(AcquireRow::Refused(Some(refusal)))
        }
        (Operation::Release { .. }, LeaseOutcome::NotFound) => {
            Outcome::Release(ReleaseRow::NotFound)
        }
        (Operation::Release { .. }, LeaseOutcome::Forbidden) => {
            Outcome::Release(ReleaseRow::Forbidden)
        }
        (Operation::Renew { .. }, LeaseOutcome::NotFound) => Outcome::Renew(RenewRow::NotFound),
        (Operation::Renew { .. }, LeaseOutcome::Forbidden) => Outcome::Renew(RenewRow::Forbidden),
        (_, answer) => {
            return Err(RepositoryError::internal(format!(
                "a session answered a batched operation with {answer:?}"
            )))
        }
    })
}
