//! `lockd fence NAME TOKEN`: the server's fence check (`GET /locks/{name}/fence?token=`, or a
//! semaphore's, or an election's with its term): is TOKEN a live holder's right now? Exit 0
//! when it is, 1 when it is not (stale, or no one holds NAME). The verdict is true when the
//! server reads it; a lease can end right after (docs/fencing.md).

use std::process::ExitCode;

use clap::Args;
use lock_client::Primitive;
use serde_json::Value;

use super::operator::{self, OperatorArgs, PrimitiveArgs, DONE, NOT_FOUND};
use super::table::{cell, time_cell};

#[derive(Debug, Clone, Args)]
pub struct FenceArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    #[command(flatten)]
    pub primitive: PrimitiveArgs,

    /// The lock's (semaphore's, election's) name.
    pub name: String,

    /// The fencing token to check (an election's term): a positive integer, as a grant
    /// returned it.
    #[arg(allow_negative_numbers = true)]
    pub token: i64,
}

pub fn run(args: &FenceArgs) -> ExitCode {
    operator::exit(check(args))
}

fn check(args: &FenceArgs) -> Result<u8, u8> {
    let client = args.common.client();
    let primitive = args.primitive.primitive();
    let token = args.token.to_string();
    let path = format!("{}/fence", primitive.path(&args.name));
    let verdict = client
        .document(&path, &[(primitive.fence_parameter(), &token)])
        .map_err(|error| operator::failed("fence", client.base_url(), &error))?;
    let valid = verdict.get("valid").and_then(Value::as_bool);
    if args.common.json {
        operator::print_json(&verdict);
    } else {
        operator::print(&say(primitive, &args.name, args.token, &verdict));
    }
    match valid {
        Some(true) => Ok(DONE),
        Some(false) => Ok(NOT_FOUND),
        None => {
            eprintln!("lockd fence: the server's answer has no verdict");
            Err(operator::UNAVAILABLE)
        }
    }
}

/// The verdict in a sentence.
fn say(primitive: Primitive, name: &str, token: i64, verdict: &Value) -> String {
    let what = format!("{} {name:?}", primitive.kind());
    let holder = ["lock", "permit", "leader"]
        .iter()
        .find_map(|key| verdict.get(*key))
        .filter(|_| verdict.get("valid") == Some(&Value::Bool(true)));
    let line = match holder {
        Some(holder) => {
            let owner = holder
                .get("candidate")
                .map_or_else(|| cell(holder, "owner"), |_| cell(holder, "candidate"));
            format!(
                "valid: token {token} is {owner}'s live lease of {what} (expires {})",
                time_cell(holder, "expires_at")
            )
        }
        None => match verdict.get("current").and_then(Value::as_i64) {
            Some(current) => {
                format!("stale: token {token} is no live lease of {what}; the newest is {current}")
            }
            None => format!("stale: token {token} is no live lease of {what}; no one holds it"),
        },
    };
    format!("{}\n", operator::one_line(&line))
}
