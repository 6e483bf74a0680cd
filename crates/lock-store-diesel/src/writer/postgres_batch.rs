//! Batching for PostgreSQL: the acquires, releases and renews of many concurrent requests run as
//! one statement over arrays ([`postgres::WRITE_BATCH`]), one round trip and one commit for all.
//!
//! Requests queue their operation and wait. A few executor threads (`executors`) each take a
//! pooled connection and whatever is queued (up to `max_batch`), run it as one statement in
//! autocommit, and answer each caller only after that statement has committed (synchronous
//! commit stays on). A key (tenant, resource) is in at most one running batch at a time, and at
//! most once in it: a later operation on a key that is queued or running waits for the next
//! batch, so operations on one key run in the order they arrived and never touch a row twice
//! in one statement.
//!
//! A caller waits at most `deadlines.connection` in the queue (its operation is then withdrawn,
//! untouched, and leaves the queue at once, so an outage does not pile abandoned operations up),
//! and at most `deadlines.statement` (the server's `statement_timeout` plus a margin) after the
//! start of the last statement that could write for it; then it answers 503. An executor starts
//! a statement (or a retry) for an operation only after pushing that operation's deadline out,
//! and never for one whose caller has gone (answered 503, or its request dropped). But
//! `statement_timeout` does not cover COMMIT: a commit that stalls (an fsync, a synchronous
//! standby) can land after the caller heard 503. A grant whose caller is gone by the time it
//! would be answered is therefore undone at once, as that exact grant
//! ([`postgres::undo_grant`], which keeps re-grants), on the same connection and before any
//! later operation of this process on its key runs: the orphan lease lives no longer than the
//! late commit plus one statement (or, if the database is lost right then, until its TTL).
//!
//! A hot key would otherwise take one batch per queued operation. So once a batch shows who
//! holds a key's live lease (its grant or renewal, or a read after an acquire that was refused),
//! the operations queued on that key before the batch's statement that this lease decides
//! without a write (acquires, releases and renews by other owners) are answered from it at once
//! (Held, Forbidden), in arrival order up to the first that needs a write. Each of them was
//! waiting when the lease was seen, so it may take effect at that moment.
//!
//! Failures stay with their operation: a batch of several that fails (a statement timeout
//! caused by one row, a deadlock with another instance's batch) changed nothing, and each of its
//! operations runs again alone; only a lost connection fails the whole batch at once (retrying
//! on it is pointless), each caller hearing 503.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use diesel::r2d2::R2D2Connection;
use lock_domain::{
    decide_acquire, decide_release, decide_renew, AcquireDecision, ListQuery, Lock, Owner,
    ReleaseResult, RenewDecision, RepositoryError, ResourceName, Tenant, Ttl,
};
use tokio::sync::oneshot;

use super::postgres_direct::PostgresDirect;
use super::Writer;
use crate::config::Deadlines;
use crate::connection::{ConnectionManager, DbConnection, PoolHealth};
use crate::error::NoAnswer;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
use crate::postgres::reads;
use crate::postgres::writes::{self, BatchRow, Miss, Operation};
use crate::postgres::{KeptChanging, MAX_ATTEMPTS};
use crate::row::{ListedRow, LockRow, SeenLive};

/// What an operation comes to.
enum Outcome {
    /// The granted row, or `None` when another owner's lease is live.
    Acquire(Option<LockRow>),
    Release(ReleaseRow),
    Renew(RenewRow),
}

/// The row a batch locks for an operation.
type Key = (Tenant, ResourceName);

/// Where an operation is, shared by its caller and the executors.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// In the queue: nothing has run for it.
    Queued,
    /// A statement that may write for it is running or has run; the caller waits until
    /// `deadline` past which no such statement can still commit.
    Running { deadline: Instant },
    /// The caller gave up and answered 503: nothing may run for it any more.
    Abandoned,
}

