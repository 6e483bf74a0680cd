//! The small runtime each guard owns: its background task (renewals, keepalives) and the
//! service's futures run there, and a blocking caller waits for their answers on a channel.

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use tokio::runtime::Runtime;

use crate::GuardError;

/// A guard's own runtime: one worker thread.
pub(crate) fn guard_runtime() -> Result<Runtime, GuardError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("lock-guard")
        .enable_time()
        .build()
        .map_err(GuardError::Runtime)
}

/// Runs `future` on the guard's runtime and waits for it on this thread, at most `timeout`.
/// Waiting on a std channel (not `block_on`) works from any thread, even one inside another
/// runtime, so dropping a guard never panics.
pub(crate) fn run_on<T: Send + 'static>(
    runtime: &Runtime,
    timeout: Duration,
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, GuardError> {
    let (answer, answered) = mpsc::sync_channel(1);
    let task = runtime.spawn(async move {
        let _ = answer.send(future.await);
    });
    match answered.recv_timeout(timeout) {
        Ok(value) => Ok(value),
        Err(_) => {
            task.abort();
            Err(GuardError::Timeout(timeout))
        }
    }
}
