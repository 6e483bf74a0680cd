//! PostgreSQL: telling every listening lockd (`LISTEN lockd_freed`, see `freed_listener`) that
//! a lease ended or changed. After a release or renew has committed, the store hands
//! `tenant` LF `resource` to one background task per process, which sends it at once when it has
//! sent nothing for a few milliseconds, and otherwise what has gathered meanwhile, as one
//! `pg_notify` statement on a dedicated connection at most every few milliseconds: a
//! transaction of its own, off the request's path. Its commit writes a commit record (a
//! notification takes a transaction id); that connection commits with `synchronous_commit =
//! off`, so the hint is not held back by a WAL flush that nothing needs (the release it tells of
//! committed durably before it was queued, and a hint is best effort anyway).
//!
//! Why not NOTIFY inside the releasing transaction (a trigger, or a CTE in the release
//! statement): PostgreSQL holds its notification lock from a notifying transaction's pre-commit
//! through its WAL flush, so every notifying commit waits for the previous one's fsync. Measured
//! with pgbench (16 clients of acquire + release cycles, lockd's statements): about 3,000 cycles/s
//! without NOTIFY, about 400 with a trigger notifying each release.
//!
//! The store's own undo of a grant nobody heard of (its caller gave up while it committed) frees
//! the lease as a release does, on a writer thread with no tokio runtime: [`HintingUndos`]
//! queues its hint too, and the task sends it on the runtime the store was opened on.
//!
//! Hints are best effort: one made by a process that dies before sending it, or while the
//! connection is down, is lost, and waiters elsewhere see the release at their next look.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_domain::{ResourceName, StoreEvents, Tenant, UnheardGrant, UnheardKind};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::database_url::scrub_secrets;
use crate::hint_connection::{self, ConnectError};

/// Hints waiting to be sent; beyond this they are dropped (see the module's note).
const BACKLOG: usize = 16_384;

/// The most hints sent in one statement.
const BATCH: usize = 512;

/// The least time between the starts of two statements: under load, hints gather for this long
/// and go as one statement, so the database sees at most one per period however many releases
/// there are. A hint that comes after a quiet period goes at once, so a hand-over between
/// processes waits for no gathering.
const GATHER: Duration = Duration::from_millis(5);

/// The wait before the first attempt to reconnect, doubled after each failed attempt up to
/// [`MAX_RETRY_DELAY`] ([`Backoff`]).
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(50);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(2);

const NOTIFY: &str = "SELECT pg_notify('lockd_freed', hint) FROM unnest($1::text[]) AS hint";

/// The sending end. The task that sends starts with the first hint, so that a store that frees
/// nothing opens no connection for it.
#[derive(Debug)]
pub(crate) struct FreedNotifier {
    hints: mpsc::Sender<String>,
    /// Set once the task runs.
    started: AtomicBool,
    /// What the task needs, until it starts.
    unstarted: Mutex<Option<Unstarted>>,
}

#[derive(Debug)]
struct Unstarted {
    url: String,
    connect_timeout: Duration,
    pending: mpsc::Receiver<String>,
    /// The runtime the store was opened on (`None`: opened outside one), where a hint queued on
    /// a thread outside any runtime (a writer's) starts the task.
    runtime: Option<Handle>,
}

impl FreedNotifier {
    /// A notifier for the database at `url`; its task starts with the first hint, on the
    /// current tokio runtime if there is one now, else on the runtime of the first hint's thread.
    pub(crate) fn new(url: String, connect_timeout: Duration) -> Self {
        let (hints, pending) = mpsc::channel(BACKLOG);
        Self {
            hints,
            started: AtomicBool::new(false),
            unstarted: Mutex::new(Some(Unstarted {
                url,
                connect_timeout,
                pending,
                runtime: Handle::try_current().ok(),
            })),
        }
    }

    /// Queues the hint that the lease on `resource` of `tenant` ended or changed; never waits.
    pub(crate) fn freed(&self, tenant: &Tenant, resource: &ResourceName) {
        self.send(format!("{}\n{}", tenant.as_str(), resource.as_str()));
    }

