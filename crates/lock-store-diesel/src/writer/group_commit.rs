//! Group commit for SQLite: one writer thread owns the one connection that writes, and commits
//! the operations of many concurrent requests in one transaction (one fsync).
//!
//! Every write (acquire, release, renew, sweep) is a job sent to the writer. The writer takes
//! the first job waiting, then every job that arrived meanwhile (up to `max_batch`), runs them
//! one after another inside one `BEGIN IMMEDIATE` transaction, each in its own savepoint so that
//! a failing job does not undo the others, commits, and only then answers each caller through its
//! oneshot channel. A caller therefore never hears of a grant that is not durable, and no caller
//! holds a thread while it waits. Jobs of one batch see one `now`, read after the write lock is
//! taken, so timestamps follow commit order.
//!
//! A job whose caller has gone (its request was dropped) before the job starts is not run. One
//! whose caller goes while its batch runs has its result handed to the job's undo (for a grant:
//! undo that exact grant), which the writer runs in a transaction of its own right after the
//! batch, before any later job: nobody holds a lease that nobody heard of for longer than that.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::sqlite::SqliteConnection;
use lock_domain::{Clock, RepositoryError};
use tokio::sync::oneshot;

use super::wal_limit::WalLimit;
use super::{noted_holds, read_sessions, savepoint};
use crate::error::{from_query, ErrorClass};
use crate::foreign_commits::{CommitHints, ForeignCommits, SqliteFreedLocks};
use crate::history::{self, Capture};

/// What a job leaves behind: how to answer its caller once the batch's fate is known, giving
/// back the undo of a result that its caller is no longer there to hear.
type Answer = Box<dyn FnOnce(Option<&BatchFailure>) -> Option<Undo> + Send>;

/// Undoes the committed effect of a job whose caller has gone, given the connection and a
/// fresh `now`; says whether every statement of it ran (else its history is dropped).
type Undo = Box<dyn FnOnce(&mut SqliteConnection, i64) -> bool + Send>;

/// A write to run inside the batch transaction, given the connection and the batch's `now`; or,
/// given `None` when the batch could not even begin, nothing to run but a caller to answer.
/// Also says whether the write was kept (its savepoint released, not rolled back).
type Job = Box<dyn FnOnce(Option<(&mut SqliteConnection, i64)>) -> (Answer, bool) + Send>;

/// What reaches the writer thread: a job; jobs that must run in one batch, in their order; or
/// only a wake-up (someone started listening for other processes' commits: `foreign_commits`).
enum Message {
    Job(Job),
    Together(Vec<Job>),
    Wake,
}

/// A job not yet sent to the writer, and where its caller hears its result.
pub(crate) struct Prepared<T> {
    job: Job,
    answer: oneshot::Receiver<Result<T, RepositoryError>>,
}

/// A job's result, once its batch has committed (or failed).
async fn answer_of<T>(
    answer: oneshot::Receiver<Result<T, RepositoryError>>,
) -> Result<T, RepositoryError> {
    answer
        .await
        .map_err(|_| RepositoryError::internal("the SQLite writer dropped a job"))?
}

/// Why a whole batch failed (the transaction could not begin or commit), kept as text and class
/// so that every caller of the batch gets its own error.
struct BatchFailure {
    class: ErrorClass,
    message: String,
}

impl BatchFailure {
    fn to_error(&self) -> RepositoryError {
        self.class
            .error(format!("the batch transaction failed: {}", self.message))
    }
}

/// A job's own failure inside its savepoint.
enum JobError {
    Repository(RepositoryError),
    Query(diesel::result::Error),
}

impl From<diesel::result::Error> for JobError {
    fn from(error: diesel::result::Error) -> Self {
        JobError::Query(error)
    }
}

/// The handle requests use to reach the writer thread. The thread ends when every handle is gone.
pub(crate) struct GroupCommitWriter {
    /// `None` only while the handle is dropped. The subscriptions to other processes' commits
    /// hold it weakly (to wake the thread), so that the thread still ends with the handle.
    jobs: Option<Arc<mpsc::Sender<Message>>>,
    thread: Option<thread::JoinHandle<()>>,
    /// Where to hear of other processes' commits, which the writer thread watches for.
    foreign: CommitHints,
}

