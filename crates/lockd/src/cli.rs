//! The command line: `lockd [serve] [OPTIONS]`, `lockd run`, `lockd elect` (`cli/elect.rs`),
//! `lockd openapi` and `lockd hash-key`, every server option with an environment variable
//! fallback; and the operator commands that ask a running server (`lockd locks`, `status`,
//! `release`, `sessions`, `history`, `watch`, `fence`: a module each, their common part in
//! `cli/operator.rs`).

mod elect;
pub mod fence;
pub mod history;
pub mod locks;
pub mod operator;
pub mod release;
pub mod sessions;
pub mod status;
mod table;
pub mod watch;

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use lock_store_diesel::DatabaseUrl;

pub use elect::ElectArgs;

/// lockd: a distributed lock service with leases, owner checks and fencing tokens.
#[derive(Debug, Parser)]
#[command(name = "lockd", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `serve`, which runs when no command is given.
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the REST API (the default).
    Serve(ServeArgs),
    /// Print the OpenAPI document of the REST API to standard output.
    Openapi,
    /// Print the hex SHA-256 digest of an API key (read from standard input), for a line
    /// `<tenant> <digest>` of the --api-keys-file.
    HashKey,
    /// Hold a lock on a lockd server while a command runs: acquire, run CMD with
    /// LOCKD_RESOURCE, LOCKD_OWNER and LOCKD_FENCING_TOKEN in its environment, renew every
    /// ttl/3, release once CMD and every process it left behind have ended, and exit with CMD's
    /// status. If the lease is at risk (no renewal for ttl minus a margin) or lost, CMD and its
    /// processes get SIGTERM then SIGKILL, before the lease can run out, and lockd run exits 70.
    /// Several --resource (and a --semaphore beside them) are held together, all or none, under
    /// one session kept alive every ttl/3 and ended at the end (LOCKD_SESSION,
    /// LOCKD_RESOURCE_1.., LOCKD_FENCING_TOKEN_1.., LOCKD_SEMAPHORE_FENCING_TOKEN).
    ///
    /// Exit status: CMD's status (128+N when a signal N ended it); 75 the lock was not acquired
    /// within --wait; 70 the lease was at risk or lost and CMD was stopped; 69 the server is
    /// unreachable or unavailable; 77 the API key was refused; 64 the server refused the
    /// resource, owner, ttl or wait; 71 no random bytes for the default owner; 126 CMD cannot
    /// be run; 127 CMD not found.
    Run(RunArgs),
    /// Lead an election while a command runs: campaign (until elected, or --wait), run CMD only
    /// while leading, with LOCKD_ELECTION, LOCKD_CANDIDATE and LOCKD_TERM in its environment,
    /// renew every ttl/3, resign once CMD and its processes have ended, and exit with CMD's
    /// status. If leadership is at risk (no renewal for ttl minus a margin) or lost, CMD and its
    /// processes get SIGTERM then SIGKILL before the lease can run out, and lockd elect exits
    /// 70. Exit statuses as for lockd run (75: not elected within --wait).
    Elect(ElectArgs),
    /// List the live locks (of the API key's tenant): all of them, page after page, or the
    /// first --limit.
    ///
    /// Exit status: 0 some listed; 1 none; 69 the server is unreachable or unavailable; 77 the
    /// API key was refused; 64 bad input (a flag, or a prefix the server refuses).
    Locks(locks::LocksArgs),
    /// Show how a lock is held (its holder, or every shared holder), a semaphore's holders
    /// (--semaphore) or an election's leader (--election).
    ///
    /// Exit status: 0 held; 1 no live lock, grant or leader; 69 the server is unreachable or
    /// unavailable; 77 the API key was refused; 64 bad input (a flag, or a name the server
    /// refuses).
    Status(status::StatusArgs),
    /// Force-release a lock (semaphore, election): end every live lease of NAME whoever holds
    /// it, keeping --reason in the history (an admin key's right).
    ///
    /// Without --force it refuses (64): a plain release needs the owner, and its holder makes
    /// it. Exit status: 0 released (the leases ended are listed); 1 nothing was held; 69 the
    /// server is unreachable or unavailable; 77 the API key was refused or is no admin key; 64
    /// bad input (no --force, or a reason or name the server refuses).
    Release(release::ReleaseArgs),
    /// List the live sessions: all of them, page after page, or the first --limit.
    ///
    /// Exit status: 0 some listed; 1 none; 69 the server is unreachable or unavailable; 77 the
    /// API key was refused; 64 bad input.
    Sessions(sessions::SessionsArgs),
    /// Show the history of a lock (semaphore, election), newest first.
    ///
    /// Exit status: 0 some records; 1 none (from --since on); 69 the server is unreachable or
    /// unavailable; 77 the API key was refused; 64 bad input (a bad --since, a name the server
    /// refuses).
    History(history::HistoryArgs),
    /// Follow the server's events (grants, renewals, releases, expiries, force-releases), one
    /// line each as it happens.
    ///
    /// Exit status: 0 ended by SIGINT or SIGTERM; 69 the server is unreachable, or went away
    /// or ended the stream; 77 the API key was refused; 64 bad input.
    Watch(watch::WatchArgs),
    /// Ask the server whether TOKEN is the fencing token of a live lease of NAME right now
    /// (an election's term with --election), as a resource that cannot store tokens asks
    /// before a write.
    ///
    /// Exit status: 0 valid (a live holder's token); 1 stale (no live lease has it, or no one
    /// holds NAME); 69 the server is unreachable or unavailable; 77 the API key was refused;
    /// 64 bad input (a token that is not a positive integer, a name the server refuses). The
    /// verdict is true when the server reads it; the lease can end right after
    /// (docs/fencing.md).
    Fence(fence::FenceArgs),
    /// Internal to `lockd run`: the keeper process between it and the command.
    #[command(hide = true)]
    RunKeeper(KeeperArgs),
}

