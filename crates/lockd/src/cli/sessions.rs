//! `lockd sessions`: the live sessions of the caller's tenant, every page of `GET /sessions`.

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::operator::{self, OperatorArgs};
use super::table::{cell, remaining_cell, time_cell, Table};

#[derive(Debug, Clone, Args)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    /// Only sessions whose ids start with this.
    #[arg(long, default_value = "")]
    pub prefix: String,

    /// At most this many sessions [default: all of them, page after page].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
}

pub fn run(args: &SessionsArgs) -> ExitCode {
    operator::exit(operator::list(
        &args.common,
        "/sessions",
        "sessions",
        &args.prefix,
        args.limit,
        table,
    ))
}

fn table(sessions: &[Value]) -> Table {
    let mut table = Table::new(&["ID", "OWNER", "HOLDS", "TTL", "EXPIRES", "CREATED"]);
    for session in sessions {
        table.row(vec![
            cell(session, "id"),
            cell(session, "owner"),
            cell(session, "holds"),
            format!("{}s", cell(session, "ttl_seconds")),
            remaining_cell(session),
            time_cell(session, "created_at"),
        ]);
    }
    table
}
