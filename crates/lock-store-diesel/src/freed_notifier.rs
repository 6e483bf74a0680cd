//! PostgreSQL: telling every listening lockd (`LISTEN lockd_freed`, see `freed_listener`) that
//! a lease ended or changed. After a release or renew has committed, the store hands
//! `tenant` LF `resource` to one background task per process, which sends what has gathered as
//! one `pg_notify` statement on a dedicated connection every few milliseconds: a transaction of
//! its own that writes no WAL, off the request's path.
//!
//! Why not NOTIFY inside the releasing transaction (a trigger, or a CTE in the release
//! statement): PostgreSQL holds its notification lock from a notifying transaction's pre-commit
//! through its WAL flush, so every notifying commit waits for the previous one's fsync. Measured
//! with pgbench (16 clients of acquire + release cycles, lockd's statements): about 3,000 cycles/s
//! without NOTIFY, about 400 with a trigger notifying each release.
//!
//! Hints are best effort: one made by a process that dies before sending it, or while the
//! connection is down, is lost, and waiters elsewhere see the release at their next look.

use std::collections::HashSet;
use std::time::Duration;

use lock_domain::{ResourceName, Tenant};
use tokio::sync::mpsc;
use tokio_postgres::NoTls;

use crate::database_url::scrub_secrets;

/// Hints waiting to be sent; beyond this they are dropped (see the module's note).
const BACKLOG: usize = 16_384;

/// The most hints sent in one statement.
const BATCH: usize = 512;

/// How long hints gather before they are sent: at most one statement per this period under
/// load, for a few milliseconds more on a hand-over between processes (bounded at 500 ms).
const GATHER: Duration = Duration::from_millis(5);

const NOTIFY: &str = "SELECT pg_notify('lockd_freed', hint) FROM unnest($1::text[]) AS hint";

/// The sending end; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct FreedNotifier {
    hints: mpsc::Sender<String>,
}

impl FreedNotifier {
    /// Starts the sending task on the current tokio runtime.
    pub(crate) fn spawn(url: String, connect_timeout: Duration) -> Self {
        let (hints, pending) = mpsc::channel(BACKLOG);
        tokio::spawn(send_hints(url, connect_timeout, pending));
        Self { hints }
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
        if let Err(error) = self.hints.try_send(hint) {
            tracing::debug!(%error, "a hint of a released lock was dropped");
        }
    }
}

async fn send_hints(url: String, connect_timeout: Duration, mut pending: mpsc::Receiver<String>) {
    let mut delay = Duration::from_millis(50);
    loop {
        let client = match connect(&url, connect_timeout).await {
            Ok(client) => {
                delay = Duration::from_millis(50);
                client
            }
            Err(error) => {
                tracing::warn!(%error, "cannot connect to send hints of released locks; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        loop {
            let Some(first) = pending.recv().await else {
                return;
            };
            tokio::time::sleep(GATHER).await;
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
                tokio::time::timeout(connect_timeout, client.execute(NOTIFY, &[&hints])).await;
            match sent {
                Ok(Ok(_)) => {}
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
    }
}

async fn connect(
    url: &str,
    connect_timeout: Duration,
) -> Result<tokio_postgres::Client, Box<dyn std::error::Error + Send + Sync>> {
    let scrubbed = |error: &dyn std::fmt::Display| scrub_secrets(url, &error.to_string());
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| scrubbed(&e))?;
    config.connect_timeout(connect_timeout);
    let (client, connection) = tokio::time::timeout(connect_timeout, config.connect(NoTls))
        .await
        .map_err(|e| scrubbed(&e))?
        .map_err(|e| scrubbed(&e))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "the connection sending hints of released locks failed");
        }
    });
    Ok(client)
}
