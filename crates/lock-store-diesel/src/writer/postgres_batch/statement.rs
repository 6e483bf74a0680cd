//! One batch on its connection: the statement, the answers from its rows, and which of its
//! operations run again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use diesel::pg::PgConnection;
use diesel::r2d2::R2D2Connection;
use lock_domain::{RepositoryError, StoreEvents, Tenant};

use super::followers::Holder;
use super::queue::{lock, Key, Outcome, Queued};
use crate::connection::PoolHealth;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
use crate::postgres::writes::{self, BatchRow, Miss, Noted, Operation, SessionHoldAt};
use crate::postgres::{KeptChanging, MAX_ATTEMPTS};
use crate::row::{LockRow, SeenLive};
use crate::writer::noted_holds::NotedHolds;

/// Runs a batch and answers its operations; returns the keys it is done with and the operations
/// to queue again.
/// Keys whose live holder the batch showed go to `holders`.
pub(super) fn run_batch(
    conn: &mut PgConnection,
    statement: Duration,
    mut batch: Vec<Queued>,
    holders: &mut Vec<(Key, Holder)>,
    health: &PoolHealth,
    events: &dyn StoreEvents,
    notes: &Mutex<NotedHolds>,
) -> (Vec<Key>, Vec<Queued>) {
    // Key order: rows are locked in the same order by every batch.
    batch.sort_by(|a, b| a.key.cmp(&b.key));
    match write(conn, &batch, notes) {
        Ok(rows) => settle(conn, batch, rows, holders, events, notes),
        Err(error) if batch.len() > 1 && !conn.is_broken() => {
            // Nothing of the batch happened. Run each operation alone, so that whatever failed
            // fails only its own.
            tracing::warn!(%error, operations = batch.len(), "PostgreSQL batch failed; running its operations one by one");
            let mut done = Vec::with_capacity(batch.len());
            let mut retries = Vec::new();
            for queued in batch {
                if !queued.start(statement) {
                    done.push(queued.key.clone());
                    continue;
                }
                let (d, r) = run_batch(
                    conn,
                    statement,
                    vec![queued],
                    holders,
                    health,
                    events,
                    notes,
                );
                done.extend(d);
                retries.extend(r);
            }
            (done, retries)
        }
        Err(error) if !conn.is_broken() && is_conflict(&error) => {
            // A deadlock with another instance's batch (or a serialization failure): the
            // statement changed nothing; run it again in a later batch.
            let mut done = Vec::new();
            let mut retries = Vec::new();
            for mut queued in batch {
                queued.attempts += 1;
                if queued.attempts < MAX_ATTEMPTS {
                    retries.push(queued);
                } else {
                    done.push(queued.key.clone());
                    let _ = queued.answer(Err(RepositoryError::unavailable(KeptChanging)));
                }
            }
            (done, retries)
        }
        Err(error) => {
            if batch.len() > 1 {
                tracing::warn!(%error, operations = batch.len(), "PostgreSQL batch failed");
            }
            // Each caller gets its own error; the text and class are the batch's.
            let class = crate::error::ErrorClass::of(&error);
            if class == crate::error::ErrorClass::Unavailable {
                // The connection may be dead: the pool tests its connections for a while.
                health.suspect();
            }
            let message = error.to_string();
            let keys = batch.iter().map(|q| q.key.clone()).collect();
            for queued in batch {
                let _ = queued.answer(Err(class.error(message.clone())));
            }
            (keys, Vec::new())
        }
    }
}

/// A statement that PostgreSQL aborted because it conflicted with another transaction; it
/// changed nothing and may simply run again.
fn is_conflict(error: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error};
    match error {
        Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        Error::DatabaseError(_, info) => info.message().contains("deadlock detected"),
        _ => false,
    }
}

/// The one statement of a batch. It notes no hold that a committed statement noted.
fn write(
    conn: &mut PgConnection,
    batch: &[Queued],
    notes: &Mutex<NotedHolds>,
) -> diesel::QueryResult<Vec<BatchRow>> {
    let noted: Vec<Noted> = {
        let notes = lock(notes);
        batch
            .iter()
            .map(|queued| match &queued.operation {
                Operation::Acquire { owner, .. } => {
                    let (tenant, resource) = &queued.key;
                    match SessionHoldAt::of(tenant, resource, owner) {
                        Some(hold)
                            if notes.is_committed(
                                hold.sessions_tenant.as_str(),
                                hold.id.as_str(),
                                hold.kind.as_str(),
                                resource.as_str(),
                            ) =>
                        {
                            Noted::Yes
                        }
                        _ => Noted::No,
                    }
                }
                _ => Noted::No,
            })
            .collect()
    };
    writes::write_batch(
        conn,
        batch
            .iter()
            .zip(noted)
            .map(|(queued, noted)| (&queued.key.0, &queued.key.1, &queued.operation, noted)),
    )
}

