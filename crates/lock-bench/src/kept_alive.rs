//! W8: many holds kept alive, by one session per client or lease by lease, with W1's cycles
//! beside them.
//!
//! Each of the run's clients (64 by default) holds [`W8_HOLDS_PER_CLIENT`] locks (6,400 holds)
//! and keeps them alive every [`W8_TTL_SECONDS`] / 3, over one connection of its own:
//! - **by a session**: the client opens one session and takes its locks under it; a round is one
//!   `POST /sessions/{id}/keepalive`;
//! - **one by one**: the client takes plain leases; a round is one `POST /locks/{r}/renew` per
//!   lease, one after another.
//!
//! The clients' rounds are spread evenly over the period (client `c` starts `c / clients` of a
//! period after it has taken its holds), as independent programs' would be. Taking 6,400 holds
//! may take longer than 3 s on a slow machine: a session is kept alive while its locks are taken,
//! and plain leases are taken with a 30 s TTL that their first renew brings to 3 s. The measured
//! windows start once every client has made its first round and the write counter has settled
//! ([`WriteCounter::settling`]: 11 s on PostgreSQL). Then two windows of the run's duration:
//! 1. **the holds alone**: lockd's database writes per second ([`crate::write_rate`]) and the CPU
//!    of lockd and of the database per round;
//! 2. **with cycles beside**: [`W8_CYCLERS`] more clients run W1's acquire/release cycles on
//!    resources of their own; the latency of their cycles (acquire and release), and of each
//!    keepalive or renew and each round of the holders.
//!
//! A keepalive or renew answered anything but 200 counts as a failure (a 404 is a hold lost).

use std::io;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio::time::MissedTickBehavior;

use crate::cpu::{self, CpuSample};
use crate::http::HttpConnection;
use crate::lockd::{session, LockdSystem};
use crate::stats::RunStats;
use crate::table::Backend;
use crate::workload::{self, micros, Timed};
use crate::write_rate::{self, WriteCounter, WriteUnit};

/// Locks each client holds.
pub const W8_HOLDS_PER_CLIENT: usize = 100;

/// The TTL the holds are kept alive with: a round every second, so that a 10 s window sees ten.
pub const W8_TTL_SECONDS: u64 = 3;

/// The clients running W1's cycles beside the holds, in the second window.
pub const W8_CYCLERS: usize = 8;

/// The TTL plain leases are taken with, before their first renew brings it to
/// [`W8_TTL_SECONDS`].
const TAKEN_TTL_SECONDS: u64 = 30;

/// How often the write counter is read.
const READING_EVERY: Duration = Duration::from_millis(250);

/// How a client keeps its holds alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeping {
    /// One session per client, one keepalive a round.
    Session,
    /// Plain leases, one renew per lease a round.
    OneByOne,
}

impl Keeping {
    fn slug(self) -> &'static str {
        match self {
            Keeping::Session => "s",
            Keeping::OneByOne => "l",
        }
    }
}

/// The lockd W8 runs against.
pub struct Target<'a> {
    pub addr: &'a str,
    pub pid: u32,
    pub backend: Backend,
    /// Its database (PostgreSQL: where the write counter reads the statistics).
    pub database_url: &'a str,
}

/// The latencies of one window, in microseconds.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    /// Each keepalive (by a session) or renew (one by one).
    pub requests_us: Vec<u32>,
    /// Each round: one client's holds all kept alive once.
    pub rounds_us: Vec<u32>,
}

impl Latencies {
    fn extend(&mut self, other: Latencies) {
        self.requests_us.extend(other.requests_us);
        self.rounds_us.extend(other.rounds_us);
    }
}

/// What one run of W8 measured, for one way of keeping the holds.
#[derive(Debug, Clone)]
pub struct KeptRun {
    pub unit: WriteUnit,
    /// The holds alone: what lockd wrote to its database a second.
    pub writes_per_second: f64,
    /// The holds alone: lockd's and the database's (its backends serving lockd) CPU
    /// microseconds per round.
    pub cpu_per_round_us: (f64, f64),
    /// The holds alone.
    pub alone: Latencies,
    /// With the cycles beside.
    pub beside: Latencies,
    /// The cycles beside the holds (latency: acquire and release).
    pub cycles: RunStats,
    /// Holds not taken, keepalives or renews not answered 200, holds not let go.
    pub failures: u64,
}

/// Where a run is; the holders record their rounds by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    /// Holds being taken, first rounds: not measured.
    Starting,
    Alone,
    Beside,
    Stopped,
}

