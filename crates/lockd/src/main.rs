//! The `lockd` binary.

use std::process::ExitCode;

use clap::Parser;
use lockd::cli::{self, Cli, Command, ServeArgs};
use lockd::{telemetry, Application};

/// jemalloc instead of glibc's malloc. A write is made on a request's worker thread and
/// answered from the SQLite writer (or a PostgreSQL batch executor), so much of what one thread
/// allocates another frees; glibc then locks the owning arena on every such free, and in a W1
/// profile three quarters of lockd's futex calls were those locks. jemalloc's thread caches take
/// remote frees without a lock: W1 on SQLite went from 32,600 to 40,300 cycles/s, and RSS with
/// 8,000 idle waiters from 281 to 197 MB (docs/benchmarks.md). mimalloc, tried before, kept the
/// heaps of exited threads (RSS 164-478 MB with 2,000 waiters).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return refused(&error),
    };
    match cli.command {
        Some(Command::Openapi) => {
            print!("{}", lock_http_actix::openapi_json());
            ExitCode::SUCCESS
        }
        Some(Command::HashKey) => hash_key(),
        Some(Command::Run(args)) => lockd::run::run(args),
        Some(Command::Elect(args)) => lockd::run::run(args.into_run()),
        Some(Command::RunKeeper(args)) => lockd::run::keep(args),
        Some(Command::Locks(args)) => cli::locks::run(&args),
        Some(Command::Status(args)) => cli::status::run(&args),
        Some(Command::Release(args)) => cli::release::run(&args),
        Some(Command::Sessions(args)) => cli::sessions::run(&args),
        Some(Command::History(args)) => cli::history::run(&args),
        Some(Command::Watch(args)) => cli::watch::run(&args),
        Some(Command::Fence(args)) => cli::fence::run(&args),
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    }
}

/// A command line clap refused (or `--help`, `--version`): told as clap tells it, with clap's
/// status, but 64 (bad input) for an operator command, whose statuses are documented.
fn refused(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let informational = matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational || !cli::operator::is_operator_command(&args) {
        error.exit();
    }
    let _ = error.print();
    ExitCode::from(cli::operator::INVALID_INPUT)
}

/// Reads a key from standard input and prints its digest; the key itself is never echoed.
fn hash_key() -> ExitCode {
    let mut key = String::new();
    if std::io::stdin().read_line(&mut key).is_err() || key.trim().is_empty() {
        eprintln!("lockd hash-key: write the key on standard input, e.g. `echo \"$KEY\" | lockd hash-key`");
        return ExitCode::FAILURE;
    }
    println!("{}", lock_http_actix::hash_key(&key));
    ExitCode::SUCCESS
}

fn serve(args: ServeArgs) -> ExitCode {
    // Dropped when `serve` returns: the lines still queued are written out first.
    let log_writer = telemetry::init(&args.log, args.log_format);
    // The start-up lines are written out before `listening on ...`, which follows them.
    let start_up_logged = || {
        if let Some(writer) = &log_writer {
            writer.drain(std::time::Duration::from_secs(1));
        }
    };
    let result = actix_web::rt::System::new().block_on(async move {
        match lockd::limits::raise_open_files() {
            Ok(files) if files.now > files.before => tracing::info!(
                soft = files.now,
                was = files.before,
                hard = files.hard,
                "raised the limit of open files"
            ),
            Ok(files) => tracing::info!(soft = files.now, hard = files.hard, "open files limit"),
            Err(error) => tracing::warn!(%error, "cannot raise the limit of open files"),
        }
        let app = Application::build(&args).await?;
        tracing::info!(addr = %app.local_addr(), database = %args.database_url.redacted(), "lockd started");
        start_up_logged();
        eprintln!("listening on http://{}", app.local_addr());
        app.run_until_stopped().await.map_err(lockd::StartupError::Serve)
    });
    match result {
        Ok(()) => {
            tracing::info!("lockd stopped");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lockd: {error}");
            ExitCode::FAILURE
        }
    }
}
