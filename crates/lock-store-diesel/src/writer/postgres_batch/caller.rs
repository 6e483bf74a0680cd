//! The caller's side of the PostgreSQL batcher: queue an operation, then wait for its answer
//! within its deadlines, or withdraw it.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use lock_domain::RepositoryError;
use tokio::sync::oneshot;

use super::queue::{lock, Key, Outcome, Phase, Queued, Shared};
use crate::config::Deadlines;
use crate::error::NoAnswer;
use crate::postgres::writes::Operation;

/// Queues `operation` and waits for its outcome, or answers `Unavailable` once its deadline
/// has passed (see the batcher's module documentation).
pub(super) async fn submit(
    shared: &Shared,
    key: Key,
    operation: Operation,
) -> Result<Outcome, RepositoryError> {
    let phase = Arc::new(Mutex::new(Phase::Queued));
    let (reply, mut answer) = oneshot::channel();
    let seq;
    {
        let mut queue = lock(&shared.queue);
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
    shared.work.notify_one();
    // If this request is dropped while it waits (its client went away), the operation is
    // withdrawn like one that timed out.
    let mut withdraw = Withdraw {
        shared,
        phase: &phase,
        seq,
        armed: true,
    };
    let Deadlines {
        connection,
        statement,
    } = shared.deadlines;
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
