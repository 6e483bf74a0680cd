//! Group commit of semaphore and shared-lock operations, and of every operation under a session,
//! on PostgreSQL: a few threads, each with a
//! queue, take every operation queued to them (up to `max_batch`), run them one after another in
//! one transaction on a pooled connection (given back after each batch) and commit once, so that
//! operations on one semaphore share its advisory lock, operations on one lock its row lock, and
//! all of them one commit instead of taking a transaction (and an fsync) each. A semaphore's or
//! lock's operations always go to the same thread (by a hash of its name), so the threads of one
//! process never wait for each other's locks, and different names run in parallel.
//!
//! - A batch runs in ascending (tenant, name) order, arrival order kept within a name, so that
//!   the locks of two instances' batches are always taken in the same order and cannot
//!   deadlock (a lock taken again in one transaction is only counted again). Lock rows are taken
//!   in that order by every other writer too (the batch statement of the exclusive writes, a
//!   multi-lock), so none of them can wait for a batch in a circle either.
//! - A caller is answered only after the commit. A batch that fails (a statement, or a row the
//!   domain refuses) changed nothing: its operations then run again one at a time, each in a
//!   transaction of its own, and each caller hears its own outcome.
//! - A caller waits at most its deadline (503 after it). An operation whose caller has gone
//!   before its batch starts is not run; a grant whose caller has gone by the time it would be
//!   answered is undone at once, as that exact grant, on the same connection.
//! - Listings do not come here (they take no semaphore's lock).

use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use diesel::pg::PgConnection;
use diesel::Connection;
use lock_domain::{Applied, LeaseOp, LeaseOutcome, Place, RepositoryError, StoreEvents, Tenant};
use tokio::sync::oneshot;

use super::postgres_direct::holders_in_transaction;
use super::undo_unheard;
use crate::connection::{ConnectionManager, PoolHealth};
use crate::error::{from_pool, is_unavailable};
use crate::semaphores::PermitError;

struct Job {
    tenant: Tenant,
    op: LeaseOp,
    reply: oneshot::Sender<Applied>,
}

impl Job {
    /// Where the job's operation takes its lock: the order a batch runs in.
    fn key(&self) -> (&str, &str, u8) {
        let place = match &self.op {
            LeaseOp::Undo(grant) => &grant.place,
            LeaseOp::Acquire { place, .. }
            | LeaseOp::Release { place, .. }
            | LeaseOp::Renew { place, .. }
            | LeaseOp::SetValue { place, .. }
            | LeaseOp::RecordExpiry { place, .. }
            | LeaseOp::ForceRelease { place, .. }
            | LeaseOp::Look(place) => place,
            // A set takes its rows in its own order (a transaction of its own).
            LeaseOp::AcquireAll(_) => return (self.tenant.as_str(), "", 2),
        };
        let kind = match place {
            Place::Semaphore(_) => 0,
            Place::Lock(_) => 1,
        };
        (self.tenant.as_str(), place.name().as_str(), kind)
    }
}

pub(crate) struct PermitBatcher {
    /// One queue per thread.
    jobs: Vec<std::sync::Mutex<mpsc::Sender<Job>>>,
    /// How long a caller waits for its answer.
    deadline: Duration,
}

impl PermitBatcher {
    /// Starts `threads` threads on `pool`.
    ///
    /// # Errors
    /// When a thread cannot be spawned.
    pub(crate) fn spawn(
        pool: &r2d2::Pool<ConnectionManager>,
        health: &PoolHealth,
        events: &Arc<dyn StoreEvents>,
        threads: usize,
        deadline: Duration,
        max_batch: usize,
    ) -> std::io::Result<Self> {
        let mut jobs = Vec::new();
        for i in 0..threads.max(1) {
            let (sender, queue) = mpsc::channel::<Job>();
            let (pool, health, events) = (pool.clone(), health.clone(), Arc::clone(events));
            thread::Builder::new()
                .name(format!("lockd-pg-permits-{i}"))
                .spawn(move || execute(&pool, &health, &*events, &queue, max_batch.max(1)))?;
            jobs.push(std::sync::Mutex::new(sender));
        }
        Ok(Self { jobs, deadline })
    }

