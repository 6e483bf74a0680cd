//! `lockd status NAME`: how a lock is held (`GET /locks/{name}`), a semaphore's holders
//! (`--semaphore`) or an election's leader (`--election`).

use std::process::ExitCode;

use clap::Args;
use lock_client::Primitive;
use serde_json::Value;

use super::operator::{self, OperatorArgs, PrimitiveArgs, DONE};
use super::table::{cell, time_cell, Table};

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    #[command(flatten)]
    pub primitive: PrimitiveArgs,

    /// The lock's (semaphore's, election's) name.
    pub name: String,
}

pub fn run(args: &StatusArgs) -> ExitCode {
    operator::exit(status(args))
}

fn status(args: &StatusArgs) -> Result<u8, u8> {
    let client = args.common.client();
    let primitive = args.primitive.primitive();
    let document = client
        .document(&primitive.path(&args.name), &[])
        .map_err(|error| operator::failed("status", client.base_url(), &error))?;
    if args.common.json {
        operator::print_json(&document);
    } else {
        operator::print(&match primitive {
            Primitive::Lock => lock(&document),
            Primitive::Semaphore => semaphore(&document),
            Primitive::Election => leader(&document),
        });
    }
    Ok(DONE)
}

/// A lock's holders: its one exclusive holder, or every shared holder.
fn lock(document: &Value) -> String {
    let holders = match document.get("holders").and_then(Value::as_array) {
        Some(holders) => holders.clone(),
        None => vec![document.clone()],
    };
    let mut table = Table::new(&[
        "RESOURCE", "MODE", "OWNER", "TOKEN", "ACQUIRED", "EXPIRES", "SESSION", "VALUE",
    ]);
    for holder in &holders {
        table.row(vec![
            cell(holder, "resource"),
            cell(holder, "mode"),
            cell(holder, "owner"),
            cell(holder, "fencing_token"),
            time_cell(holder, "acquired_at"),
            time_cell(holder, "expires_at"),
            cell(holder, "session"),
            cell(holder, "value"),
        ]);
    }
    table.render()
}

/// A semaphore's use, then its holders.
fn semaphore(document: &Value) -> String {
    let mut text = format!(
        "semaphore {}: {} of {} permits in use, {} available, {} waiting\n",
        cell(document, "name"),
        cell(document, "in_use"),
        cell(document, "limit"),
        cell(document, "available"),
        cell(document, "waiting"),
    );
    let mut table = Table::new(&[
        "OWNER", "PERMITS", "TOKEN", "ACQUIRED", "EXPIRES", "SESSION", "VALUE",
    ]);
    let holders = document.get("holders").and_then(Value::as_array);
    for holder in holders.into_iter().flatten() {
        table.row(vec![
            cell(holder, "owner"),
            cell(holder, "permits"),
            cell(holder, "fencing_token"),
            time_cell(holder, "acquired_at"),
            time_cell(holder, "expires_at"),
            cell(holder, "session"),
            cell(holder, "value"),
        ]);
    }
    text.push_str(&table.render());
    text
}

/// An election's leader.
fn leader(document: &Value) -> String {
    let mut table = Table::new(&[
        "ELECTION", "LEADER", "TERM", "ELECTED", "EXPIRES", "SESSION", "VALUE",
    ]);
    table.row(vec![
        cell(document, "election"),
        cell(document, "candidate"),
        cell(document, "term"),
        time_cell(document, "elected_at"),
        time_cell(document, "expires_at"),
        cell(document, "session"),
        cell(document, "value"),
    ]);
    table.render()
}
