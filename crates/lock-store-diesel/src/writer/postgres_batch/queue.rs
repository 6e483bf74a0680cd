//! The queue of the PostgreSQL batcher: the operations waiting or running, where each one is
//! (its [`Phase`], shared by its caller and the executors), and how an executor answers it.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use lock_domain::{RepositoryError, ResourceName, Tenant};
use tokio::sync::oneshot;

use crate::config::Deadlines;
use crate::connection::{ConnectionManager, PoolHealth};
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow};
use crate::postgres::writes::Operation;

/// What an operation comes to.
pub(super) enum Outcome {
    /// The granted row, or `None` when another owner's lease is live.
    Acquire(AcquireRow),
    Release(ReleaseRow),
    Renew(RenewRow),
}

/// The row a batch locks for an operation.
pub(super) type Key = (Tenant, ResourceName);

/// Where an operation is, shared by its caller and the executors.
#[derive(Debug, Clone, Copy)]
pub(super) enum Phase {
    /// In the queue: nothing has run for it.
    Queued,
    /// A statement that may write for it is running or has run; the caller waits until
    /// `deadline` past which no such statement can still commit.
    Running { deadline: Instant },
    /// The caller gave up and answered 503: nothing may run for it any more.
    Abandoned,
}

/// An operation with its caller's handles.
pub(super) struct Queued {
    /// Arrival number: operations that arrived before a statement started have smaller ones.
    pub(super) seq: u64,
    pub(super) key: Key,
    pub(super) operation: Operation,
    pub(super) phase: Arc<Mutex<Phase>>,
    pub(super) reply: oneshot::Sender<Result<Outcome, RepositoryError>>,
    /// Statements run for it so far (a release or renew that met the caller's own lock
    /// appearing runs again, like the per-request statements do).
    pub(super) attempts: usize,
}

impl Queued {
    /// Marks a statement for this operation as started and moves its caller's deadline to
    /// `statement` from now; `false` when the caller has given up (then nothing may run).
    pub(super) fn start(&self, statement: Duration) -> bool {
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
    pub(super) fn answer(
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
    pub(super) fn gone(&self) -> bool {
        self.reply.is_closed() || matches!(*lock(&self.phase), Phase::Abandoned)
    }
}

/// The queue and which keys executors hold.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) waiting: VecDeque<Queued>,
    /// Keys of operations that an executor has taken and not yet answered.
    pub(super) running: HashSet<Key>,
    /// The arrival number of the next operation.
    pub(super) next_seq: u64,
    /// Counts arrivals and finished batches: an executor that found nothing it could take
    /// sleeps until this changes.
    pub(super) changes: u64,
    pub(super) stopped: bool,
}

/// The queue and what the executors need, shared by the handle and the executors.
pub(super) struct Shared {
    pub(super) queue: Mutex<Queue>,
    pub(super) work: Condvar,
    pub(super) pool: r2d2::Pool<ConnectionManager>,
    pub(super) health: PoolHealth,
    /// Where an undone grant nobody heard of is reported.
    pub(super) events: std::sync::Arc<dyn lock_domain::StoreEvents>,
    pub(super) deadlines: Deadlines,
    pub(super) max_batch: usize,
    /// The holds the batch statement noted under sessions, in statements that committed.
    pub(super) notes: Mutex<crate::writer::noted_holds::NotedHolds>,
}

/// A poisoned lock only means another thread panicked while holding it; the data (a queue, a
/// phase) stays consistent at every step, so carry on.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
