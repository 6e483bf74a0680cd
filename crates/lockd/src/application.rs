//! The composition root: opens the store, builds the lock service over it (reporting to the
//! metrics and the audit log), puts the HTTP API in front, and runs the server.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::dev::Server;
use lock_domain::{Clock, FreedHints, StoreEvents, StoreHealth, SystemClock};
use lock_http_actix::{ApiSettings, LockApi, ServerOptions};
use lock_service::{LockService, ServicePorts, StorePorts, WaiterLimits};
use lock_store_diesel::{DieselLockRepository, SqliteSynchronous, StoreConfig};
use lock_telemetry::{Metrics, MetricsAndAudit};

use crate::cli::{ServeArgs, Synchronous};
use crate::config_files::ConfigFiles;
pub use crate::startup_error::StartupError;

/// What the service and the API run over: a store's ports, its health, its hints of other
/// processes' releases (if it gives them) and the clock that decides.
pub struct StoreWiring {
    pub store: StorePorts,
    pub health: Arc<dyn StoreHealth>,
    pub hints: Option<Arc<dyn FreedHints>>,
    pub clock: Arc<dyn Clock>,
}

impl StoreWiring {
    /// Every port of one store, its health, no hints (a single process knows its own releases)
    /// and the system clock: for tests and tools over one store.
    pub fn of<S>(store: Arc<S>) -> Self
    where
        S: lock_domain::LockStore + StoreHealth + 'static,
    {
        Self {
            store: StorePorts::of(Arc::clone(&store)),
            health: store,
            hints: None,
            clock: Arc::new(SystemClock),
        }
    }
}

/// The lock service over `wiring`, reporting to `settings.metrics` and the audit log, holding at
/// most `limits` waiting acquires, and the API in front of it: the one place they are put
/// together ([`Application::build`] runs it over the opened store; tests over any store).
pub fn compose(wiring: StoreWiring, settings: ApiSettings, limits: WaiterLimits) -> LockApi {
    let StoreWiring {
        store,
        health,
        hints,
        clock,
    } = wiring;
    let service = LockService::new(
        ServicePorts {
            store,
            hints,
            clock,
            events: Arc::new(MetricsAndAudit::new(Arc::clone(&settings.metrics))),
        },
        limits,
    );
    LockApi::new(service, health, settings)
}

/// A bound, ready-to-run lockd.
pub struct Application {
    server: Server,
    addr: SocketAddr,
    sweeper: actix_web::rt::task::JoinHandle<()>,
    live_lock_counter: actix_web::rt::task::JoinHandle<()>,
    on_stop: actix_web::rt::task::JoinHandle<()>,
    on_hangup: actix_web::rt::task::JoinHandle<()>,
}

/// Rows deleted per sweep step at most: bounded, so a sweep never holds the write lock for long.
const SWEEP_BATCH: u32 = 1_000;

/// How often the live locks are counted for `/metrics`: the reported number is at most this
/// (plus one count) old. A count reads every live lock (PostgreSQL: the whole table), so not per
/// scrape.
const LIVE_LOCK_COUNT_INTERVAL: Duration = Duration::from_secs(5);

