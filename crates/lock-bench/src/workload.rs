//! The workloads, written once over a `LockClient`, so that every system is driven by the same
//! code path: W1 (uncontended cycles), W2 (contended, fairness), W4 (status reads), W6
//! (semaphore permits, contended); W7 (a read/write lock) is in `read_write.rs`.

use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use crate::stats::RunStats;

/// The mode of a read/write lock's acquire (W7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// One of several readers.
    Shared,
    /// The one writer.
    Exclusive,
}

/// One benchmark client's connection to a lock system.
pub trait LockClient: Send + 'static {
    /// Tries to take `resource` for this client (30 s lease); `Ok(true)` when granted.
    fn acquire(&mut self, resource: &str) -> impl Future<Output = io::Result<bool>> + Send;
    /// Releases this client's lock on `resource`; `Ok(true)` when it was released.
    fn release(&mut self, resource: &str) -> impl Future<Output = io::Result<bool>> + Send;
    /// Tries to take one permit of `semaphore`, of limit `limit` (30 s lease); `Ok(true)` when
    /// granted.
    fn acquire_permit(
        &mut self,
        semaphore: &str,
        limit: u32,
    ) -> impl Future<Output = io::Result<bool>> + Send {
        let _ = (semaphore, limit);
        async {
            Err(io::Error::other(
                "semaphores are not measured for this system",
            ))
        }
    }
    /// Releases this client's permit of `semaphore`; `Ok(true)` when it was released.
    fn release_permit(&mut self, semaphore: &str) -> impl Future<Output = io::Result<bool>> + Send {
        let _ = semaphore;
        async {
            Err(io::Error::other(
                "semaphores are not measured for this system",
            ))
        }
    }
    /// Tries to take `resource` in `mode` (30 s lease), waiting up to `wait` for it (at once
    /// when zero); `Ok(true)` when granted.
    fn acquire_in(
        &mut self,
        resource: &str,
        mode: LockMode,
        wait: Duration,
    ) -> impl Future<Output = io::Result<bool>> + Send {
        let _ = (resource, mode, wait);
        async {
            Err(io::Error::other(
                "read/write locks are not measured for this system",
            ))
        }
    }
    /// Releases this client's lock on `resource`, taken in `mode`; `Ok(true)` when it was
    /// released.
    fn release_in(
        &mut self,
        resource: &str,
        mode: LockMode,
    ) -> impl Future<Output = io::Result<bool>> + Send {
        let _ = (resource, mode);
        async {
            Err(io::Error::other(
                "read/write locks are not measured for this system",
            ))
        }
    }
    /// Reads the status of `resource`; `Ok(true)` when the answer was well formed.
    fn status(&mut self, resource: &str) -> impl Future<Output = io::Result<bool>> + Send {
        let _ = resource;
        async {
            Err(io::Error::other(
                "status reads are not measured for this system",
            ))
        }
    }
}

/// Opens the clients of one run.
pub trait LockSystem: Sync {
    type Client: LockClient;
    fn connect(&self, client: usize) -> impl Future<Output = io::Result<Self::Client>> + Send;
}

pub(crate) fn micros(since: Instant) -> u32 {
    since.elapsed().as_micros().min(u128::from(u32::MAX)) as u32
}

pub(crate) async fn run_clients<S, F, Fut>(
    system: &S,
    clients: usize,
    duration: Duration,
    body: F,
) -> RunStats
where
    S: LockSystem,
    F: Fn(usize, S::Client, Instant) -> Fut,
    Fut: Future<Output = RunStats> + Send + 'static,
{
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for client in 0..clients {
        match system.connect(client).await {
            Ok(connection) => tasks.push(tokio::spawn(body(client, connection, deadline))),
            Err(_) => {
                return RunStats {
                    errors: 1,
                    ..RunStats::default()
                }
            }
        }
    }
    let mut runs = Vec::with_capacity(clients);
    for task in tasks {
        runs.push(task.await.unwrap_or_default());
    }
    let mut stats = RunStats::merge(runs);
    stats.elapsed = started.elapsed();
    stats
}

/// W1: each client acquires and releases its own resource as fast as it can. One operation is
/// one full cycle; the latency recorded is the acquire's.
pub async fn uncontended<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
) -> RunStats {
    cycles(system, clients, duration, tag, Timed::Acquire).await
}