/// Answers the operations of a committed batch from its rows. A release or renew that wrote
/// nothing is told apart (not found, forbidden) by a read, as without batching; when that read
/// finds the caller's own live lock, the operation runs again in a later batch.
fn settle(
    conn: &mut PgConnection,
    batch: Vec<Queued>,
    rows: Vec<BatchRow>,
    holders: &mut Vec<(Key, Holder)>,
    events: &dyn StoreEvents,
    notes: &Mutex<NotedHolds>,
) -> (Vec<Key>, Vec<Queued>) {
    let mut written: HashMap<(String, String), LockRow> = rows
        .into_iter()
        .map(|row| ((row.tenant, row.lock.resource.clone()), row.lock))
        .collect();
    let mut done = Vec::with_capacity(batch.len());
    let mut retries = Vec::new();
    // Everything the statement decided is answered first: a slow read for a miss must not hold
    // back (and time out) the answer of a write that has committed.
    let mut misses = Vec::new();
    for mut queued in batch {
        let (tenant, resource) = &queued.key;
        let row = written.remove(&(tenant.as_str().to_owned(), resource.as_str().to_owned()));
        queued.attempts += 1;
        let holder = match (&queued.operation, &row) {
            // A grant starts at the database's clock of its write.
            (Operation::Acquire { .. }, Some(row)) => Some(Holder::Seen(SeenLive {
                lock: row.clone(),
                now_ms: row.acquired_at_ms,
            })),
            // A renewal ends `ttl` after the database's clock of its write.
            (Operation::Renew { ttl, .. }, Some(row)) => Some(Holder::Seen(SeenLive {
                lock: row.clone(),
                now_ms: row.expires_at_ms - i64::from(ttl.seconds()) * 1_000,
            })),
            (Operation::Acquire { .. }, None) => Some(Holder::Ask),
            _ => None,
        };
        if let (Operation::Acquire { owner, .. }, Some(_)) = (&queued.operation, &row) {
            // The statement, which committed, noted the grant under its session.
            if let Some(hold) = SessionHoldAt::of(tenant, resource, owner) {
                lock(notes).note_committed(
                    hold.sessions_tenant.as_str(),
                    hold.id.as_str(),
                    hold.kind.as_str(),
                    resource.as_str(),
                );
            }
        }
        if let Some(holder) = holder {
            holders.push((queued.key.clone(), holder));
        }
        let outcome = match (&queued.operation, row) {
            (Operation::Acquire { .. }, row) => Ok(Outcome::Acquire(row.into())),
            (Operation::Release { .. }, Some(row)) => {
                Ok(Outcome::Release(ReleaseRow::Released(row)))
            }
            (Operation::Renew { .. }, Some(row)) => Ok(Outcome::Renew(RenewRow::Renewed(row))),
            (Operation::Release { .. } | Operation::Renew { .. }, None) => {
                misses.push(queued);
                continue;
            }
        };
        done.push(queued.key.clone());
        let tenant = queued.key.0.clone();
        if let Some(Ok(Outcome::Acquire(AcquireRow::Granted(row)))) = queued.answer(outcome) {
            undo_unheard_grant(conn, events, &tenant, row);
        }
    }
    for queued in misses {
        let (tenant, resource) = &queued.key;
        let release = matches!(queued.operation, Operation::Release { .. });
        if let Operation::Release { owner } = &queued.operation {
            if owner.session().is_some() {
                // Its session may have ended (the statement checks it; the lock's row cannot
                // tell): the lock's holders decide it, on its session (see `sessions.rs`).
                done.push(queued.key.clone());
                let _ = queued.answer(Ok(Outcome::Release(ReleaseRow::Forbidden)));
                continue;
            }
        }
        let outcome = match writes::classify_miss(conn, tenant, resource, &queued.operation) {
            Err(error) => Err(error),
            Ok(Miss::NotFound) if release => Ok(Outcome::Release(ReleaseRow::NotFound)),
            Ok(Miss::Forbidden) if release => Ok(Outcome::Release(ReleaseRow::Forbidden)),
            Ok(Miss::NotFound) => Ok(Outcome::Renew(RenewRow::NotFound)),
            Ok(Miss::Forbidden) => Ok(Outcome::Renew(RenewRow::Forbidden)),
            Ok(Miss::Retry) if queued.attempts < MAX_ATTEMPTS => {
                retries.push(queued);
                continue;
            }
            Ok(Miss::Retry) => Err(RepositoryError::unavailable(KeptChanging)),
        };
        done.push(queued.key.clone());
        let _ = queued.answer(outcome);
    }
    (done, retries)
}

/// Undoes a grant that committed after its caller had gone (see the batcher's module documentation).
fn undo_unheard_grant(
    conn: &mut PgConnection,
    events: &dyn StoreEvents,
    tenant: &Tenant,
    row: LockRow,
) {
    crate::writer::undo_unheard_grant(events, tenant, row, |lock| {
        writes::undo_grant(conn, tenant, lock)
    });
}