/// Options of the hidden `lockd run-keeper`, which only `lockd run` starts.
#[derive(Debug, Clone, Args)]
pub struct KeeperArgs {
    /// Read end of the pipe on which `lockd run` sends orders.
    #[arg(long)]
    pub control_fd: std::os::fd::RawFd,
    /// Write end of the pipe on which the keeper reports.
    #[arg(long)]
    pub report_fd: std::os::fd::RawFd,
    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object a line.
    Json,
}

/// `--sqlite-synchronous` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Synchronous {
    Full,
    Normal,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, env = "LOCKD_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,

    /// Database: sqlite://PATH (created if missing; sqlite:///abs/path for an absolute path) or
    /// postgres://USER@HOST:PORT/DB.
    /// (Neither `--help` nor an error repeats the value: it may hold a password.)
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://lockd.db", hide_env_values = true,
          value_parser = DatabaseUrlParser)]
    pub database_url: DatabaseUrl,

    /// Largest ttl_seconds accepted on acquire and renew.
    #[arg(long, env = "LOCKD_MAX_TTL_SECONDS", default_value_t = lock_domain::DEFAULT_MAX_TTL_SECONDS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_ttl_seconds: u32,

    /// Largest wait_seconds accepted on acquire (0: acquires never wait).
    #[arg(long, env = "LOCKD_MAX_WAIT_SECONDS", default_value_t = lock_http_actix::DEFAULT_MAX_WAIT_SECONDS,
          value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub max_wait_seconds: u32,

    /// Lock-delay of an exclusive acquire or a campaign that asks for none: how long a lease
    /// that ran out (was not released) keeps its place from other owners, 0 to 60 seconds.
    #[arg(long, env = "LOCKD_DEFAULT_LOCK_DELAY_SECONDS", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=60))]
    pub default_lock_delay_seconds: u32,

    /// Most acquires waiting at once in this process; one more is answered 429.
    #[arg(long, env = "LOCKD_MAX_WAITERS", default_value_t = lock_service::DEFAULT_MAX_WAITERS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_waiters: u64,

    /// Most acquires of one tenant waiting at once in this process [default: --max-waiters].
    #[arg(long, env = "LOCKD_MAX_WAITERS_PER_TENANT", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_waiters_per_tenant: Option<u64>,

    /// Database connections in the pool [default: 4 for SQLite, 16 for PostgreSQL].
    #[arg(long, env = "LOCKD_POOL_SIZE", value_parser = clap::value_parser!(u32).range(2..=1024))]
    pub pool_size: Option<u32>,

    /// PostgreSQL: pooled connections that run the acquires, releases and renews of concurrent
    /// requests batched, one statement per batch; 0 runs each as its own statement.
    #[arg(long, env = "LOCKD_POSTGRES_BATCH_CONNECTIONS", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(0..=64))]
    pub postgres_batch_connections: u32,

    /// Seconds a request waits for a database connection before answering 503.
    #[arg(long, env = "LOCKD_POOL_TIMEOUT_SECONDS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub pool_timeout_seconds: u64,

    /// Seconds to keep retrying an unreachable database at start-up before exiting non-zero.
    #[arg(long, env = "LOCKD_STARTUP_TIMEOUT_SECONDS", default_value_t = 30)]
    pub startup_timeout_seconds: u64,

    /// Seconds that in-flight requests get to finish after SIGTERM or Ctrl-C.
    #[arg(long, env = "LOCKD_SHUTDOWN_GRACE_SECONDS", default_value_t = 30)]
    pub shutdown_grace_seconds: u64,

    /// File of API keys, one `<tenant> <hex sha256 of the key>` a line; with it every /locks
    /// request needs `Authorization: Bearer <key>` and sees only its tenant's locks.
    /// Reloaded on SIGHUP.
    #[arg(long, env = "LOCKD_API_KEYS_FILE")]
    pub api_keys_file: Option<std::path::PathBuf>,

    /// File of limits per tenant, one `<tenant> key=value ...` a line (max_live_leases,
    /// max_waiters, max_observers, max_ttl_seconds); going over one answers 429. Reloaded on
    /// SIGHUP.
    #[arg(long, env = "LOCKD_TENANT_LIMITS_FILE")]
    pub tenant_limits_file: Option<std::path::PathBuf>,

    /// Seconds a client has to send its request line and headers (slow clients are cut off).
    #[arg(long, env = "LOCKD_HEADER_TIMEOUT_SECONDS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub header_timeout_seconds: u64,

    /// Seconds a client has to send its whole request body once its headers are in (else 408).
    #[arg(long, env = "LOCKD_BODY_TIMEOUT_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub body_timeout_seconds: u64,

    /// SQLite durability: `full` (every acknowledged grant survives a power loss) or `normal`
    /// (faster; a power loss may lose the last grants, so a fencing token may be issued twice).
    #[arg(long, env = "LOCKD_SQLITE_SYNCHRONOUS", value_enum, default_value_t = Synchronous::Full)]
    pub sqlite_synchronous: Synchronous,

    /// SQLite: megabytes the WAL file keeps. A reader holding a snapshot open (a backup, the
    /// `sqlite3` shell) makes it grow past this; once it has gone, lockd empties the file.
    #[arg(long, env = "LOCKD_SQLITE_WAL_LIMIT_MB", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub sqlite_wal_limit_mb: u64,

    /// Seconds between sweeps that delete the rows of locks expired for over a minute.
    #[arg(long, env = "LOCKD_SWEEP_INTERVAL_SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub sweep_interval_seconds: u64,

    /// Hours the history of every lease (`GET /history`, `/events`) is kept; the sweeper prunes
    /// older records. 0 records no history at all (this process's writes add none).
    #[arg(long, env = "LOCKD_HISTORY_RETENTION_HOURS", default_value_t = 168,
          value_parser = clap::value_parser!(u64).range(0..=87_600))]
    pub history_retention_hours: u64,

    /// Connections served at once; a connection opened beyond is answered 503
    /// `/problems/too-many-connections` (but `/healthz` and `/readyz`) and closed [default: the
    /// soft limit of open files less an eighth, at least 64].
    #[arg(long, env = "LOCKD_MAX_CONNECTIONS", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,

    /// HTTP worker threads [default: the number of CPUs].
    #[arg(long, env = "LOCKD_WORKERS", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: Option<u32>,

    /// Log filter, as in RUST_LOG (e.g. `info`, `lockd=debug`).
    #[arg(long, env = "LOCKD_LOG", default_value = "info")]
    pub log: String,

    /// Log line format.
    #[arg(long, env = "LOCKD_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Which lockd server a client command talks to, and with which API key: written once for