/// Which part of a W1 cycle a run times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    /// The acquire alone (W1's tables).
    Acquire,
    /// The acquire and the release (W8's cycles beside the holds kept alive).
    Cycle,
}

/// W1's cycles: each client acquires and releases its own resource as fast as it can; one
/// operation is one full cycle, and `timed` says what each latency recorded covers.
pub async fn cycles<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
    timed: Timed,
) -> RunStats {
    let tag = tag.to_owned();
    run_clients(
        system,
        clients,
        duration,
        move |client, mut connection, deadline| {
            let resource = format!("{tag}-{client}");
            async move {
                let mut stats = RunStats::default();
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    let granted = connection.acquire(&resource).await;
                    if timed == Timed::Acquire {
                        stats.latencies_us.push(micros(sent));
                    }
                    match granted {
                        Ok(true) => match connection.release(&resource).await {
                            Ok(true) => stats.operations += 1,
                            _ => stats.errors += 1,
                        },
                        _ => stats.errors += 1,
                    }
                    if timed == Timed::Cycle {
                        stats.latencies_us.push(micros(sent));
                    }
                }
                stats
            }
        },
    )
    .await
}

/// W2: every client competes for one resource and releases at once when granted. One operation
/// is one grant; grants per client measure fairness.
pub async fn contended<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
) -> RunStats {
    let resource = format!("{tag}-hot");
    run_clients(
        system,
        clients,
        duration,
        move |_, mut connection, deadline| {
            let resource = resource.clone();
            async move {
                let mut stats = RunStats::default();
                let mut grants = 0;
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    match connection.acquire(&resource).await {
                        Ok(true) => {
                            stats.latencies_us.push(micros(sent));
                            match connection.release(&resource).await {
                                Ok(true) => {
                                    grants += 1;
                                    stats.operations += 1;
                                }
                                _ => stats.errors += 1,
                            }
                        }
                        Ok(false) => stats.latencies_us.push(micros(sent)),
                        Err(_) => stats.errors += 1,
                    }
                }
                stats.per_client.push(grants);
                stats
            }
        },
    )
    .await
}

/// How many semaphores W6 spreads its clients over, and their limit.
pub const W6_SEMAPHORES: usize = 4;
pub const W6_LIMIT: u32 = 8;

/// W6: the clients share [`W6_SEMAPHORES`] semaphores of limit [`W6_LIMIT`] (client `c` uses
/// semaphore `c % 4`), each taking one permit and giving it back at once when granted. One
/// operation is one grant (and its release); the latency recorded is every acquire's, granted or
/// not; grants per client measure fairness.
pub async fn semaphores<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
) -> RunStats {
    let tag = tag.to_owned();
    run_clients(
        system,
        clients,
        duration,
        move |client, mut connection, deadline| {
            let semaphore = format!("{tag}-s{}", client % W6_SEMAPHORES);
            async move {
                let mut stats = RunStats::default();
                let mut grants = 0;
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    let granted = connection.acquire_permit(&semaphore, W6_LIMIT).await;
                    stats.latencies_us.push(micros(sent));
                    match granted {
                        Ok(true) => match connection.release_permit(&semaphore).await {
                            Ok(true) => {
                                grants += 1;
                                stats.operations += 1;
                            }
                            _ => stats.errors += 1,
                        },
                        Ok(false) => {}
                        Err(_) => stats.errors += 1,
                    }
                }
                stats.per_client.push(grants);
                stats
            }
        },
    )
    .await
}

/// W4: status reads of held resources (each client its own).
pub async fn reads<S: LockSystem>(
    system: &S,
    clients: usize,
    duration: Duration,
    tag: &str,
) -> RunStats {
    let tag = tag.to_owned();
    run_clients(
        system,
        clients,
        duration,
        move |client, mut connection, deadline| {
            let resource = format!("{tag}-{client}");
            async move {
                let mut stats = RunStats::default();
                if !matches!(connection.acquire(&resource).await, Ok(true)) {
                    stats.errors += 1;
                    return stats;
                }
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    match connection.status(&resource).await {
                        Ok(true) => {
                            stats.latencies_us.push(micros(sent));
                            stats.operations += 1;
                        }
                        _ => stats.errors += 1,
                    }
                }
                let _ = connection.release(&resource).await;
                stats
            }
        },
    )
    .await
}