/// An operation with its caller's handles.
struct Queued {
    /// Arrival number: operations that arrived before a statement started have smaller ones.
    seq: u64,
    key: Key,
    operation: Operation,
    phase: Arc<Mutex<Phase>>,
    reply: oneshot::Sender<Result<Outcome, RepositoryError>>,
    /// Statements run for it so far (a release or renew that met the caller's own lock
    /// appearing runs again, like the per-request statements do).
    attempts: usize,
}

impl Queued {
    /// Marks a statement for this operation as started and moves its caller's deadline to
    /// `statement` from now; `false` when the caller has given up (then nothing may run).
    fn start(&self, statement: Duration) -> bool {
        let mut phase = lock(&self.phase);
        if matches!(*phase, Phase::Abandoned) {
            return false;
        }
        *phase = Phase::Running {
            deadline: Instant::now() + statement,
        };
        true
    }

    /// Answers the caller; gives the result back when the caller has gone (answered 503, or its
    /// request dropped), so that a grant nobody will hear of can be undone.
    fn answer(
        self,
        result: Result<Outcome, RepositoryError>,
    ) -> Option<Result<Outcome, RepositoryError>> {
        // Under the phase lock: the caller gives up under it too, after a last look at its
        // channel, so a result is either seen by the caller or given back here, never lost.
        let phase = Arc::clone(&self.phase);
        let phase = lock(&phase);
        if matches!(*phase, Phase::Abandoned) {
            return Some(result);
        }
        self.reply.send(result).err()
    }

    /// Whether the caller has gone: nothing may start for it any more.
    fn gone(&self) -> bool {
        self.reply.is_closed() || matches!(*lock(&self.phase), Phase::Abandoned)
    }
}

/// The queue and which keys executors hold.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<Queued>,
    /// Keys of operations that an executor has taken and not yet answered.
    running: HashSet<Key>,
    /// The arrival number of the next operation.
    next_seq: u64,
    /// Counts arrivals and finished batches: an executor that found nothing it could take
    /// sleeps until this changes.
    changes: u64,
    stopped: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    pool: r2d2::Pool<ConnectionManager>,
    health: PoolHealth,
    deadlines: Deadlines,
    max_batch: usize,
}

/// The handle the repository submits through. Dropping it stops the executors once the queue
/// is empty.
pub(crate) struct PostgresBatcher {
    shared: Arc<Shared>,
    /// Runs what the batcher does not: undos, sweeps, reads.
    direct: PostgresDirect,
}

impl Drop for PostgresBatcher {
    fn drop(&mut self) {
        lock(&self.shared.queue).stopped = true;
        self.shared.work.notify_all();
    }
}