/// One run of W8 against `target`: `holders` clients keeping their holds alive as `keeping`
/// says, each window lasting `window`; `tag` names the run's owners and sessions.
///
/// The locks are the same in every run (`w8-{client}-{i}`, and `w8-cycles-{client}` for the
/// cycles): each run takes again the rows the run before released. New names would leave
/// 6,400 ended rows a run, which lockd's sweeper deletes a minute or more later, in the window
/// of whichever run is then measured.
///
/// # Errors
/// When the write counter cannot be opened (PostgreSQL's statistics, through a connection to
/// lockd's database).
pub async fn run(
    target: &Target<'_>,
    keeping: Keeping,
    holders: usize,
    window: Duration,
    tag: &str,
) -> io::Result<KeptRun> {
    let counter = WriteCounter::connect(target.backend, target.pid, target.database_url).await?;
    let database = cpu::database_name(target.database_url);
    let period = Duration::from_millis(W8_TTL_SECONDS * 1000 / 3);
    let (phase, watching) = watch::channel(Window::Starting);
    let (ready, mut readiness) = mpsc::unbounded_channel();
    let tasks: Vec<_> = (0..holders)
        .map(|client| {
            let holder = Holder {
                addr: target.addr.to_owned(),
                client,
                keeping,
                owner: format!("{tag}-{}-{client}", keeping.slug()),
                offset: period.mul_f64(client as f64 / holders as f64),
                period,
            };
            tokio::spawn(holder.hold(watching.clone(), ready.clone()))
        })
        .collect();
    drop(ready);
    // Every client has made its first round (or failed to take its holds); then the counter
    // shows the writes of the holds alone.
    for _ in 0..holders {
        if readiness.recv().await.is_none() {
            break;
        }
    }
    tokio::time::sleep(counter.settling()).await;

    let _ = phase.send(Window::Alone);
    let cpu_before = CpuSample::take_serving(target.pid, database);
    let started = Instant::now();
    let mut readings = Vec::new();
    let mut every = tokio::time::interval(READING_EVERY);
    while started.elapsed() < window {
        every.tick().await;
        // A reading that fails is left out: the slope needs no particular instant.
        if let Ok(count) = counter.read().await {
            readings.push((started.elapsed().as_secs_f64(), count));
        }
    }
    let cpu_after = CpuSample::take_serving(target.pid, database);

    let _ = phase.send(Window::Beside);
    let cycling = LockdSystem {
        addr: target.addr.to_owned(),
    };
    let cycles = workload::cycles(&cycling, W8_CYCLERS, window, "w8-cycles", Timed::Cycle).await;

    let _ = phase.send(Window::Stopped);
    let mut kept = Kept::default();
    for task in tasks {
        match task.await {
            Ok(one) => kept.merge(one),
            Err(_) => kept.failures += 1,
        }
    }
    Ok(KeptRun {
        unit: counter.unit(),
        writes_per_second: write_rate::rate(&readings).unwrap_or(f64::NAN),
        cpu_per_round_us: {
            let (server, database, _) = cpu_after.per_operation_us(&cpu_before, kept.rounds_alone);
            (server, database)
        },
        alone: kept.alone,
        beside: kept.beside,
        cycles,
        failures: kept.failures,
    })
}

/// What the holders measured.
#[derive(Debug, Default)]
struct Kept {
    alone: Latencies,
    beside: Latencies,
    rounds_alone: u64,
    failures: u64,
}

impl Kept {
    fn merge(&mut self, other: Kept) {
        self.alone.extend(other.alone);
        self.beside.extend(other.beside);
        self.rounds_alone += other.rounds_alone;
        self.failures += other.failures;
    }
}

/// One client of W8: its holds, and when it keeps them alive.
struct Holder {
    addr: String,
    client: usize,
    keeping: Keeping,
    /// Its owner (one by one) or its session's label.
    owner: String,
    /// When its rounds fall in the period, after its first hold was taken.
    offset: Duration,
    period: Duration,
}

/// A holder's connection and what it holds.
struct Holds {
    conn: HttpConnection,
    resources: Vec<String>,
    session: Option<String>,
    /// When the holds were last kept alive (a session) or the first one taken (plain leases).
    since: Instant,
}