/// `lockd run`, `lockd elect` and the operator commands, environment fallbacks included.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The lockd server.
    #[arg(long, env = "LOCKD_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,

    /// API key of the server (`Authorization: Bearer`), when it has API keys.
    #[arg(long, env = "LOCKD_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

impl ServerArgs {
    /// A client of the server with the key (an empty key is none), whose requests may take
    /// `request_timeout`.
    pub fn client(&self, request_timeout: Duration) -> lock_client::LockClient {
        let mut config = lock_client::ClientConfig::new(self.server.clone());
        config.api_key = self.api_key.clone().filter(|key| !key.is_empty());
        config.request_timeout = request_timeout;
        lock_client::LockClient::new(&config)
    }
}

/// Options of `lockd run`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("held").required(true).multiple(true).args(["resource", "semaphore"])))]
pub struct RunArgs {
    #[command(flatten)]
    pub connection: ServerArgs,

    /// The resource to lock. Give it several times to hold several locks together, all or
    /// none, under one session.
    #[arg(long, value_name = "NAME")]
    pub resource: Vec<String>,

    /// Hold permits of this semaphore (with --limit and --permits): instead of a lock, or with
    /// --resource under one session.
    #[arg(long, requires = "limit", value_name = "NAME")]
    pub semaphore: Option<String>,

