//! The background sweeper: deletes rows of long-expired locks so the table does not grow without
//! bound.

use std::time::Duration;

use crate::DieselLockRepository;

/// Every `interval`, deletes expired rows in batches of `batch` until a batch comes back short.
/// Runs until the returned future is dropped; failures are logged and retried next interval.
pub async fn run_sweeper(repo: DieselLockRepository, interval: Duration, batch: u32) {
    loop {
        tokio::time::sleep(interval).await;
        let mut swept = 0usize;
        loop {
            match repo.sweep_expired(batch).await {
                Ok(deleted) => {
                    swept += deleted;
                    if deleted < batch as usize {
                        break;
                    }
                    // Let other writers in between full batches.
                    tokio::task::yield_now().await;
                }
                Err(error) => {
                    tracing::warn!(%error, "sweeping expired locks failed; retrying next interval");
                    break;
                }
            }
        }
        if swept > 0 {
            tracing::debug!(swept, "swept expired locks");
        }
    }
}
