//! `lockd sessions`: the live sessions of the caller's tenant, every page of `GET /sessions`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};

use super::operator::{self, OperatorArgs, DONE, NOT_FOUND};
use super::table::{cell, remaining_cell, time_cell, under, Table};

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
    operator::exit(list(args))
}

fn list(args: &SessionsArgs) -> Result<u8, u8> {
    let client = args.common.client();
    let query = [("prefix", args.prefix.as_str())];
    let sessions = operator::follow_pages(&client, "/sessions", "sessions", &query, args.limit)
        .map_err(|error| operator::failed("sessions", client.base_url(), &error))?;
    if args.common.json {
        operator::print_json(&json!({ "sessions": sessions }));
    } else if sessions.is_empty() {
        operator::print(&format!("no live sessions{}\n", under(&args.prefix)));
    } else {
        operator::print(&table(&sessions).render());
    }
    Ok(if sessions.is_empty() { NOT_FOUND } else { DONE })
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