    /// The semaphore's limit, 1 to 10000 (every holder of one semaphore uses the same).
    #[arg(long, requires = "semaphore", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: Option<u32>,

    /// How many of the semaphore's permits to hold, 1 to --limit.
    #[arg(long, requires = "semaphore", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub permits: u32,

    /// Who holds the lock: an identity, never shared by two holders [default: <host
    /// name>:<pid of lockd run>:<16 random hex digits>, new for every invocation].
    #[arg(long)]
    pub owner: Option<String>,

    /// Lease length in seconds; the lock is renewed every ttl/3.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub ttl: u32,

    /// Seconds to wait for a lock held by another owner before exiting 75 (0: do not wait).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub wait: u64,

    /// Seconds between SIGTERM and SIGKILL when the lease is at risk; at most ttl/4, so that
    /// both fit inside the lease.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub kill_grace: u64,

    /// Seconds a request to the server may take (acquire, release; a renewal gets less).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub request_timeout: u64,

    /// Hold under one session (kept alive every ttl/3, ended at the end) even a single lock or
    /// grant of permits; more than one thing is always held so.
    #[arg(long)]
    pub session: bool,

    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,

    /// Set by `lockd elect`: the election to lead instead of a lock.
    #[arg(skip)]
    pub election: Option<crate::run::target::Target>,
}

/// Parses `--database-url` (or `DATABASE_URL`). clap's own errors repeat the value they refuse;
/// this one says only why, since the value may hold a password.
#[derive(Debug, Clone, Copy)]
struct DatabaseUrlParser;

impl clap::builder::TypedValueParser for DatabaseUrlParser {
    type Value = DatabaseUrl;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<DatabaseUrl, clap::Error> {
        let refused = |kind, reason: &dyn std::fmt::Display| {
            clap::Error::raw(
                kind,
                format!("invalid value for '--database-url': {reason}\n"),
            )
            .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refused(clap::error::ErrorKind::InvalidUtf8, &"not valid UTF-8"))?;
        text.parse()
            .map_err(|error| refused(clap::error::ErrorKind::ValueValidation, &error))
    }
}