impl Application {
    /// Opens the database (retrying an unreachable one for the start-up timeout), runs the
    /// migrations and binds the listener.
    ///
    /// # Errors
    /// [`StartupError`] when the database cannot be opened or the address cannot be bound.
    pub async fn build(args: &ServeArgs) -> Result<Self, StartupError> {
        let (files, tenant_limits) = ConfigFiles::load(args)?;
        let api_keys = files.api_keys();
        if api_keys.is_none() && !args.bind.ip().is_loopback() {
            tracing::warn!(
                bind = %args.bind,
                "listening on a non-loopback address without API keys: anyone who can reach it \
                 and knows an owner string can release or renew that owner's locks \
                 (see --api-keys-file)"
            );
        }
        let metrics = Arc::new(Metrics::with_log_lines_dropped(
            crate::telemetry::log_lines_dropped(),
        ));
        // What the store does on its own (grants nobody heard of, undone) reaches the same audit
        // log as the use cases' outcomes.
        let store = open_store(args, Arc::new(MetricsAndAudit::new(Arc::clone(&metrics)))).await?;
        let sweeper = actix_web::rt::spawn(lock_store_diesel::run_sweeper(
            store.clone(),
            Duration::from_secs(args.sweep_interval_seconds),
            SWEEP_BATCH,
            args.history_retention(),
        ));
        let store = Arc::new(store);
        let live_lock_counter = actix_web::rt::spawn(lock_service::run_live_lock_counter(
            Arc::clone(&store) as _,
            Arc::new(MetricsAndAudit::new(Arc::clone(&metrics))),
            LIVE_LOCK_COUNT_INTERVAL,
        ));
        let settings = ApiSettings {
            max_ttl_seconds: args.max_ttl_seconds,
            body_timeout: Duration::from_secs(args.body_timeout_seconds),
            api_keys,
            metrics,
            max_wait_seconds: args.max_wait_seconds,
            default_lock_delay: lock_domain::LockDelay::parse(i64::from(
                args.default_lock_delay_seconds,
            ))
            .unwrap_or_default(),
        };
        let api = compose(
            StoreWiring {
                store: StorePorts::of(Arc::clone(&store)),
                health: Arc::clone(&store) as _,
                hints: Some(Arc::clone(&store) as _),
                clock: store_clock(),
            },
            settings,
            args.waiter_limits(),
        );
        // One service for all workers: they share the queues of waiting acquires.
        let service = api.service().clone();
        if let Some(table) = tenant_limits {
            service.tenants().set_limits(table);
        }
        let on_hangup = actix_web::rt::spawn(files.reload_on_hangup(service.clone()));
        let listener = TcpListener::bind(args.bind).map_err(|source| StartupError::Bind {
            addr: args.bind,
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| StartupError::Bind {
            addr: args.bind,
            source,
        })?;
        if let Err(error) = crate::limits::deepen_backlog(&listener) {
            tracing::warn!(%error, "cannot deepen the listen backlog; it stays at 128");
        }
        let max_connections = match args.max_connections {
            Some(max) => usize::try_from(max).unwrap_or(usize::MAX),
            None => match crate::limits::open_files() {
                Ok(files) => crate::limits::connection_budget(files),
                Err(error) => {
                    tracing::warn!(%error, "cannot read the limit of open files; connections are not limited");
                    usize::MAX
                }
            },
        };
        tracing::info!(
            max_connections,
            "connections served at once; more are answered 503 and closed"
        );
        let on_stop = actix_web::rt::spawn(async move {
            // actix stops gracefully on these signals, waiting for requests in flight; waiting
            // acquires would hold that up for their whole wait, so they end now.
            stop_signal().await;
            service.close();
        });
        let server = lock_http_actix::serve(
            &api,
            listener,
            &ServerOptions {
                workers: args.workers.map(|workers| workers as usize),
                shutdown_timeout: args.shutdown_grace(),
                client_request_timeout: Duration::from_secs(args.header_timeout_seconds),
                max_connections,
            },
        )
        .map_err(|source| StartupError::Bind {
            addr: args.bind,
            source,
        })?;
        Ok(Self {
            server,
            addr,
            sweeper,
            live_lock_counter,
            on_stop,
            on_hangup,
        })
    }

    /// The address the server listens on (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until SIGTERM or Ctrl-C, then stops accepting, lets in-flight requests finish
    /// (up to the shutdown grace period) and returns.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let result = self.server.await;
        self.sweeper.abort();
        self.live_lock_counter.abort();
        self.on_stop.abort();
        self.on_hangup.abort();
        result
    }
}

/// SIGTERM or Ctrl-C (SIGINT), the signals actix stops on.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot watch for SIGTERM; waiting acquires keep a shutdown waiting");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
}

/// The clock of the store and of the service: the process's clock (on PostgreSQL the store
/// decides with the database server's clock; the service uses this one only to time its waits).
fn store_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

async fn open_store(
    args: &ServeArgs,
    events: Arc<dyn StoreEvents>,
) -> Result<DieselLockRepository, StartupError> {
    let mut config = StoreConfig::new(args.database_url.clone());
    config.pool_size = args.pool_size;
    config.postgres_batch_connections = args.postgres_batch_connections;
    config.connection_timeout = args.pool_timeout();
    config.record_history = args.history_retention().is_some();
    config.sqlite_synchronous = match args.sqlite_synchronous {
        Synchronous::Full => SqliteSynchronous::Full,
        Synchronous::Normal => SqliteSynchronous::Normal,
    };
    config.sqlite_wal_limit = args.sqlite_wal_limit_mb << 20;
    let deadline = Instant::now() + args.startup_timeout();
    let mut delay = Duration::from_millis(100);
    loop {
        let (attempt_config, events) = (config.clone(), Arc::clone(&events));
        let opened = tokio::task::spawn_blocking(move || {
            DieselLockRepository::open_reporting(&attempt_config, store_clock(), events)
        })
        .await?;
        match opened {
            Ok(repo) => return Ok(repo),
            Err(error) if error.is_transient() && Instant::now() + delay < deadline => {
                tracing::warn!(%error, retry_in_ms = delay.as_millis() as u64, "database unreachable, retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            Err(error) if error.is_transient() => {
                return Err(StartupError::StoreTimeout {
                    seconds: args.startup_timeout_seconds,
                    last: error,
                })
            }
            Err(error) => return Err(error.into()),
        }
    }
}