/// Dropping the handle waits for the writer thread to end: for the batch it is running, and for
/// it to empty the WAL (`wal_limit`), so that a process that stops leaves no WAL behind.
impl Drop for GroupCommitWriter {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(writer) = self.thread.take() {
            // A job holding the last handle ends on the writer thread itself: it cannot wait
            // for itself.
            if writer.thread().id() != thread::current().id() {
                let _ = writer.join();
            }
        }
    }
}

impl GroupCommitWriter {
    /// Starts the writer thread on `conn`.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn spawn(
        conn: SqliteConnection,
        clock: Arc<dyn Clock>,
        max_batch: usize,
        record_history: bool,
        wal: Option<WalLimit>,
    ) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Message>();
        let jobs = Arc::new(jobs);
        let mut conn = conn;
        history::sqlite_install_write(&mut conn).map_err(|error| {
            std::io::Error::other(format!("cannot set up the writer's TEMP table: {error}"))
        })?;
        crate::expired_holds::install_sqlite(&mut conn).map_err(|error| {
            std::io::Error::other(format!(
                "cannot set up the expired holds' triggers: {error}"
            ))
        })?;
        // A process that records history collects the records of its transactions through TEMP
        // triggers of this connection; one that records none has no triggers at all.
        let capture = if record_history {
            Some(Capture::install(&mut conn).map_err(|error| {
                std::io::Error::other(format!("cannot set up the history's triggers: {error}"))
            })?)
        } else {
            None
        };
        let writer = Transactions { clock, capture };
        let weak_jobs = Arc::downgrade(&jobs);
        let (watch, foreign) = ForeignCommits::new(Arc::new(move || {
            if let Some(jobs) = weak_jobs.upgrade() {
                let _ = jobs.send(Message::Wake);
            }
        }));
        let thread = thread::Builder::new()
            .name("lockd-sqlite-writer".into())
            .spawn(move || run(conn, writer, queue, max_batch.max(1), wal, watch))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
            foreign,
        })
    }

    /// A subscription to hints of other processes' commits (`foreign_commits`), or `None` once
    /// the writer thread has ended.
    pub(crate) fn subscribe_foreign(&self) -> Option<SqliteFreedLocks> {
        self.foreign.subscribe()
    }

    /// Runs `work` in the next batch and returns its result once that batch has committed.
    pub(crate) async fn submit<T, F>(&self, work: F) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
    {
        self.submit_undoable(work, |_, _, _| true).await
    }

    /// [`Self::submit`], and if the caller has gone by the time `work` committed, `undo` runs
    /// with its result right after the batch (see the module documentation).
    pub(crate) async fn submit_undoable<T, F, U>(
        &self,
        work: F,
        undo: U,
    ) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
        U: FnOnce(&mut SqliteConnection, i64, T) -> bool + Send + 'static,
    {
        self.submit_prepared(prepare(work, undo)).await
    }

    /// Runs a prepared job in the next batch and returns its result once that batch has
    /// committed.
    pub(crate) async fn submit_prepared<T>(&self, job: Prepared<T>) -> Result<T, RepositoryError> {
        self.send(Message::Job(job.job))?;
        answer_of(job.answer).await
    }

    /// Runs the prepared jobs in one batch, in their order (one transaction, one commit, each
    /// job in its savepoint as always), and returns their results once it has committed.
    pub(crate) async fn submit_together<T>(
        &self,
        jobs: Vec<Prepared<T>>,
    ) -> Vec<Result<T, RepositoryError>> {
        let (jobs, answers): (Vec<Job>, Vec<_>) =
            jobs.into_iter().map(|p| (p.job, p.answer)).unzip();
        if self.send(Message::Together(jobs)).is_err() {
            return answers
                .iter()
                .map(|_| {
                    Err(RepositoryError::unavailable(
                        "the SQLite writer has stopped",
                    ))
                })
                .collect();
        }
        let mut results = Vec::with_capacity(answers.len());
        for answer in answers {
            results.push(answer_of(answer).await);
        }
        results
    }

    fn send(&self, message: Message) -> Result<(), RepositoryError> {
        self.jobs
            .as_ref()
            .ok_or_else(|| RepositoryError::unavailable("the SQLite writer has stopped"))?
            .send(message)
            .map_err(|_| RepositoryError::unavailable("the SQLite writer has stopped"))
    }
}