    /// Runs `op` through the holders of its place in the next batch of its thread, and answers
    /// once that batch has committed.
    ///
    /// # Errors
    /// [`RepositoryError::Unavailable`] when the deadline passes first (a grant committed
    /// after that is undone), or the operation's own error.
    pub(crate) async fn submit(&self, tenant: Tenant, op: LeaseOp) -> Applied {
        let (reply, answer) = oneshot::channel();
        let job = Job { tenant, op, reply };
        let queue = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            let (tenant, name, _) = job.key();
            (tenant, name).hash(&mut hasher);
            (hasher.finish() % self.jobs.len() as u64) as usize
        };
        let sent = self.jobs[queue]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .send(job);
        if sent.is_err() {
            return Err(RepositoryError::internal(
                "the semaphore writer has stopped",
            ));
        }
        match tokio::time::timeout(self.deadline, answer).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(RepositoryError::internal(
                "the semaphore writer dropped an operation",
            )),
            Err(_) => Err(RepositoryError::unavailable(
                "the database did not answer a semaphore operation in time",
            )),
        }
    }
}

fn execute(
    pool: &r2d2::Pool<ConnectionManager>,
    health: &PoolHealth,
    events: &dyn StoreEvents,
    queue: &mpsc::Receiver<Job>,
    max_batch: usize,
) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        // A caller that has gone is not served.
        batch.retain(|job| !job.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        batch.sort_by(|a, b| a.key().cmp(&b.key()));
        let mut conn = match pool.get() {
            Ok(conn) => conn,
            Err(error) => {
                let error = from_pool(error);
                for job in batch {
                    let _ = job
                        .reply
                        .send(Err(RepositoryError::unavailable(error.to_string())));
                }
                continue;
            }
        };
        let Ok(c) = conn.postgres() else {
            for job in batch {
                let _ = job.reply.send(Err(RepositoryError::internal(
                    "the semaphore writer needs a PostgreSQL connection",
                )));
            }
            continue;
        };
        if !serve(c, events, batch) {
            health.suspect();
        }
    }
}

/// Applies one job's operation in the batch's transaction: through the holders of its place,
/// decided on its session first when it is made under one (the session's row kept from
/// keepalives and ends until the batch commits; see `sessions::under_session`).
fn decide(c: &mut PgConnection, tenant: &Tenant, op: LeaseOp) -> Result<LeaseOutcome, PermitError> {
    Ok(crate::sessions::under_session(
        c,
        tenant,
        op,
        crate::lease_statements::now_postgres,
        |c, op| Ok(holders_in_transaction(c, tenant, op)?),
    )?)
}

/// Keeps every session the batch's operations are made under from keepalives and ends (`FOR
/// SHARE`) before any place is locked, in one order: a session's end, which locks its session
/// and then the places of its holds, then never waits for this batch while the batch waits for
/// that session (no deadlock), and two batches only ever share these locks.
fn share_sessions(c: &mut PgConnection, batch: &[Job]) -> Result<(), PermitError> {
    use crate::sessions::SessionRows;
    let mut sessions: Vec<(Tenant, String)> = batch
        .iter()
        .filter_map(|job| {
            let id = job.op.session()?;
            Some((
                lock_domain::sessions_tenant(&job.tenant),
                id.as_str().to_owned(),
            ))
        })
        .collect();
    sessions.sort_by(|a, b| (a.0.as_str(), &a.1).cmp(&(b.0.as_str(), &b.1)));
    sessions.dedup();
    for (tenant, id) in &sessions {
        c.session(tenant, id)?;
    }
    Ok(())
}

/// Runs one batch on `c` and answers its callers; whether the connection still looks usable.
fn serve(c: &mut PgConnection, events: &dyn StoreEvents, batch: Vec<Job>) -> bool {
    let together = c.transaction(|c| {
        share_sessions(c, &batch)?;
        batch
            .iter()
            .map(|job| decide(c, &job.tenant, job.op.clone()))
            .collect::<Result<Vec<LeaseOutcome>, PermitError>>()
    });
    let mut healthy = true;
    let answers: Vec<Applied> = match together {
        Ok(answers) => answers.into_iter().map(Ok).collect(),
        // Nothing of the batch happened: each operation alone, with its own outcome.
        Err(_) => batch
            .iter()
            .map(|job| {
                let alone = c.transaction(|c| decide(c, &job.tenant, job.op.clone()));
                if let Err(PermitError::Query(error)) = &alone {
                    healthy &= !is_unavailable(error);
                }
                alone.map_err(RepositoryError::from)
            })
            .collect(),
    };
    for (job, answer) in batch.into_iter().zip(answers) {
        let Job { tenant, reply, .. } = job;
        if let Err(Ok(unheard)) = reply.send(answer) {
            undo_unheard(events, &tenant, &unheard, |undo| {
                Ok(c.transaction(|c| holders_in_transaction(c, &tenant, undo))?)
            });
        }
    }
    healthy
}
