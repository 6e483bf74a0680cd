//! The `lockd` binary.

use std::process::ExitCode;

use clap::Parser;
use lockd::cli::{Cli, Command, ServeArgs};
use lockd::{telemetry, Application};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Openapi) => {
            print!("{}", lock_http_actix::openapi_json());
            ExitCode::SUCCESS
        }
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    telemetry::init(&args.log, args.log_format);
    let result = actix_web::rt::System::new().block_on(async move {
        let app = Application::build(&args).await?;
        tracing::info!(addr = %app.local_addr(), database = %args.database_url.redacted(), "lockd started");
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
