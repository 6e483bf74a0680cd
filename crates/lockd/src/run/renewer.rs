//! The renewal thread of `lockd run`: renews the lease (or keeps the session alive) every ttl/3,
//! sooner after a failure, and reports each attempt, stamped with the instant its request was
//! sent, to the supervisor.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use lock_client::{ClientError, LockClient};
use tokio::sync::mpsc::UnboundedReceiver;

use super::kept::Kept;
use super::target;
use super::timing::LeaseTiming;

/// What one renewal attempt found.
#[derive(Debug)]
pub enum Renewal {
    /// The lease runs at least ttl from `sent_at`.
    Renewed { sent_at: Instant },
    /// The server says the lock (the session) is no longer ours (404: expired or released, the
    /// session ended; 403: another owner has it), for this reason. The thread stops after
    /// reporting it.
    Lost { why: &'static str },
    /// No usable answer; the lease still runs out at its time. Another attempt follows.
    Failed(ClientError),
}

/// A running renewal thread; it stops when this is dropped (after its request in flight, if
/// any, which then cannot outlive the renew timeout).
pub struct Renewer {
    _stop: mpsc::Sender<()>,
    _thread: JoinHandle<()>,
}

impl Renewer {
    /// Starts renewing `kept`; the first renewal is due `renew_every` from now. Every attempt
    /// is reported on the receiver returned.
    pub fn start(
        client: LockClient,
        kept: Kept,
        ttl_seconds: u32,
        timing: LeaseTiming,
    ) -> std::io::Result<(Self, UnboundedReceiver<Renewal>)> {
        let (reports, received) = tokio::sync::mpsc::unbounded_channel();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("lockd-run-renew".to_owned())
            .spawn(move || {
                let mut pause = timing.renew_every;
                // Err(Timeout) is the pause ending; a message or a dropped sender means stop.
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(pause) {
                    let sent_at = Instant::now();
                    let result = kept.renew(&client, ttl_seconds, timing.renew_timeout);
                    let (report, next) = match result {
                        Ok(target::Renewal::Renewed) => {
                            (Renewal::Renewed { sent_at }, Some(timing.renew_every))
                        }
                        Ok(target::Renewal::Lost { forbidden }) => (
                            Renewal::Lost {
                                why: kept.lost_because(forbidden),
                            },
                            None,
                        ),
                        Err(error) => (Renewal::Failed(error), Some(timing.retry_every)),
                    };
                    if reports.send(report).is_err() {
                        return;
                    }
                    match next {
                        Some(next) => pause = next,
                        None => return,
                    }
                }
            })?;
        let renewer = Self {
            _stop: stop,
            _thread: thread,
        };
        Ok((renewer, received))
    }
}
