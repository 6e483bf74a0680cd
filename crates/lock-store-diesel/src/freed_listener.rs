//! PostgreSQL: hints that a lock may have been freed, from `LISTEN lockd_freed`. Every lockd on
//! the database sends `tenant` LF `resource` on that channel after each release or renew it
//! makes (`freed_notifier`).
//!
//! The listening connection is one dedicated tokio-postgres connection (diesel's connections
//! are blocking and cannot wait for a notification without holding a thread). It is not a pooled
//! connection, so waiting acquires never take one from the pool. When it breaks, it is opened
//! again with a growing delay, and a [`Freed::Unknown`] tells the subscriber that hints may have
//! been lost meanwhile.

use std::time::Duration;

use async_trait::async_trait;
use futures::future::poll_fn;
use lock_domain::{Freed, FreedLocks, RepositoryError, ResourceName, Tenant};
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::database_url::scrub_secrets;

/// The channel `freed_notifier` notifies.
const CHANNEL: &str = "lockd_freed";

/// Hints not yet taken by the subscriber; when that many wait, the next hint becomes an `Unknown`.
const BACKLOG: usize = 4_096;

/// The longest pause between two attempts to open the listening connection again.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(2);

/// A live `LISTEN lockd_freed` subscription. Dropping it closes the connection.
pub(crate) struct PgFreedLocks {
    hints: mpsc::Receiver<Freed>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for PgFreedLocks {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

#[async_trait]
impl FreedLocks for PgFreedLocks {
    async fn next(&mut self) -> Option<Freed> {
        self.hints.recv().await
    }
}

/// Opens the listening connection and returns once `LISTEN` is in effect, so that every release
/// committed after this returns is heard. Must run inside a tokio runtime: the connection is
/// driven by a task spawned on it.
///
/// # Errors
/// [`RepositoryError::Unavailable`] when the connection or the `LISTEN` fails.
pub(crate) async fn subscribe(
    url: String,
    connect_timeout: Duration,
) -> Result<PgFreedLocks, RepositoryError> {
    let (hints_tx, hints) = mpsc::channel(BACKLOG);
    let first = listen(&url, connect_timeout, hints_tx.clone()).await?;
    let listener = tokio::spawn(async move {
        let mut connection = first;
        loop {
            // The connection ended: every hint sent while it was down is lost.
            let _ = connection.await;
            let mut delay = Duration::from_millis(50);
            connection = loop {
                if hints_tx.is_closed() {
                    return;
                }
                tokio::time::sleep(delay).await;
                match listen(&url, connect_timeout, hints_tx.clone()).await {
                    Ok(connection) => break connection,
                    Err(error) => {
                        tracing::warn!(%error, "cannot listen for released locks; retrying");
                        delay = (delay * 2).min(MAX_RECONNECT_DELAY);
                    }
                }
            };
            if hints_tx.send(Freed::Unknown).await.is_err() {
                return;
            }
        }
    });
    Ok(PgFreedLocks { hints, listener })
}

/// Connects, starts forwarding notifications to `hints` and sends `LISTEN`. Returns the task
/// that forwards them; it ends when the connection does.
async fn listen(
    url: &str,
    connect_timeout: Duration,
    hints: mpsc::Sender<Freed>,
) -> Result<tokio::task::JoinHandle<()>, RepositoryError> {
    // Messages are scrubbed of the URL's passwords before they can reach a log.
    let scrubbed = |error: &dyn std::fmt::Display| scrub_secrets(url, &error.to_string());
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| RepositoryError::internal(scrubbed(&e)))?;
    config.connect_timeout(connect_timeout);
    let (client, mut connection) = tokio::time::timeout(connect_timeout, config.connect(NoTls))
        .await
        .map_err(|e| RepositoryError::unavailable(scrubbed(&e)))?
        .map_err(|e| RepositoryError::unavailable(scrubbed(&e)))?;
    let (listening_tx, listening) = tokio::sync::oneshot::channel::<tokio_postgres::Client>();
    let forwarder = tokio::spawn(async move {
        // The client must live as long as the connection is read, or the connection closes.
        let mut client = None;
        let mut listening = Some(listening);
        loop {
            let message = tokio::select! {
                message = poll_fn(|cx| connection.poll_message(cx)) => message,
                kept = async { listening.as_mut()?.await.ok() }, if listening.is_some() => {
                    listening = None;
                    client = kept;
                    continue;
                }
            };
            match message {
                Some(Ok(AsyncMessage::Notification(note))) => {
                    let hint = parse(note.payload()).unwrap_or(Freed::Unknown);
                    if forward(&hints, hint).await.is_err() {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::warn!(%error, "the connection listening for released locks failed");
                    break;
                }
                None => break,
            }
        }
        drop(client);
    });
    let listened = tokio::time::timeout(
        connect_timeout,
        client.batch_execute(&format!("LISTEN {CHANNEL}")),
    )
    .await;
    match listened {
        Ok(Ok(())) => {
            let _ = listening_tx.send(client);
            Ok(forwarder)
        }
        Ok(Err(error)) => {
            forwarder.abort();
            Err(RepositoryError::unavailable(error))
        }
        Err(elapsed) => {
            forwarder.abort();
            Err(RepositoryError::unavailable(elapsed))
        }
    }
}

/// Sends a hint; when the subscriber lags by a whole backlog, it gets an `Unknown` instead (it
/// will look at every lock it waits for), so a slow subscriber never stalls the connection.
async fn forward(hints: &mpsc::Sender<Freed>, hint: Freed) -> Result<(), ()> {
    match hints.try_send(hint) {
        Ok(()) => Ok(()),
        Err(mpsc::error::TrySendError::Closed(_)) => Err(()),
        Err(mpsc::error::TrySendError::Full(_)) => hints.send(Freed::Unknown).await.map_err(|_| ()),
    }
}

/// `tenant` LF `resource`, as `freed_notifier` sends it; `None` for anything else.
fn parse(payload: &str) -> Option<Freed> {
    let (tenant, resource) = payload.split_once('\n')?;
    Some(Freed::Lock {
        tenant: Tenant::parse(tenant).ok()?,
        resource: ResourceName::parse(resource).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_tenant_line_feed_resource() {
        assert_eq!(
            parse("acme\norders:7\nwith a line feed"),
            None,
            "a resource cannot hold a line feed"
        );
        assert_eq!(
            parse("acme\norders:7"),
            Some(Freed::Lock {
                tenant: Tenant::parse("acme").unwrap(),
                resource: ResourceName::parse("orders:7").unwrap(),
            })
        );
        assert_eq!(parse("no separator"), None);
        assert_eq!(parse("bad tenant!\nx"), None);
    }
}
