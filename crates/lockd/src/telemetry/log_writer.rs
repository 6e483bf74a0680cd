//! The bounded queue between whoever logs and the one thread that writes the lines out, so that
//! a slow or stalled reader of standard error (a stuck log collector, a full pipe) never holds
//! up a request or a health check: when the queue is full, a line is dropped and counted
//! instead of waited for.
//!
//! A request thread only copies its already formatted line into the queue under a short lock;
//! the writer thread swaps the whole queue out and writes it with one `write_all`, then lets the
//! next lines gather for a moment ([`GATHER`]), so a busy server writes dozens of lines per
//! system call and wakes the writer a few hundred times a second, not once per line.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// How long the guard waits, when dropped, for the lines still queued to be written: a stalled
/// reader must not hold up the process's exit for longer.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the writer lets lines gather after writing a batch: under load, lines then go out
/// a few dozen per system call, and loggers wake the writer at most this often, instead of once
/// or twice per request. A line waits at most this much longer to be written.
const GATHER: Duration = Duration::from_millis(2);

/// The least time between two log lines that say lines were dropped.
const DROPPED_NOTICE_EVERY: Duration = Duration::from_secs(10);

/// Where loggers put their lines: a [`MakeWriter`] for tracing-subscriber. Clones share the
/// queue.
#[derive(Clone)]
pub struct LogQueue {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a line arrives while the writer waits, or when the queue closes.
    wake_writer: Condvar,
    /// Signalled when the writer has written a batch.
    written: Condvar,
    /// The most bytes that wait in the queue.
    capacity: usize,
    /// Lines dropped: the queue was full, or writing them failed.
    dropped: Arc<AtomicU64>,
}

#[derive(Default)]
struct State {
    /// Whole lines, in the order they came.
    pending: Vec<u8>,
    pending_lines: u64,
    /// The writer waits for lines (so a new line must wake it).
    writer_idle: bool,
    /// The writer is writing a batch it took out of the queue.
    writing: bool,
    /// No more batches after the queue is empty: the writer ends.
    closed: bool,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until every line queued is written, or until `deadline`: the state then, or `None`
    /// when the deadline came first.
    fn written_by<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        deadline: Instant,
    ) -> Option<MutexGuard<'a, State>> {
        while !state.pending.is_empty() || state.writing {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            state = self
                .written
                .wait_timeout(state, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        Some(state)
    }

    /// Queues one line, or drops and counts it when the queue has no room for it. Never waits
    /// for the writer.
    fn push(&self, line: &[u8]) {
        let mut state = self.state();
        if state.pending.len() + line.len() > self.capacity {
            drop(state);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        state.pending.extend_from_slice(line);
        state.pending_lines += 1;
        // One wake per wait: the writer takes every line queued by the time it runs.
        let wake = std::mem::take(&mut state.writer_idle);
        drop(state);
        if wake {
            self.wake_writer.notify_one();
        }
    }
}

impl LogQueue {
    /// Starts the writer thread, writing to `out`, with room for `capacity` bytes of lines;
    /// lines that find no room are counted in `dropped`. Returns the queue and the guard that
    /// writes out what is left when dropped.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn start<W>(
        out: W,
        capacity: usize,
        dropped: Arc<AtomicU64>,
    ) -> io::Result<(LogQueue, LogWriterGuard)>
    where
        W: Write + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_writer: Condvar::new(),
            written: Condvar::new(),
            capacity,
            dropped,
        });
        let writer = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("lockd-log-writer".to_owned())
            .spawn(move || write_lines(&writer, out))?;
        Ok((
            LogQueue {
                shared: Arc::clone(&shared),
            },
            LogWriterGuard {
                shared,
                thread: Some(thread),
            },
        ))
    }
}