/// The job that runs `work` in a batch, and if its caller has gone by the time `work` committed,
/// `undo` with its result right after the batch (see the module documentation).
pub(crate) fn prepare<T, F, U>(work: F, undo: U) -> Prepared<T>
where
    T: Send + 'static,
    F: FnOnce(&mut SqliteConnection, i64) -> Result<T, RepositoryError> + Send + 'static,
    U: FnOnce(&mut SqliteConnection, i64, T) -> bool + Send + 'static,
{
    let (reply, answer) = oneshot::channel();
    let job: Job = Box::new(move |batch: Option<(&mut SqliteConnection, i64)>| {
        if reply.is_closed() {
            // The caller went away before its write started: nothing runs for it.
            return (Box::new(|_: Option<&BatchFailure>| None) as Answer, true);
        }
        // A savepoint per job: a failing job is undone alone, the batch goes on.
        let outcome = batch.map(|(conn, now_ms)| {
            savepoint::in_savepoint::<T, JobError>(conn, |conn| {
                work(conn, now_ms).map_err(JobError::Repository)
            })
            .map_err(|error| match error {
                JobError::Repository(error) => error,
                JobError::Query(error) => from_query(error),
            })
        });
        let kept = matches!(outcome, Some(Ok(_)));
        let answer = Box::new(move |failure: Option<&BatchFailure>| {
            let result = match (failure, outcome) {
                (Some(failure), _) => Err(failure.to_error()),
                (None, Some(outcome)) => outcome,
                (None, None) => Err(RepositoryError::internal("a job of a failed batch")),
            };
            match reply.send(result) {
                Ok(()) | Err(Err(_)) => None,
                // The caller went away while its batch ran: undo what nobody will hear of.
                Err(Ok(value)) => Some(Box::new(move |conn: &mut SqliteConnection, now_ms: i64| {
                    undo(conn, now_ms, value)
                }) as Undo),
            }
        }) as Answer;
        (answer, kept)
    });
    Prepared { job, answer }
}

/// How the writer begins and commits its transactions: with the clock's `now`, told to the
/// history's triggers, and writing the records they collected.
struct Transactions {
    clock: Arc<dyn Clock>,
    capture: Option<Capture>,
}

impl Transactions {
    /// Where the next job's history records and session notes start.
    fn mark(&self) -> (usize, usize) {
        (
            self.capture.as_ref().map_or(0, Capture::mark),
            noted_holds::mark(),
        )
    }

    /// The job that started at `mark` was rolled back: so are its records and notes.
    fn rewind(&self, (records, notes): (usize, usize)) {
        if let Some(capture) = &self.capture {
            capture.rewind(records);
        }
        noted_holds::rewind(notes);
        read_sessions::rewind();
    }

    /// Writes the history of the transaction and commits it; rolls it back when either fails,
    /// or when a job's savepoint failed (`savepoint`).
    fn commit(&mut self, conn: &mut SqliteConnection, now_ms: i64) -> diesel::QueryResult<()> {
        let written = match (savepoint::take_spoiled(), &mut self.capture) {
            (Some(error), _) => Err(error),
            (None, Some(capture)) => capture.write(conn, now_ms),
            (None, None) => Ok(()),
        };
        let committed = written.and_then(|()| AnsiTransactionManager::commit_transaction(conn));
        if committed.is_ok() {
            noted_holds::committed();
            read_sessions::committed();
        } else {
            // A failed COMMIT may leave the transaction open: roll it back so the next one
            // starts clean.
            let _ = AnsiTransactionManager::rollback_transaction(conn);
            if let Some(capture) = &mut self.capture {
                capture.failed();
            }
        }
        committed
    }
}

