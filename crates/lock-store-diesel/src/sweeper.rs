//! The background sweeper: deletes rows of long-expired locks and semaphore permits so the
//! tables do not grow without bound.

use std::time::Duration;

use crate::{DieselLockRepository, SweepPosition};

/// Every `interval`, runs a sweep pass: deletes expired rows in steps of at most `batch` rows
/// until the pass has looked at the whole table. Runs until the returned future is dropped;
/// failures are logged and the pass starts again next interval.
pub async fn run_sweeper(repo: DieselLockRepository, interval: Duration, batch: u32) {
    loop {
        tokio::time::sleep(interval).await;
        let mut swept = 0usize;
        let mut from = SweepPosition::START;
        loop {
            match repo.sweep_expired(batch, from).await {
                Ok(step) => {
                    swept += step.deleted;
                    let Some(next) = step.next else {
                        break;
                    };
                    from = next;
                    // Let other writers in between steps.
                    tokio::task::yield_now().await;
                }
                Err(error) => {
                    tracing::warn!(%error, "sweeping expired locks failed; retrying next interval");
                    break;
                }
            }
        }
        // Semaphore rows: a full batch means there may be more.
        loop {
            match repo.sweep_ended_permits(batch).await {
                Ok(deleted) => {
                    swept += deleted;
                    if deleted < batch as usize {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                Err(error) => {
                    tracing::warn!(%error, "sweeping ended semaphore permits failed; retrying next interval");
                    break;
                }
            }
        }
        if swept > 0 {
            tracing::debug!(swept, "swept expired locks");
        }
    }
}
