//! `lockd release NAME --force --reason TEXT`: an admin's force-release of every live lease of
//! a lock (semaphore, election), kept in the history with its reason. A plain release is its
//! holder's, who knows the owner; this command makes none.

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::operator::{self, OperatorArgs, PrimitiveArgs, DONE, INVALID_INPUT};
use super::table::{cell, Table};

#[derive(Debug, Clone, Args)]
pub struct ReleaseArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    #[command(flatten)]
    pub primitive: PrimitiveArgs,

    /// End every live lease of NAME whoever holds it (an admin key's right when the server has
    /// API keys). Required: without it the command refuses (64).
    #[arg(long, requires = "reason")]
    pub force: bool,

    /// Why, kept in the history with each lease ended: 1 to 256 characters, no control
    /// characters.
    #[arg(long, requires = "force")]
    pub reason: Option<String>,

    /// The lock's (semaphore's, election's) name.
    pub name: String,
}

pub fn run(args: &ReleaseArgs) -> ExitCode {
    operator::exit(release(args))
}

fn release(args: &ReleaseArgs) -> Result<u8, u8> {
    let (true, Some(reason)) = (args.force, &args.reason) else {
        eprintln!(
            "lockd release: only a force-release is made here (--force --reason TEXT): a plain \
             release needs the owner, and its holder makes it"
        );
        return Err(INVALID_INPUT);
    };
    let client = args.common.client();
    let primitive = args.primitive.primitive();
    let ended = client
        .force_release(primitive, &args.name, reason)
        .map_err(|error| operator::failed("release", client.base_url(), &error))?;
    if args.common.json {
        operator::print_json(&ended);
    } else {
        operator::print(&table(&ended).render());
    }
    Ok(DONE)
}

/// The leases ended.
fn table(ended: &Value) -> Table {
    let mut table = Table::new(&["FORCE-RELEASED", "TOKEN", "SESSION"]);
    let leases = ended.get("force_released").and_then(Value::as_array);
    for lease in leases.into_iter().flatten() {
        table.row(vec![
            cell(lease, "owner"),
            cell(lease, "fencing_token"),
            cell(lease, "session"),
        ]);
    }
    table
}
