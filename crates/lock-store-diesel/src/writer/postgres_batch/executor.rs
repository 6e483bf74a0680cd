//! The executors of the PostgreSQL batcher: threads that wait for work, take a pooled
//! connection and a batch, run it, answer, and free its keys.

use std::collections::VecDeque;
use std::sync::PoisonError;
use std::thread;
use std::time::Duration;

use lock_domain::RepositoryError;

use super::followers::answer_followers;
use super::queue::{lock, Key, Queue, Queued, Shared};
use super::statement::run_batch;
use crate::db_connection::DbConnection;

/// An executor: waits for work, takes a connection and a batch, runs it, answers, repeats.
pub(super) fn execute(shared: &Shared) {
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
            &*shared.events,
            &shared.notes,
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