impl Holder {
    /// Takes the holds, keeps them alive until the run stops (saying when its first round is
    /// made), then lets them go.
    async fn hold(
        self,
        mut phase: watch::Receiver<Window>,
        ready: mpsc::UnboundedSender<()>,
    ) -> Kept {
        let mut kept = Kept::default();
        let mut holds = match self.take().await {
            Ok(holds) => holds,
            Err(e) => {
                eprintln!("W8 client {} could not take its holds: {e}", self.client);
                kept.failures += 1;
                let _ = ready.send(());
                return kept;
            }
        };
        let mut ticks = tokio::time::interval_at((holds.since + self.offset).into(), self.period);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut first = true;
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                changed = phase.changed() => {
                    if changed.is_err() || *phase.borrow() == Window::Stopped {
                        break;
                    }
                    continue;
                }
            }
            let window = *phase.borrow();
            if window == Window::Stopped {
                break;
            }
            let (latencies, failures) = self.round(&mut holds).await;
            kept.failures += failures;
            match window {
                Window::Alone => {
                    kept.rounds_alone += 1;
                    kept.alone.extend(latencies);
                }
                Window::Beside => kept.beside.extend(latencies),
                Window::Starting | Window::Stopped => {}
            }
            if first {
                first = false;
                let _ = ready.send(());
            }
        }
        kept.failures += self.let_go(&mut holds).await;
        kept
    }

    /// Opens the session with [`W8_TTL_SECONDS`] and takes every lock under it, keeping it
    /// alive every period meanwhile; or takes every lock as a plain lease of
    /// [`TAKEN_TTL_SECONDS`].
    async fn take(&self) -> io::Result<Holds> {
        let mut conn = HttpConnection::connect(&self.addr).await?;
        let mut since = Instant::now();
        let session = match self.keeping {
            Keeping::Session => Some(session::open(&mut conn, &self.owner, W8_TTL_SECONDS).await?),
            Keeping::OneByOne => None,
        };
        let body = match &session {
            Some(id) => format!(r#"{{"session":"{id}"}}"#),
            None => format!(
                r#"{{"owner":"{}","ttl_seconds":{TAKEN_TTL_SECONDS}}}"#,
                self.owner
            ),
        };
        let resources: Vec<String> = (0..W8_HOLDS_PER_CLIENT)
            .map(|i| format!("w8-{}-{i}", self.client))
            .collect();
        for resource in &resources {
            if let Some(id) = session
                .as_deref()
                .filter(|_| since.elapsed() >= self.period)
            {
                if !session::keep_alive(&mut conn, id).await? {
                    return Err(io::Error::other(
                        "the session ended while its locks were taken",
                    ));
                }
                since = Instant::now();
            }
            let answer = conn
                .request("POST", &format!("/locks/{resource}"), Some(body.as_bytes()))
                .await?;
            if answer.status != 200 || !answer.body.starts_with(br#"{"acquired":true"#) {
                return Err(io::Error::other(format!(
                    "acquiring {resource} answered {}",
                    answer.status
                )));
            }
        }
        Ok(Holds {
            conn,
            resources,
            session,
            since,
        })
    }

    /// Keeps every hold alive once; the latencies, and how many requests failed.
    async fn round(&self, holds: &mut Holds) -> (Latencies, u64) {
        let mut latencies = Latencies::default();
        let mut failures = 0;
        let started = Instant::now();
        match &holds.session {
            Some(id) => {
                if !matches!(session::keep_alive(&mut holds.conn, id).await, Ok(true)) {
                    failures += 1;
                }
                latencies.requests_us.push(micros(started));
            }
            None => {
                let body = format!(
                    r#"{{"owner":"{}","ttl_seconds":{W8_TTL_SECONDS}}}"#,
                    self.owner
                );
                for resource in &holds.resources {
                    let sent = Instant::now();
                    let renewed = holds
                        .conn
                        .request(
                            "POST",
                            &format!("/locks/{resource}/renew"),
                            Some(body.as_bytes()),
                        )
                        .await;
                    latencies.requests_us.push(micros(sent));
                    if !matches!(renewed, Ok(answer) if answer.status == 200) {
                        failures += 1;
                    }
                }
            }
        }
        latencies.rounds_us.push(micros(started));
        (latencies, failures)
    }

    /// Ends the session, or releases each lease; how many requests failed.
    async fn let_go(&self, holds: &mut Holds) -> u64 {
        match &holds.session {
            Some(id) => u64::from(!matches!(
                session::close(&mut holds.conn, id).await,
                Ok(true)
            )),
            None => {
                let mut failures = 0;
                for resource in &holds.resources {
                    let path = format!("/locks/{resource}?owner={}", self.owner);
                    if !matches!(holds.conn.request("DELETE", &path, None).await, Ok(answer) if answer.status == 204)
                    {
                        failures += 1;
                    }
                }
                failures
            }
        }
    }
}