    /// Queues the hint that a grant of semaphore `name` of `tenant` ended or changed, as
    /// `@` LF tenant LF name (`@` is no tenant: a listener that predates semaphores reads it as
    /// "anything may be free"); never waits.
    pub(crate) fn freed_permits(&self, tenant: &Tenant, name: &ResourceName) {
        self.send(format!("@\n{}\n{}", tenant.as_str(), name.as_str()));
    }

    fn send(&self, hint: String) {
        if !self.started.load(Ordering::Acquire) {
            self.start();
        }
        if let Err(error) = self.hints.try_send(hint) {
            tracing::debug!(%error, "a hint of a released lock was dropped");
        }
    }

    /// Starts the sending task, unless it runs already or there is no runtime to run it on (the
    /// hints then wait for the next hint made on one).
    fn start(&self) {
        let mut unstarted = self
            .unstarted
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(task) = unstarted.take() else {
            return;
        };
        match task.runtime.clone().or_else(|| Handle::try_current().ok()) {
            Some(runtime) => {
                runtime.spawn(send_hints(task.url, task.connect_timeout, task.pending));
                self.started.store(true, Ordering::Release);
            }
            None => *unstarted = Some(task),
        }
    }
}

/// The store's events with, for each grant nobody heard of that the store undid, the hint that
/// its lease ended: the undo frees it as a release would, and waiters in every process (this
/// one's too, through its `LISTEN`) must look again rather than wait for the lease's end.
pub(crate) struct HintingUndos {
    pub(crate) events: Arc<dyn StoreEvents>,
    pub(crate) notifier: Arc<FreedNotifier>,
}

impl StoreEvents for HintingUndos {
    fn unheard_grant(&self, grant: &UnheardGrant) {
        if grant.undone {
            match grant.kind {
                UnheardKind::Permits => self.notifier.freed_permits(&grant.tenant, &grant.name),
                UnheardKind::Lock | UnheardKind::LockInMode(_) => {
                    self.notifier.freed(&grant.tenant, &grant.name)
                }
            }
        }
        self.events.unheard_grant(grant);
    }

    fn sessions_expired(&self, count: usize) {
        self.events.sessions_expired(count);
    }
}

async fn send_hints(url: String, connect_timeout: Duration, mut pending: mpsc::Receiver<String>) {
    let mut backoff = Backoff::default();
    loop {
        let client = match connect(&url, connect_timeout).await {
            Ok(client) => client,
            Err(ConnectError::Settings(error)) => {
                // The URL will not change: no hints are sent (waiters in other processes poll).
                tracing::warn!(%error, "cannot send hints of released locks to other processes");
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot connect to send hints of released locks; retrying");
                tokio::time::sleep(backoff.failed()).await;
                continue;
            }
        };
        // Prepared once per connection: a text sent as is would be parsed, planned and
        // described again each time, one more round trip before every hint.
        let prepared = tokio::time::timeout(
            connect_timeout,
            client.prepare_typed(NOTIFY, &[tokio_postgres::types::Type::TEXT_ARRAY]),
        )
        .await;
        let notify = match prepared {
            Ok(Ok(statement)) => statement,
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not prepare hints of released locks; reconnecting");
                tokio::time::sleep(backoff.failed()).await;
                continue;
            }
            Err(_) => {
                tracing::warn!("preparing hints of released locks timed out; reconnecting");
                tokio::time::sleep(backoff.failed()).await;
                continue;
            }
        };
        // When the last statement was sent (none yet: the first hint goes at once).
        let mut last_sent: Option<tokio::time::Instant> = None;
        loop {
            let Some(first) = pending.recv().await else {
                return;
            };
            if let Some(start) = gathering_until(last_sent, tokio::time::Instant::now()) {
                tokio::time::sleep_until(start).await;
            }
            last_sent = Some(tokio::time::Instant::now());
            let mut batch = HashSet::from([first]);
            while batch.len() < BATCH {
                match pending.try_recv() {
                    Ok(hint) => {
                        batch.insert(hint);
                    }
                    Err(_) => break,
                }
            }
            let hints: Vec<String> = batch.into_iter().collect();
            let sent =
                tokio::time::timeout(connect_timeout, client.execute(&notify, &[&hints])).await;
            match sent {
                Ok(Ok(_)) => backoff.sent(),
                Ok(Err(error)) => {
                    tracing::warn!(%error, "could not send hints of released locks; reconnecting");
                    break;
                }
                Err(_) => {
                    tracing::warn!("sending hints of released locks timed out; reconnecting");
                    break;
                }
            }
        }
        // A database that takes the connection and the statement but refuses every hint (a
        // full notification queue) is retried ever more slowly too, not once per hint.
        tokio::time::sleep(backoff.failed()).await;
    }
}

