//! The background sweeper: deletes rows of long-expired locks, semaphore permits and shared
//! leases so the
//! tables do not grow without bound.

use std::time::Duration;

use crate::{DieselLockRepository, SweepPosition};

/// The tables of leases other than the locks' rows.
#[derive(Debug, Clone, Copy)]
enum Ended {
    Permits,
    SharedLeases,
    Sessions,
}

/// Every `interval`, runs a sweep pass: deletes expired rows in steps of at most `batch` rows
/// until the pass has looked at the whole table, then prunes history records older than
/// `history_retention` (none when it is `None`: this process keeps no history, and leaves
/// another's alone; else it also indexes the history as it grows, see [`index_history`]). Runs
/// until the returned future is dropped; failures are logged and the pass starts again next
/// interval.
pub async fn run_sweeper(
    repo: DieselLockRepository,
    interval: Duration,
    batch: u32,
    history_retention: Option<Duration>,
) {
    match history_retention {
        Some(_) => {
            tokio::join!(
                sweep(&repo, interval, batch, history_retention),
                index_history(&repo)
            );
        }
        None => sweep(&repo, interval, batch, history_retention).await,
    }
}

/// How often the history's segment entries catch up with the records (PostgreSQL; SQLite's are
/// written with them): a history read scans the batches written since directly.
const INDEX_INTERVAL: Duration = Duration::from_millis(500);
/// How many records one step of the history's indexing reads at most (but at least one batch,
/// up to 65,536 records): a step stays far inside the statement timeout, so a backlog (a bulk
/// load, an indexer that fell behind) is worked off in steps instead of timing out whole.
const INDEX_RECORDS: u32 = 16_384;

/// Every [`INDEX_INTERVAL`], writes the segment entries of the history batches written since
/// (`DieselLockRepository::index_history`); nothing on SQLite.
async fn index_history(repo: &DieselLockRepository) {
    loop {
        tokio::time::sleep(INDEX_INTERVAL).await;
        loop {
            match repo.index_history(INDEX_RECORDS).await {
                Ok(Some(indexed)) if indexed >= INDEX_RECORDS as usize => {
                    tokio::task::yield_now().await
                }
                Ok(Some(_)) => break,
                // SQLite: nothing to do, ever.
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, "indexing the history failed; retrying");
                    break;
                }
            }
        }
    }
}

async fn sweep(
    repo: &DieselLockRepository,
    interval: Duration,
    batch: u32,
    history_retention: Option<Duration>,
) {
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
        // Semaphore rows and shared leases: a full batch means there may be more.
        // Sessions that ran out: each ends every hold it had, so fewer at a time.
        for table in [Ended::Permits, Ended::SharedLeases, Ended::Sessions] {
            loop {
                let (step, full) = match table {
                    Ended::Permits => (repo.sweep_ended_permits(batch).await, batch),
                    Ended::SharedLeases => (repo.sweep_ended_shared(batch).await, batch),
                    Ended::Sessions => {
                        let sessions = (batch / 100).max(1);
                        (repo.sweep_run_out_sessions(sessions).await, sessions)
                    }
                };
                match step {
                    Ok(deleted) => {
                        swept += deleted;
                        if deleted < full as usize {
                            break;
                        }
                        tokio::task::yield_now().await;
                    }
                    Err(error) => {
                        tracing::warn!(%error, ?table, "sweeping ended leases failed; retrying next interval");
                        break;
                    }
                }
            }
        }
        if swept > 0 {
            tracing::debug!(swept, "swept expired locks");
        }
        if let Some(retention) = history_retention {
            prune_history(repo, retention, batch).await;
        }
    }
}

/// Deletes the history records older than `retention`, `batch` at a time.
async fn prune_history(repo: &DieselLockRepository, retention: Duration, batch: u32) {
    let Ok(retention) = chrono::TimeDelta::from_std(retention) else {
        return;
    };
    let before = chrono::Utc::now() - retention;
    let mut pruned = 0usize;
    loop {
        match lock_domain::HistoryRepository::prune_history(repo, before, batch).await {
            Ok(deleted) => {
                pruned += deleted;
                if deleted < batch as usize {
                    break;
                }
                tokio::task::yield_now().await;
            }
            Err(error) => {
                tracing::warn!(%error, "pruning old history failed; retrying next interval");
                break;
            }
        }
    }
    if pruned > 0 {
        tracing::debug!(pruned, "pruned old history");
    }
}