fn run(
    mut conn: SqliteConnection,
    mut writer: Transactions,
    queue: mpsc::Receiver<Message>,
    max_batch: usize,
    mut wal: Option<WalLimit>,
    mut foreign: ForeignCommits,
) {
    noted_holds::install();
    read_sessions::install();
    let mut batch: Vec<Job> = Vec::with_capacity(max_batch);
    loop {
        // Wakes for the WAL's checks and for other processes' commits even when no job comes.
        let wake_at = [wal.as_ref().map(WalLimit::next_check), foreign.next_probe()]
            .into_iter()
            .flatten()
            .min();
        let first = match wake_at {
            Some(at) => queue.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => queue
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match first {
            Ok(message) => {
                add(&mut batch, message);
                while !batch.is_empty() && batch.len() < max_batch {
                    match queue.try_recv() {
                        Ok(message) => add(&mut batch, message),
                        Err(_) => break,
                    }
                }
                if !batch.is_empty() && run_batch(&mut conn, &mut writer, &mut batch) {
                    foreign.undone_here();
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if let Some(wal) = &mut wal {
            wal.keep(&mut conn);
        }
        foreign.probe(&mut conn);
    }
    if let Some(wal) = &mut wal {
        wal.finish(&mut conn);
    }
}

/// Adds the jobs of `message` to `batch`. Jobs sent together are never split: a batch may go
/// over its size by them.
fn add(batch: &mut Vec<Job>, message: Message) {
    match message {
        Message::Job(job) => batch.push(job),
        Message::Together(jobs) => batch.extend(jobs),
        Message::Wake => {}
    }
}

/// Runs one batch, then the undos of what its gone callers were granted; says whether such
/// undos committed (leases ended that no request of this process was told of).
fn run_batch(conn: &mut SqliteConnection, writer: &mut Transactions, batch: &mut Vec<Job>) -> bool {
    let mut answers: Vec<Answer> = Vec::with_capacity(batch.len());
    let failure = match begin_at(conn, writer) {
        Err(error) => {
            answers.extend(batch.drain(..).map(|job| job(None).0));
            Some(error)
        }
        Ok(now_ms) => {
            for job in batch.drain(..) {
                let mark = writer.mark();
                let (answer, kept) = job(Some((&mut *conn, now_ms)));
                if !kept {
                    writer.rewind(mark);
                }
                answers.push(answer);
            }
            writer.commit(conn, now_ms).err()
        }
    };
    let failure = failure.map(|error| BatchFailure {
        class: ErrorClass::of(&error),
        message: error.to_string(),
    });
    if let Some(failure) = &failure {
        tracing::warn!(error = %failure.message, jobs = answers.len(), "SQLite batch failed");
    }
    let undos: Vec<Undo> = answers
        .into_iter()
        .filter_map(|answer| answer(failure.as_ref()))
        .collect();
    !undos.is_empty() && run_undos(conn, writer, undos)
}

/// Runs the undos of a batch in one transaction of their own, before the next batch; says
/// whether it committed.
fn run_undos(conn: &mut SqliteConnection, writer: &mut Transactions, undos: Vec<Undo>) -> bool {
    let now_ms = match begin_at(conn, writer) {
        Ok(now_ms) => now_ms,
        Err(error) => {
            tracing::warn!(%error, undos = undos.len(), "cannot undo grants nobody heard of; they expire with their leases");
            return false;
        }
    };
    for undo in undos {
        // Each in a savepoint of its own, so that the records of an undo that failed part way
        // go with it.
        let mark = writer.mark();
        let undone = savepoint::in_savepoint::<(), diesel::result::Error>(conn, |conn| {
            if undo(conn, now_ms) {
                Ok(())
            } else {
                Err(diesel::result::Error::RollbackTransaction)
            }
        });
        if undone.is_err() {
            writer.rewind(mark);
        }
    }
    match writer.commit(conn, now_ms) {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "cannot undo grants nobody heard of; they expire with their leases");
            false
        }
    }
}

fn begin_immediate(conn: &mut SqliteConnection) -> diesel::QueryResult<()> {
    AnsiTransactionManager::begin_transaction_sql(conn, "BEGIN IMMEDIATE")
}

/// Begins a transaction holding the write lock and returns its `now`, read after the lock was
/// taken and told to the history's triggers (`history::sqlite_begin`). Rolls back what it
/// began when it fails.
fn begin_at(conn: &mut SqliteConnection, writer: &mut Transactions) -> diesel::QueryResult<i64> {
    if let Some(capture) = &mut writer.capture {
        capture.begin();
    }
    noted_holds::begin();
    savepoint::begin();
    begin_immediate(conn)?;
    read_sessions::begin(conn);
    let now_ms = writer.clock.now().timestamp_millis();
    if let Err(error) = history::sqlite_begin(conn, now_ms) {
        let _ = AnsiTransactionManager::rollback_transaction(conn);
        return Err(error);
    }
    Ok(now_ms)
}

#[cfg(test)]
mod tests;