/// The waits before the notifier's attempts to connect again: [`FIRST_RETRY_DELAY`] after a
/// hint went out, then doubled after each failure (to connect, to prepare, or to send on a
/// connection made since) up to [`MAX_RETRY_DELAY`].
#[derive(Debug)]
struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            next: FIRST_RETRY_DELAY,
        }
    }
}

impl Backoff {
    /// An attempt failed: how long to wait before the next one.
    fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(MAX_RETRY_DELAY);
        wait
    }

    /// A hint went out: the connection works, and the next failure waits the least again.
    fn sent(&mut self) {
        self.next = FIRST_RETRY_DELAY;
    }
}

/// Until when hints that came at `now` gather before their statement starts, the last one
/// having started at `last_sent`: `None` (at once) after a quiet [`GATHER`], else a `GATHER`
/// after the last one. At once means no timer at all: a tokio timer that is due already still
/// waits for the timer's next tick (deadlines are rounded up to the next millisecond), which
/// cost every hand-over between processes about 1 ms.
fn gathering_until(
    last_sent: Option<tokio::time::Instant>,
    now: tokio::time::Instant,
) -> Option<tokio::time::Instant> {
    last_sent
        .map(|sent_at| sent_at + GATHER)
        .filter(|start| *start > now)
}

async fn connect(
    url: &str,
    connect_timeout: Duration,
) -> Result<tokio_postgres::Client, ConnectError> {
    let (client, connection) = hint_connection::connect(url, connect_timeout).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "the connection sending hints of released locks failed");
        }
    });
    let failed = |error: &dyn std::fmt::Display| {
        ConnectError::Failed(scrub_secrets(url, &error.to_string()))
    };
    tokio::time::timeout(
        connect_timeout,
        client.batch_execute("SET synchronous_commit = off"),
    )
    .await
    .map_err(|e| failed(&e))?
    .map_err(|e| failed(&e))?;
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::{gathering_until, Backoff, FIRST_RETRY_DELAY, GATHER, MAX_RETRY_DELAY};
    use std::time::Duration;
    use tokio::time::Instant;

    #[test]
    fn a_hint_after_a_quiet_period_goes_at_once_and_under_load_one_statement_per_period() {
        let now = Instant::now();
        assert_eq!(gathering_until(None, now), None, "the first hint");
        assert_eq!(
            gathering_until(Some(now - GATHER), now),
            None,
            "a hint a whole period after the last statement"
        );
        assert_eq!(gathering_until(Some(now - GATHER * 3), now), None);
        let last = now - Duration::from_millis(1);
        assert_eq!(
            gathering_until(Some(last), now),
            Some(last + GATHER),
            "a hint 1 ms after the last statement waits for the rest of the period"
        );
    }

    #[test]
    fn each_failure_waits_twice_as_long_up_to_the_most_and_a_sent_hint_starts_again() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..8)
            .map(|_| backoff.failed().as_millis() as u64)
            .collect();
        assert_eq!(waits, [50, 100, 200, 400, 800, 1_600, 2_000, 2_000]);
        assert_eq!(FIRST_RETRY_DELAY, Duration::from_millis(50));
        assert_eq!(MAX_RETRY_DELAY, Duration::from_secs(2));
        backoff.sent();
        assert_eq!(
            backoff.failed(),
            FIRST_RETRY_DELAY,
            "the first failure after a sent hint"
        );
        assert_eq!(backoff.failed(), FIRST_RETRY_DELAY * 2);
    }
}
