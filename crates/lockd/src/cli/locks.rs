//! `lockd locks`: the live locks of the caller's tenant, every page of `GET /locks`.

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::operator::{self, OperatorArgs};
use super::table::{cell, remaining_cell, Table};

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
    operator::exit(operator::list(
        &args.common,
        "/locks",
        "locks",
        &args.prefix,
        args.limit,
        table,
    ))
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
