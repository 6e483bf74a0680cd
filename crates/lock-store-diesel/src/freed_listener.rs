//! PostgreSQL: hints that a lock may have been freed, from `LISTEN lockd_freed`. Every lockd on
//! the database sends `tenant` LF `resource` on that channel after each release or renew it
//! makes (`freed_notifier`).
//!
//! The listening connection is one dedicated tokio-postgres connection (diesel's connections
//! are blocking and cannot wait for a notification without holding a thread). It is not a pooled
//! connection, so waiting acquires never take one from the pool. When it breaks, it is opened
//! again with a growing delay, and a [`Freed::Unknown`] tells the subscriber that hints may have
//! been lost meanwhile. A connection can also die silently (a black-holed TCP connection sends
//! no FIN and no RST): a heartbeat on it finds that out, and it is then replaced the same way.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::poll_fn;
use lock_domain::{Freed, FreedLocks, RepositoryError, ResourceName, Tenant};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::{AsyncMessage, Client};

use crate::hint_connection::{self, ConnectError, HintConnection};

/// The channel `freed_notifier` notifies.
const CHANNEL: &str = "lockd_freed";

/// Hints not yet taken by the subscriber; when that many wait, the next hint becomes an `Unknown`.
const BACKLOG: usize = 4_096;

/// The longest pause between two attempts to open the listening connection again.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(2);

// A listening connection only reads, so a silently dead one (a black-holed TCP connection: no
// FIN, no RST; TCP keepalive would take hours) looks exactly like a quiet one. A heartbeat
// every 2 s that must be answered within 2 s finds it within about 4 s, so hints are missing
// for seconds instead of for good (waiters meanwhile fall back to their 5 s safety look); it
// costs one `SELECT 1` every 2 s on the connection that is open anyway (no pooled connection).
// A healthy server answers in well under a millisecond, so 2 s leaves room for a busy one, and
// a false alarm only costs a reconnect and one `Freed::Unknown`.
/// How long the listening connection rests between two heartbeats.
const HEARTBEAT_PERIOD: Duration = Duration::from_secs(2);
/// How long a heartbeat may take before the listening connection counts as dead.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(2);

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
/// driven by a task spawned on it. `None` (after a warning) when the URL asks for a connection
/// this one cannot be (`hint_connection`): then there are no hints, and waiters poll.
///
/// # Errors
/// [`RepositoryError::Unavailable`] when the connection or the `LISTEN` fails.
pub(crate) async fn subscribe(
    url: String,
    connect_timeout: Duration,
) -> Result<Option<PgFreedLocks>, RepositoryError> {
    let (hints_tx, hints) = mpsc::channel(BACKLOG);
    let first = match listen(&url, connect_timeout, hints_tx.clone()).await {
        Ok(first) => first,
        Err(ConnectError::Settings(why)) => {
            tracing::warn!(
                error = %why,
                "no hints of released locks from other processes: waiting acquires poll"
            );
            return Ok(None);
        }
        Err(ConnectError::Failed(why)) => return Err(RepositoryError::unavailable(why)),
    };
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
    Ok(Some(PgFreedLocks { hints, listener }))
}

/// Connects, starts forwarding notifications to `hints` and sends `LISTEN`. Returns the task
/// that forwards them; it ends when the connection does, when the connection stops answering
/// its heartbeat, or when the subscriber has gone.
async fn listen(
    url: &str,
    connect_timeout: Duration,
    hints: mpsc::Sender<Freed>,
) -> Result<tokio::task::JoinHandle<()>, ConnectError> {
    let (client, connection) = hint_connection::connect(url, connect_timeout).await?;
    let (listening_tx, listening) = oneshot::channel();
    let forwarder = tokio::spawn(serve(
        client,
        connection,
        hints,
        connect_timeout,
        listening_tx,
    ));
    match listening.await {
        Ok(Ok(())) => Ok(forwarder),
        Ok(Err(error)) => Err(ConnectError::Failed(error.to_string())),
        Err(_) => Err(ConnectError::Failed(
            "the connection closed before LISTEN took effect".to_owned(),
        )),
    }
}