impl PostgresBatcher {
    /// Starts `executors` executor threads on the pool of `direct`, which runs every other
    /// operation.
    ///
    /// # Errors
    /// When a thread cannot be spawned.
    pub(crate) fn spawn(
        direct: PostgresDirect,
        deadlines: Deadlines,
        executors: u32,
        max_batch: usize,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            pool: direct.pooled().pool().clone(),
            health: direct.pooled().health().clone(),
            deadlines,
            max_batch: max_batch.max(1),
        });
        for i in 0..executors.max(1) {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("lockd-pg-batch-{i}"))
                .spawn(move || execute(&shared))?;
        }
        Ok(Self { shared, direct })
    }

    /// Queues `operation` and waits for its outcome, or answers `Unavailable` once its deadline
    /// has passed (see the module documentation).
    async fn submit(&self, key: Key, operation: Operation) -> Result<Outcome, RepositoryError> {
        let phase = Arc::new(Mutex::new(Phase::Queued));
        let (reply, mut answer) = oneshot::channel();
        let seq;
        {
            let mut queue = lock(&self.shared.queue);
            if queue.stopped {
                return Err(RepositoryError::unavailable(
                    "the PostgreSQL batcher has stopped",
                ));
            }
            seq = queue.next_seq;
            queue.next_seq += 1;
            queue.changes += 1;
            queue.waiting.push_back(Queued {
                seq,
                key,
                operation,
                phase: Arc::clone(&phase),
                reply,
                attempts: 0,
            });
        }
        self.shared.work.notify_one();
        // If this request is dropped while it waits (its client went away), the operation is
        // withdrawn like one that timed out.
        let mut withdraw = Withdraw {
            shared: &self.shared,
            phase: &phase,
            seq,
            armed: true,
        };
        let Deadlines {
            connection,
            statement,
        } = self.shared.deadlines;
        let queued_until = Instant::now() + connection;
        loop {
            let wake_at = match *lock(&phase) {
                Phase::Queued => queued_until,
                Phase::Running { deadline } => deadline,
                // Only this caller abandons, and it returns right after.
                Phase::Abandoned => {
                    return Err(RepositoryError::internal(
                        "an abandoned operation still waited",
                    ))
                }
            };
            tokio::select! {
                outcome = &mut answer => {
                    withdraw.armed = false;
                    return outcome.map_err(|_| {
                        RepositoryError::internal("the PostgreSQL batcher dropped an operation")
                    })?;
                }
                () = tokio::time::sleep_until(wake_at.into()) => {}
            }
            // Give up only if no statement for the operation may still run; the executors check
            // the same lock before they start one (and hand back a grant that arrives later).
            let waited = {
                let mut current = lock(&phase);
                if let Ok(outcome) = answer.try_recv() {
                    withdraw.armed = false;
                    return outcome;
                }
                let waited = match *current {
                    Phase::Queued if Instant::now() >= queued_until => connection,
                    Phase::Running { deadline } if Instant::now() >= deadline => statement,
                    _ => continue,
                };
                *current = Phase::Abandoned;
                waited
            };
            drop(withdraw);
            return Err(RepositoryError::unavailable(NoAnswer(waited)));
        }
    }
}

#[async_trait]
impl Writer for PostgresBatcher {
    async fn acquire(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
    ) -> Result<AcquireRow, RepositoryError> {
        match self
            .submit((tenant, resource), Operation::Acquire { owner, ttl })
            .await?
        {
            Outcome::Acquire(row) => Ok(row),
            _ => Err(mismatch()),
        }
    }

    async fn release(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseRow, RepositoryError> {
        match self
            .submit((tenant, resource), Operation::Release { owner })
            .await?
        {
            Outcome::Release(row) => Ok(row),
            _ => Err(mismatch()),
        }
    }

    async fn renew(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
    ) -> Result<RenewRow, RepositoryError> {
        match self
            .submit((tenant, resource), Operation::Renew { owner, ttl })
            .await?
        {
            Outcome::Renew(row) => Ok(row),
            _ => Err(mismatch()),
        }
    }

    async fn undo_grant(&self, tenant: Tenant, grant: Lock) -> Result<bool, RepositoryError> {
        self.direct.undo_grant(tenant, grant).await
    }

    async fn sweep(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        self.direct.sweep(grace, batch).await
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        self.direct.status(tenant, resource).await
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        self.direct.list(tenant, query).await
    }
}

/// Withdraws an operation whose caller gave up or went away: marks it abandoned (nothing may
/// start for it, and a grant made for it is undone) and takes it out of the queue if it is
/// still there.
struct Withdraw<'a> {
    shared: &'a Shared,
    phase: &'a Mutex<Phase>,
    seq: u64,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // The phase first, alone: executors take the queue's lock, then a phase's.
        *lock(self.phase) = Phase::Abandoned;
        let mut queue = lock(&self.shared.queue);
        if let Some(position) = queue.waiting.iter().position(|q| q.seq == self.seq) {
            queue.waiting.remove(position);
            queue.changes += 1;
        }
    }
}

fn mismatch() -> RepositoryError {
    RepositoryError::internal("the PostgreSQL batcher answered another kind of operation")
}

