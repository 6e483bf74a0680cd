//! Work on a pooled connection, on tokio's blocking pool, so that no caller blocks an async
//! worker: the reads, and on PostgreSQL the writes that do not go through the batcher. On
//! PostgreSQL each phase has a deadline ([`Deadlines`]), and a result whose caller has given up
//! or gone away is undone rather than lost.

use std::sync::{Arc, Mutex};

use lock_domain::{Clock, RepositoryError, StoreEvents};
use tokio::sync::oneshot;

use crate::config::Deadlines;
use crate::connection::{ConnectionManager, PoolHealth};
use crate::db_connection::DbConnection;
use crate::error::{from_pool, NoAnswer};

/// The pool and how to run work on it. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub(crate) struct Pooled {
    shared: Arc<Shared>,
}

struct Shared {
    pool: r2d2::Pool<ConnectionManager>,
    /// Makes the pool test its connections after a failure (see `PoolHealth`).
    health: PoolHealth,
    /// The clock of SQLite reads; PostgreSQL uses its server's.
    clock: Arc<dyn Clock>,
    /// PostgreSQL only: see [`crate::StoreConfig::deadlines`].
    deadlines: Option<Deadlines>,
    /// Where the writers report what they did on their own (grants nobody heard of, undone).
    events: Arc<dyn StoreEvents>,
}

impl Pooled {
    pub(crate) fn new(
        pool: r2d2::Pool<ConnectionManager>,
        health: PoolHealth,
        clock: Arc<dyn Clock>,
        deadlines: Option<Deadlines>,
        events: Arc<dyn StoreEvents>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                pool,
                health,
                clock,
                deadlines,
                events,
            }),
        }
    }

    /// Where the writers report what they did on their own.
    pub(crate) fn events(&self) -> &Arc<dyn StoreEvents> {
        &self.shared.events
    }

    pub(crate) fn pool(&self) -> &r2d2::Pool<ConnectionManager> {
        &self.shared.pool
    }

    pub(crate) fn health(&self) -> &PoolHealth {
        &self.shared.health
    }

    /// Runs `op` on a pooled connection on tokio's blocking pool (reads; on PostgreSQL also the
    /// writes that do not go through the batcher).
    pub(crate) async fn run<T, F>(&self, op: F) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
    {
        self.run_undoable(op, |_, _| {}).await
    }

    /// [`Self::run`], and when the caller has given up (answered 503) or gone away by the time
    /// `op` succeeded, `undo` runs on the same connection with its result, which nobody will
    /// hear of. The caller gives up, and `op`'s end is recorded, under one lock, so a result is
    /// either answered or undone, never lost.
    pub(crate) async fn run_undoable<T, F, U>(&self, op: F, undo: U) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
        U: FnOnce(&mut DbConnection, T) + Send + 'static,
    {
        let inner = Arc::clone(&self.shared);
        let deadlines = inner.deadlines;
        let caller = Arc::new(Mutex::new(Caller::Waiting));
        let mut gone = CallerGone(Arc::clone(&caller));
        let (connected, has_connection) = oneshot::channel::<()>();
        let work = tokio::task::spawn_blocking(move || {
            if matches!(*lock_caller(&caller), Caller::Gone) {
                return Err(RepositoryError::unavailable("the caller has gone"));
            }
            let mut conn = inner.pool.get().map_err(from_pool)?;
            let _ = connected.send(());
            let now_ms = inner.clock.now().timestamp_millis();
            let result = op(&mut conn, now_ms);
            if let Err(RepositoryError::Unavailable(_)) = &result {
                inner.health.suspect();
            }
            let mut state = lock_caller(&caller);
            match (&*state, result) {
                (Caller::Gone, Ok(value)) => {
                    drop(state);
                    undo(&mut conn, value);
                    Err(RepositoryError::unavailable("the caller has gone"))
                }
                (_, result) => {
                    *state = Caller::Answered;
                    result
                }
            }
        });
        let Some(deadlines) = deadlines else {
            let joined = work.await;
            gone.disarm();
            return joined.map_err(RepositoryError::internal)?;
        };
        // A database that stopped answering (a black-holed connection) must not hold the
        // request: give up per phase, and let the blocking thread finish or fail on its own.
        tokio::pin!(work);
        tokio::select! {
            joined = &mut work => {
                gone.disarm();
                return joined.map_err(RepositoryError::internal)?;
            }
            connection = tokio::time::timeout(deadlines.connection, has_connection) => {
                if connection.is_err() && gone.give_up() {
                    return Err(RepositoryError::unavailable(NoAnswer(deadlines.connection)));
                }
            }
        }
        match tokio::time::timeout(deadlines.statement, &mut work).await {
            Ok(joined) => {
                gone.disarm();
                joined.map_err(RepositoryError::internal)?
            }
            Err(_) if gone.give_up() => {
                Err(RepositoryError::unavailable(NoAnswer(deadlines.statement)))
            }
            // The work ended just now: its result is on its way.
            Err(_) => {
                let joined = work.await;
                gone.disarm();
                joined.map_err(RepositoryError::internal)?
            }
        }
    }
}

/// Where the caller of [`Pooled::run_undoable`] is.
enum Caller {
    Waiting,
    /// It gave up or went away: a result is undone, not answered.
    Gone,
    /// The work has ended and its result goes to the caller.
    Answered,
}

fn lock_caller(caller: &Mutex<Caller>) -> std::sync::MutexGuard<'_, Caller> {
    caller
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks the caller gone when its request is dropped before the work has answered.
struct CallerGone(Arc<Mutex<Caller>>);

impl CallerGone {
    /// Gives up waiting; `false` when the work has answered meanwhile (wait for it then).
    fn give_up(&mut self) -> bool {
        let mut state = lock_caller(&self.0);
        if matches!(*state, Caller::Answered) {
            return false;
        }
        *state = Caller::Gone;
        true
    }

    fn disarm(&mut self) {
        *lock_caller(&self.0) = Caller::Answered;
    }
}

impl Drop for CallerGone {
    fn drop(&mut self) {
        let mut state = lock_caller(&self.0);
        if matches!(*state, Caller::Waiting) {
            *state = Caller::Gone;
        }
    }
}