/// The writer thread: takes every queued line at once, writes them, and again, until the queue
/// is closed and empty.
fn write_lines(shared: &Shared, mut out: impl Write) {
    let mut batch = Vec::new();
    let mut reported = 0;
    let mut last_notice: Option<Instant> = None;
    loop {
        let lines = {
            let mut state = shared.state();
            while state.pending.is_empty() {
                if state.closed {
                    return;
                }
                state.writer_idle = true;
                state = shared
                    .wake_writer
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                state.writer_idle = false;
            }
            // The two buffers trade places, so neither is allocated again once grown.
            std::mem::swap(&mut state.pending, &mut batch);
            state.writing = true;
            std::mem::take(&mut state.pending_lines)
        };
        let written = out.write_all(&batch).and_then(|()| out.flush());
        batch.clear();
        if written.is_err() {
            shared.dropped.fetch_add(lines, Ordering::Relaxed);
        }
        let (has_room, closed) = {
            let mut state = shared.state();
            state.writing = false;
            (state.pending.len() < shared.capacity / 2, state.closed)
        };
        shared.written.notify_all();
        if !closed {
            std::thread::sleep(GATHER);
        }

        // Say in the log itself that lines are missing, at most every few seconds, once the
        // reader takes lines again. The line goes through the queue like any other, so only
        // while it has room (right after a stall it is still full).
        let dropped = shared.dropped.load(Ordering::Relaxed);
        if written.is_ok()
            && has_room
            && dropped > reported
            && last_notice.is_none_or(|at| at.elapsed() >= DROPPED_NOTICE_EVERY)
        {
            tracing::warn!(
                dropped = dropped - reported,
                dropped_total = dropped,
                "log lines were dropped: standard error did not take them in time (see \
                 lockd_log_lines_dropped_total)"
            );
            reported = dropped;
            last_notice = Some(Instant::now());
        }
    }
}

impl<'a> MakeWriter<'a> for LogQueue {
    type Writer = QueuedLine<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        QueuedLine {
            shared: &self.shared,
        }
    }
}

/// A writer for one event. tracing-subscriber's fmt layer formats an event into its own buffer
/// and writes it with one `write_all`, so each `write` here is one whole line, and is queued or
/// dropped whole.
pub struct QueuedLine<'a> {
    shared: &'a Shared,
}

impl Write for QueuedLine<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        self.shared.push(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Closes the queue when dropped, and waits (at most [`DRAIN_TIMEOUT`]) until the lines still in
/// it are written, so that the last lines before an exit are not lost to a reader that keeps
/// up. Keep it alive as long as the process logs.
#[must_use = "dropping the guard closes the log queue"]
pub struct LogWriterGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl LogWriterGuard {
    /// Waits (at most `within`) until every line queued so far is written: what is logged
    /// before a line printed straight to standard error (`listening on ...`) then comes before
    /// it. A stalled reader costs at most `within`.
    pub fn drain(&self, within: Duration) {
        let state = self.shared.state();
        drop(self.shared.written_by(state, Instant::now() + within));
    }
}

impl Drop for LogWriterGuard {
    fn drop(&mut self) {
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        let mut state = self.shared.state();
        state.closed = true;
        self.shared.wake_writer.notify_one();
        if self.shared.written_by(state, deadline).is_none() {
            // The reader is stalled: leave the writer blocked and let the process go.
            return;
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc::{self, Receiver, Sender};
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::LogQueue;

    /// An output that reports each write and then waits for leave to go on, like a pipe whose
    /// reader stalls.
    struct Gated {
        entered: Sender<()>,
        go_on: Receiver<()>,
        written: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gated {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            let _ = self.entered.send(());
            let _ = self.go_on.recv();
            self.written.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn log(queue: &LogQueue, line: &str) {
        queue
            .make_writer()
            .write_all(line.as_bytes())
            .expect("queueing never fails");
    }

    #[test]
    fn a_full_queue_drops_and_counts_lines_instead_of_waiting_then_writes_the_rest_in_order() {
        let (entered_tx, entered) = mpsc::channel();
        let (go_on, go_on_rx) = mpsc::channel();
        let written = Arc::new(Mutex::new(Vec::new()));
        let dropped = Arc::new(AtomicU64::new(0));
        let out = Gated {
            entered: entered_tx,
            go_on: go_on_rx,
            written: Arc::clone(&written),
        };
        let (queue, guard) = LogQueue::start(out, 40, Arc::clone(&dropped)).expect("thread");

        log(&queue, "first\n");
        entered
            .recv()
            .expect("the writer took the first line and is stuck");
        // Ten bytes a line: four fit in 40 bytes, the other six are dropped at once.
        for n in 0..10 {
            log(&queue, &format!("line {n:03}\n"));
        }
        assert_eq!(dropped.load(Ordering::Relaxed), 6);

        // The reader comes back: nothing that was queued is lost, and no line is torn.
        drop(entered);
        for _ in 0..2 {
            go_on.send(()).expect("the writer waits");
        }
        drop(guard);
        let written = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        assert_eq!(written, "first\nline 000\nline 001\nline 002\nline 003\n");
    }

    struct Broken;

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_that_cannot_be_written_count_as_dropped() {
        let dropped = Arc::new(AtomicU64::new(0));
        let (queue, guard) = LogQueue::start(Broken, 1024, Arc::clone(&dropped)).expect("thread");
        log(&queue, "one\n");
        log(&queue, "two\n");
        drop(guard);
        assert_eq!(dropped.load(Ordering::Relaxed), 2);
    }
}