/// A poisoned lock only means another thread panicked while holding it; the data (a queue, a
/// phase) stays consistent at every step, so carry on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An executor: waits for work, takes a connection and a batch, runs it, answers, repeats.
fn execute(shared: &Shared) {
    // Set when the last look found only operations on keys of running batches: then wait for
    // a change (an arrival, a finished batch) instead of looking again at once.
    let mut nothing_since: Option<u64> = None;
    loop {
        {
            let mut queue = lock(&shared.queue);
            loop {
                if queue.waiting.is_empty() && queue.stopped {
                    return;
                }
                if !queue.waiting.is_empty() && nothing_since != Some(queue.changes) {
                    break;
                }
                queue = shared
                    .work
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        // The pool waits up to the connection timeout; meanwhile the callers' own deadlines
        // withdraw their operations from the queue.
        let mut conn = match shared.pool.get() {
            Ok(conn) => conn,
            Err(error) => {
                tracing::debug!(%error, "no PostgreSQL connection for the batch");
                thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let (batch, seen, changes) = take_batch(shared);
        if batch.is_empty() {
            nothing_since = Some(changes);
            continue;
        }
        nothing_since = None;
        let DbConnection::Postgres(pg) = &mut *conn else {
            finish(
                shared,
                fail_all(batch, "a SQLite connection in the PostgreSQL batcher"),
            );
            continue;
        };
        let mut holders = Vec::new();
        let ended = run_batch(
            pg,
            shared.deadlines.statement,
            batch,
            &mut holders,
            &shared.health,
        );
        answer_followers(shared, pg, seen, holders);
        finish(shared, ended);
    }
}

/// Takes up to `max_batch` queued operations, the first one of each key that is not running,
/// and marks them started. Operations whose caller gave up are dropped. Also returns the
/// arrival number from which operations arrived after the take, and the queue's change count.
fn take_batch(shared: &Shared) -> (Vec<Queued>, u64, u64) {
    let mut queue = lock(&shared.queue);
    let Queue {
        waiting,
        running,
        next_seq,
        changes,
        ..
    } = &mut *queue;
    let seen = *next_seq;
    let changes = *changes;
    let mut batch = Vec::new();
    let mut kept = VecDeque::with_capacity(waiting.len());
    while let Some(queued) = waiting.pop_front() {
        if queued.gone() {
            // Its caller went away before anything ran: drop it untouched.
        } else if batch.len() >= shared.max_batch || running.contains(&queued.key) {
            kept.push_back(queued);
        } else if queued.start(shared.deadlines.statement) {
            running.insert(queued.key.clone());
            batch.push(queued);
        }
    }
    *waiting = kept;
    (batch, seen, changes)
}

/// A key's live lease after a batch, as far as the batch shows.
enum Holder {
    /// The lease the batch granted or renewed, live at the database's clock of that write.
    Seen(SeenLive),
    /// Someone else's: the batch's acquire was refused; a read tells whose.
    Ask,
}

/// Answers the operations queued on the batch's keys before its statement that the lease seen
/// decides without a write (see the module documentation), in arrival order per key.
fn answer_followers(
    shared: &Shared,
    conn: &mut PgConnection,
    seen: u64,
    mut holders: Vec<(Key, Holder)>,
) {
    if holders.is_empty() {
        return;
    }
    {
        let queue = lock(&shared.queue);
        let followed: HashSet<&Key> = queue
            .waiting
            .iter()
            .filter(|queued| queued.seq < seen)
            .map(|queued| &queued.key)
            .collect();
        holders.retain(|(key, _)| followed.contains(key));
    }
    let mut live: HashMap<Key, (Lock, DateTime<Utc>)> = HashMap::with_capacity(holders.len());
    for (key, holder) in holders {
        let lease = match holder {
            Holder::Seen(lease) => Some(lease),
            Holder::Ask => reads::live_holder_now(conn, &key.0, &key.1).ok().flatten(),
        };
        // A lease the domain cannot read (a corrupt row) decides nothing: its operations run.
        if let Some(Ok(lease)) = lease.map(SeenLive::into_domain) {
            live.insert(key, lease);
        }
    }
    if live.is_empty() {
        return;
    }
    let mut queue = lock(&shared.queue);
    let mut blocked: HashSet<Key> = HashSet::new();
    let mut kept = VecDeque::with_capacity(queue.waiting.len());
    while let Some(queued) = queue.waiting.pop_front() {
        let decided = match live.get(&queued.key) {
            Some((lease, at)) if queued.seq < seen && !blocked.contains(&queued.key) => {
                decided_by_lease(&queued.operation, lease, *at)
            }
            _ => None,
        };
        match decided {
            Some(outcome) => {
                let _ = queued.answer(Ok(outcome));
            }
            None => {
                if live.contains_key(&queued.key) {
                    blocked.insert(queued.key.clone());
                }
                kept.push_back(queued);
            }
        }
    }
    queue.waiting = kept;
}

/// What `operation` comes to against `lease`, live at `at`, when the domain decides it without
/// a write (an acquire refused, a release or renew forbidden); `None` when it needs its write.
fn decided_by_lease(operation: &Operation, lease: &Lock, at: DateTime<Utc>) -> Option<Outcome> {
    let lease = Some(lease);
    match operation {
        Operation::Acquire { owner, .. } => {
            matches!(decide_acquire(lease, owner, at), AcquireDecision::Deny)
                .then_some(Outcome::Acquire(None))
        }
        Operation::Release { owner } => {
            matches!(decide_release(lease, owner, at), ReleaseResult::Forbidden)
                .then_some(Outcome::Release(ReleaseRow::Forbidden))
        }
        Operation::Renew { owner, .. } => {
            matches!(decide_renew(lease, owner, at), RenewDecision::Forbidden)
                .then_some(Outcome::Renew(RenewRow::Forbidden))
        }
    }
}

/// Frees the keys of a finished batch and puts its operations to run again at the head of the
/// queue, ahead of any later operation on their keys.
fn finish(shared: &Shared, (done, retries): (Vec<Key>, Vec<Queued>)) {
    let mut queue = lock(&shared.queue);
    for key in &done {
        queue.running.remove(key);
    }
    for queued in retries.into_iter().rev() {
        queue.running.remove(&queued.key);
        queue.waiting.push_front(queued);
    }
    queue.changes += 1;
    let more = !queue.waiting.is_empty();
    drop(queue);
    if more {
        shared.work.notify_all();
    }
}

fn fail_all(batch: Vec<Queued>, why: &'static str) -> (Vec<Key>, Vec<Queued>) {
    let keys = batch.iter().map(|q| q.key.clone()).collect();
    for queued in batch {
        let _ = queued.answer(Err(RepositoryError::internal(why)));
    }
    (keys, Vec::new())
}

/// Runs a batch and answers its operations; returns the keys it is done with and the operations
/// to queue again.
/// Keys whose live holder the batch showed go to `holders`.
fn run_batch(
    conn: &mut PgConnection,
    statement: Duration,
    mut batch: Vec<Queued>,
    holders: &mut Vec<(Key, Holder)>,
    health: &PoolHealth,
) -> (Vec<Key>, Vec<Queued>) {
    // Key order: rows are locked in the same order by every batch.
    batch.sort_by(|a, b| a.key.cmp(&b.key));
    match write(conn, &batch) {
        Ok(rows) => settle(conn, batch, rows, holders),
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
                let (d, r) = run_batch(conn, statement, vec![queued], holders, health);
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
            let unavailable = crate::error::is_unavailable(&error);
            if unavailable {
                // The connection may be dead: the pool tests its connections for a while.
                health.suspect();
            }
            let message = error.to_string();
            let keys = batch.iter().map(|q| q.key.clone()).collect();
            for queued in batch {
                let error = if unavailable {
                    RepositoryError::unavailable(message.clone())
                } else {
                    RepositoryError::internal(message.clone())
                };
                let _ = queued.answer(Err(error));
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

/// The one statement of a batch.
fn write(conn: &mut PgConnection, batch: &[Queued]) -> diesel::QueryResult<Vec<BatchRow>> {
    writes::write_batch(
        conn,
        batch
            .iter()
            .map(|queued| (&queued.key.0, &queued.key.1, &queued.operation)),
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
        if let Some(holder) = holder {
            holders.push((queued.key.clone(), holder));
        }
        let outcome = match (&queued.operation, row) {
            (Operation::Acquire { .. }, row) => Ok(Outcome::Acquire(row)),
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
        if let Some(Ok(Outcome::Acquire(Some(row)))) = queued.answer(outcome) {
            undo_unheard_grant(conn, &tenant, row);
        }
    }
    for queued in misses {
        let (tenant, resource) = &queued.key;
        let release = matches!(queued.operation, Operation::Release { .. });
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

/// Undoes a grant that committed after its caller had gone (see the module documentation).
fn undo_unheard_grant(conn: &mut PgConnection, tenant: &Tenant, row: LockRow) {
    super::undo_unheard_grant(tenant, row, |lock| writes::undo_grant(conn, tenant, lock));
}

#[cfg(test)]
mod tests {
    //! During an outage every executor waits in `pool.get()`; the operations whose callers give
    //! up meanwhile must leave the queue at once instead of piling up until a connection comes.

    use std::sync::Arc;
    use std::time::Duration;

    use lock_domain::{Owner, ResourceName, SystemClock, Tenant, Ttl};

    use super::{lock, PostgresBatcher, PostgresDirect, Writer};
    use crate::config::Deadlines;
    use crate::connection::{ConnectionManager, PoolHealth};
    use crate::pooled::Pooled;
    use crate::{DatabaseUrl, SqliteSynchronous};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn operations_given_up_during_an_outage_leave_the_queue() {
        // Nothing listens on port 1: every connection attempt is refused.
        let url = DatabaseUrl::Postgres("postgres://postgres@127.0.0.1:1/none".to_owned());
        let health = PoolHealth::new(2);
        let manager = ConnectionManager::new(
            url,
            Duration::from_secs(1),
            SqliteSynchronous::Full,
            Duration::from_millis(100),
            Duration::from_millis(500),
            health.clone(),
        );
        let pool = r2d2::Pool::builder()
            .max_size(2)
            .min_idle(Some(0))
            .connection_timeout(Duration::from_secs(1))
            .build_unchecked(manager);
        let deadlines = Deadlines {
            connection: Duration::from_millis(100),
            statement: Duration::from_millis(500),
        };
        let direct = PostgresDirect::new(Pooled::new(
            pool,
            health,
            Arc::new(SystemClock),
            Some(deadlines),
        ));
        let batcher = Arc::new(PostgresBatcher::spawn(direct, deadlines, 2, 64).unwrap());
        let attempts: Vec<_> = (0..200)
            .map(|i| {
                let batcher = Arc::clone(&batcher);
                tokio::spawn(async move {
                    batcher
                        .acquire(
                            Tenant::default_tenant(),
                            ResourceName::parse(format!("r{i}")).unwrap(),
                            Owner::parse("o").unwrap(),
                            Ttl::parse(10, 3_600).unwrap(),
                        )
                        .await
                })
            })
            .collect();
        let started = std::time::Instant::now();
        for attempt in attempts {
            assert!(attempt.await.unwrap().is_err(), "nothing can be granted");
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let queued = lock(&batcher.shared.queue).waiting.len();
        assert_eq!(
            queued, 0,
            "{queued} abandoned operations still wait in the queue during the outage"
        );
    }
}
