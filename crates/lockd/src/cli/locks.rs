//! `lockd locks`: the live locks of the caller's tenant, every page of `GET /locks`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};

use super::operator::{self, OperatorArgs, DONE, NOT_FOUND};
use super::table::{cell, remaining_cell, under, Table};

#[derive(Debug, Clone, Args)]
pub struct LocksArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    /// Only locks whose names start with this.
    #[arg(long, default_value = "")]
    pub prefix: String,

    /// At most this many locks [default: all of them, page after page].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
}

pub fn run(args: &LocksArgs) -> ExitCode {
    operator::exit(list(args))
}

fn list(args: &LocksArgs) -> Result<u8, u8> {
    let client = args.common.client();
    let query = [("prefix", args.prefix.as_str())];
    let locks = operator::follow_pages(&client, "/locks", "locks", &query, args.limit)
        .map_err(|error| operator::failed("locks", client.base_url(), &error))?;
    if args.common.json {
        operator::print_json(&json!({ "locks": locks }));
    } else if locks.is_empty() {
        operator::print(&format!("no live locks{}\n", under(&args.prefix)));
    } else {
        operator::print(&table(&locks).render());
    }
    Ok(if locks.is_empty() { NOT_FOUND } else { DONE })
}

fn table(locks: &[Value]) -> Table {
    let mut table = Table::new(&[
        "RESOURCE", "MODE", "OWNER", "TOKEN", "EXPIRES", "WAITING", "SESSION",
    ]);
    for lock in locks {
        table.row(vec![
            cell(lock, "resource"),
            cell(lock, "mode"),
            cell(lock, "owner"),
            cell(lock, "fencing_token"),
            remaining_cell(lock),
            cell(lock, "waiting"),
            cell(lock, "session"),
        ]);
    }
    table
}