impl RunArgs {
    /// What to hold, in the order it is acquired: the election (`lockd elect`), or the lock on
    /// each `--resource` in the order given, then the semaphore's permits when `--semaphore` is
    /// given (clap then requires `--limit`; it requires a resource or a semaphore).
    pub fn targets(&self) -> Vec<crate::run::target::Target> {
        use crate::run::target::Target;
        if let Some(election) = &self.election {
            return vec![election.clone()];
        }
        let locks = self.resource.iter().map(|resource| Target::Lock {
            resource: resource.clone(),
        });
        let semaphore = match (&self.semaphore, self.limit) {
            (Some(name), Some(limit)) => Some(Target::Semaphore {
                name: name.clone(),
                limit,
                permits: self.permits,
            }),
            _ => None,
        };
        locks.chain(semaphore).collect()
    }

    /// Whether everything is held under one session: asked for, or more than one thing held.
    pub fn uses_session(&self) -> bool {
        self.session || self.targets().len() > 1
    }
}

impl ServeArgs {
    /// How long history is kept, or `None` when this process records none.
    pub fn history_retention(&self) -> Option<Duration> {
        (self.history_retention_hours > 0)
            .then(|| Duration::from_secs(self.history_retention_hours * 3_600))
    }

    pub fn pool_timeout(&self) -> Duration {
        Duration::from_secs(self.pool_timeout_seconds)
    }

    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.startup_timeout_seconds)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_seconds)
    }

    /// The limits of waiting acquires: per tenant as in all unless set.
    pub fn waiter_limits(&self) -> lock_service::WaiterLimits {
        lock_service::WaiterLimits {
            total: self.max_waiters,
            per_tenant: self.max_waiters_per_tenant.unwrap_or(self.max_waiters),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("lockd").chain(args.iter().copied()))
    }

    fn serve_args(cli: Cli) -> ServeArgs {
        match cli.command {
            Some(Command::Serve(args)) => args,
            None => cli.serve,
            Some(other) => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn serve_is_optional_and_flags_follow_it() {
        let bare =
            serve_args(parse(&["--bind", "127.0.0.1:0", "--max-ttl-seconds", "60"]).unwrap());
        let sub = serve_args(
            parse(&["serve", "--bind", "127.0.0.1:0", "--max-ttl-seconds", "60"]).unwrap(),
        );
        assert_eq!(bare.bind, sub.bind);
        assert_eq!(bare.max_ttl_seconds, 60);
        assert_eq!(sub.max_ttl_seconds, 60);
    }

    #[test]
    fn defaults_match_the_readme() {
        let args = serve_args(parse(&[]).unwrap());
        assert_eq!(args.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(args.max_ttl_seconds, 86_400);
        assert_eq!(args.pool_timeout_seconds, 2);
        assert_eq!(args.shutdown_grace_seconds, 30);
        assert_eq!(args.pool_size, None);
        assert_eq!(args.max_wait_seconds, 60);
        assert_eq!(args.default_lock_delay_seconds, 0);
        assert!(parse(&["--default-lock-delay-seconds", "61"]).is_err());
        assert_eq!(args.postgres_batch_connections, 2);
        assert_eq!(args.waiter_limits().total, 10_000);
        assert_eq!(args.waiter_limits().per_tenant, 10_000);
        let capped = serve_args(parse(&["--max-waiters", "50"]).unwrap());
        assert_eq!(capped.waiter_limits().per_tenant, 50);
        let split =
            serve_args(parse(&["--max-waiters", "50", "--max-waiters-per-tenant", "5"]).unwrap());
        assert_eq!(split.waiter_limits().total, 50);
        assert_eq!(split.waiter_limits().per_tenant, 5);
    }

    #[test]
    fn sqlite_durability_is_full_unless_asked_otherwise() {
        assert_eq!(
            serve_args(parse(&[]).unwrap()).sqlite_synchronous,
            Synchronous::Full
        );
        let normal = serve_args(parse(&["--sqlite-synchronous", "normal"]).unwrap());
        assert_eq!(normal.sqlite_synchronous, Synchronous::Normal);
        assert!(parse(&["--sqlite-synchronous", "off"]).is_err());
    }

    #[test]
    fn run_takes_the_command_after_the_double_dash() {
        let cli = parse(&[
            "run",
            "--server",
            "http://h:1",
            "--resource",
            "r",
            "--ttl",
            "9",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .unwrap();
        let Some(Command::Run(args)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.connection.server, "http://h:1");
        assert_eq!(args.ttl, 9);
        assert_eq!(args.wait, 0);
        assert_eq!(args.owner, None);
        assert_eq!(args.command, ["sh", "-c", "exit 3"]);
        assert!(parse(&["run", "--resource", "r"]).is_err(), "no command");
        assert!(parse(&["run", "--resource", "r", "--ttl", "0", "--", "true"]).is_err());
        assert!(parse(&["run", "--", "true"]).is_err(), "nothing to hold");
    }

    fn run_args(args: &[&str]) -> RunArgs {
        let mut argv = vec!["run"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["--", "true"]);
        match parse(&argv).expect("parses").command {
            Some(Command::Run(args)) => args,
            other => panic!("not run: {other:?}"),
        }
    }

    #[test]
    fn one_thing_is_held_on_its_own_lease_and_several_under_one_session() {
        use crate::run::target::Target;
        let lock = |name: &str| Target::Lock {
            resource: name.into(),
        };
        let one = run_args(&["--resource", "a"]);
        assert_eq!(one.targets(), [lock("a")]);
        assert!(!one.uses_session());
        let permits = run_args(&["--semaphore", "s", "--limit", "3"]);
        assert!(!permits.uses_session());
        assert!(run_args(&["--resource", "a", "--session"]).uses_session());

        let several = run_args(&[
            "--semaphore",
            "s",
            "--limit",
            "3",
            "--permits",
            "2",
            "--resource",
            "b",
            "--resource",
            "a",
        ]);
        // The locks in the order given, then the permits.
        let semaphore = Target::Semaphore {
            name: "s".into(),
            limit: 3,
            permits: 2,
        };
        assert_eq!(several.targets(), [lock("b"), lock("a"), semaphore]);
        assert!(several.uses_session());
        assert!(run_args(&["--resource", "a", "--resource", "b"]).uses_session());
        assert!(
            parse(&["run", "--semaphore", "s", "--", "true"]).is_err(),
            "no --limit"
        );
        assert!(parse(&["run", "--limit", "3", "--resource", "a", "--", "true"]).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["--database-url", "mysql://x/y"]).is_err());
        for url in [
            "mysql://u:s3cr3t@h/db",
            "postgres://u:s3cr3t/x@h/db",
            "postgres://u@h/db?password=s3cr3t&x",
        ] {
            let error = parse(&["--database-url", url]).expect_err(url).to_string();
            assert!(error.contains("--database-url"), "{error}");
            assert!(!error.contains("s3cr3t"), "{error}");
        }
        assert!(parse(&["--max-ttl-seconds", "0"]).is_err());
        assert!(parse(&["--bind", "localhost"]).is_err());
        assert!(parse(&["--pool-size", "1"]).is_err());
        assert!(parse(&["--max-wait-seconds", "3601"]).is_err());
        assert!(parse(&["--max-wait-seconds", "-1"]).is_err());
        assert!(parse(&["--postgres-batch-connections", "65"]).is_err());
        let unbatched = serve_args(parse(&["--postgres-batch-connections", "0"]).unwrap());
        assert_eq!(unbatched.postgres_batch_connections, 0);
    }
}