/// The forwarding task of one connection: sends `LISTEN` (reporting its outcome on `listening`),
/// then forwards notifications and sends a heartbeat every [`HEARTBEAT_PERIOD`] while it reads
/// them. A connection that does not answer a heartbeat within [`HEARTBEAT_TIMEOUT`] counts as
/// dead (a black-holed TCP connection sends neither FIN nor RST, and would otherwise wait for
/// notifications forever): the task ends, which makes `subscribe` open a new one.
async fn serve(
    client: Client,
    mut connection: HintConnection,
    hints: mpsc::Sender<Freed>,
    connect_timeout: Duration,
    listening: oneshot::Sender<Result<(), RepositoryError>>,
) {
    let listen = format!("LISTEN {CHANNEL}");
    let listened = read_until(
        &mut connection,
        &hints,
        tokio::time::timeout(connect_timeout, client.batch_execute(&listen)),
    )
    .await;
    let outcome = match listened {
        Some(Ok(Ok(()))) => Ok(()),
        Some(Ok(Err(error))) => Err(RepositoryError::unavailable(error)),
        Some(Err(elapsed)) => Err(RepositoryError::unavailable(elapsed)),
        None => return,
    };
    let listens = outcome.is_ok();
    if listening.send(outcome).is_err() || !listens {
        return;
    }
    loop {
        let heartbeat = async {
            tokio::time::sleep(HEARTBEAT_PERIOD).await;
            tokio::time::timeout(HEARTBEAT_TIMEOUT, client.batch_execute("SELECT 1")).await
        };
        match read_until(&mut connection, &hints, heartbeat).await {
            Some(Ok(Ok(()))) => {}
            Some(Ok(Err(error))) => {
                tracing::warn!(%error, "the connection listening for released locks failed; reconnecting");
                return;
            }
            Some(Err(_)) => {
                tracing::warn!(
                    timeout = ?HEARTBEAT_TIMEOUT,
                    "the connection listening for released locks did not answer its heartbeat; reconnecting"
                );
                return;
            }
            None => return,
        }
    }
}

/// Reads the connection, forwarding its notifications to `hints`, until `request` (a request
/// of its client, which only progresses while the connection is read) completes. `None` when
/// the connection ends or the subscriber goes first.
async fn read_until<F: Future>(
    connection: &mut HintConnection,
    hints: &mpsc::Sender<Freed>,
    request: F,
) -> Option<F::Output> {
    tokio::pin!(request);
    loop {
        let message = tokio::select! {
            output = &mut request => return Some(output),
            message = poll_fn(|cx| connection.poll_message(cx)) => message,
            () = hints.closed() => return None,
        };
        match message {
            Some(Ok(AsyncMessage::Notification(note))) => {
                let hint = parse(note.payload()).unwrap_or(Freed::Unknown);
                forward(hints, hint).await.ok()?;
            }
            Some(Ok(_)) => {}
            Some(Err(error)) => {
                tracing::warn!(%error, "the connection listening for released locks failed");
                return None;
            }
            None => return None,
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

/// `tenant` LF `resource`, or `@` LF `tenant` LF `name` for a semaphore, as `freed_notifier`
/// sends them; `None` for anything else.
fn parse(payload: &str) -> Option<Freed> {
    if let Some(rest) = payload.strip_prefix("@\n") {
        let (tenant, name) = rest.split_once('\n')?;
        return Some(Freed::Permits {
            tenant: Tenant::parse_stored(tenant).ok()?,
            name: ResourceName::parse(name).ok()?,
        });
    }
    let (tenant, resource) = payload.split_once('\n')?;
    Some(Freed::Lock {
        tenant: Tenant::parse_stored(tenant).ok()?,
        resource: ResourceName::parse(resource).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL whose settings the hint connections cannot honour gives no subscription (the
    /// service then polls), at once and for good, rather than an error retried for ever; no
    /// server is needed to find that out.
    #[tokio::test]
    async fn settings_that_cannot_be_honoured_give_no_subscription() {
        let url = "postgres://postgres@127.0.0.1:1/x?sslmode=require&sslcrl=/etc/crl.pem";
        let subscribed = subscribe(url.to_owned(), Duration::from_secs(1)).await;
        assert!(matches!(subscribed, Ok(None)), "no subscription expected");
    }

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
        assert_eq!(
            parse("@\nacme\nexports"),
            Some(Freed::Permits {
                tenant: Tenant::parse("acme").unwrap(),
                name: ResourceName::parse("exports").unwrap(),
            })
        );
        assert_eq!(
            parse("acme/elections\nscheduler"),
            Some(Freed::Lock {
                tenant: Tenant::parse("acme").unwrap().elections(),
                resource: ResourceName::parse("scheduler").unwrap(),
            }),
            "an election's lock is hinted in its tenant's election namespace"
        );
        assert_eq!(parse("@\nexports"), None);
        assert_eq!(parse("no separator"), None);
        assert_eq!(parse("bad tenant!\nx"), None);
    }
}
